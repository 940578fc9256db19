"""A database, pool and served app of a test module's own, in place of the run's shared ones.

For modules whose data the rest of the run must not meet (games no service can fold) or that
count what other tests leave behind (waiting games per address). A module takes them by
assigning them to the names they override, which pytest registers for that module only::

    database_url = own_database.database_url
    pool = own_database.pool
    live_server = own_database.live_server

(Importing them by name instead makes ruff flag every test that takes them: F811.)
"""

from __future__ import annotations

from collections.abc import Iterator

import dbsupport
import pytest
from api_client import LiveServer, serving
from psycopg_pool import ConnectionPool

from service.store.db import make_pool


@pytest.fixture(scope="module")
def database_url(database_url: str) -> Iterator[str]:
    """A fresh migrated database next to the run's (``dbsupport.own_database``)."""
    with dbsupport.own_database(database_url) as url:
        yield url


@pytest.fixture(scope="module")
def pool(database_url: str) -> Iterator[ConnectionPool]:
    with make_pool(database_url, max_size=12) as opened:
        yield opened


@pytest.fixture(scope="module")
def live_server(pool: ConnectionPool) -> Iterator[LiveServer]:
    with serving(pool) as server:
        yield server
