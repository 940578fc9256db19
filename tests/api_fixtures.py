"""Fixtures for the API tests: the real app over real HTTP on the test database.

Load them in a test module with ``pytest_plugins = ["api_fixtures"]`` (pytest loads only
``conftest.py`` by itself; ``tests/`` is on ``sys.path``).

``live_server`` runs ``create_app(pool=...)`` under werkzeug's threaded server on 127.0.0.1 and a
free port, in a background thread, once per test session (per xdist worker), and shuts it down
at the end. ``api`` is a spec-checking client without a token (a spectator).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from api_client import ApiClient, LiveServer, serve
from psycopg_pool import ConnectionPool

from service.http.app import create_app


@pytest.fixture(scope="session")
def live_server(pool: ConnectionPool) -> Iterator[LiveServer]:
    app = create_app(pool=pool)
    with serve(app) as url:
        yield LiveServer(url, app)


@pytest.fixture
def api(live_server: LiveServer) -> Iterator[ApiClient]:
    with ApiClient(live_server.url) as client:
        yield client
