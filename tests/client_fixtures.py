"""Fixtures for the client package's tests (clients/python): a real ``cardroom serve`` (gunicorn
and its gevent worker, as operators run it) on the test database, once per test module.

Load them with ``pytest_plugins = ["client_fixtures"]``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from client_support import STREAMS_PER_ADDRESS
from serve_support import Served, cardroom_serve


@pytest.fixture(scope="module")
def served(database_url: str) -> Iterator[Served]:
    env = {
        "CARDROOM_RATE_LIMITS": "off",
        "CARDROOM_STREAMS_PER_ADDRESS": str(STREAMS_PER_ADDRESS),
    }
    with cardroom_serve(database_url, env=env) as server:
        yield server
