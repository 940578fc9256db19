"""Fixtures for the API tests: the real app over real HTTP on the test database.

Load them in a test module with ``pytest_plugins = ["api_fixtures"]`` (pytest loads only
``conftest.py`` by itself; ``tests/`` is on ``sys.path``).

``live_server`` runs ``create_app(pool=...)`` under werkzeug's threaded server on 127.0.0.1 and a
free port, in a background thread, once per test session (per xdist worker), and shuts it down
at the end. ``api`` is a spec-checking client without a token (a spectator).

A module whose games must stay out of the shared database (see ``dbsupport.own_database``)
overrides ``database_url``, ``pool`` and ``live_server`` with module-scoped fixtures of its own,
``live_server`` built with ``api_client.serving``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from api_client import ApiClient, LiveServer, serving
from psycopg_pool import ConnectionPool


@pytest.fixture(scope="session")
def live_server(pool: ConnectionPool) -> Iterator[LiveServer]:
    with serving(pool) as server:
        yield server


@pytest.fixture
def api(live_server: LiveServer) -> Iterator[ApiClient]:
    with ApiClient(live_server.url) as client:
        yield client
