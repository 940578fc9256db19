"""Database fixtures: one fresh, migrated PostgreSQL database per test run.

The xdist controller (or the lone process without xdist) finds a server (see dbsupport),
creates ``cardroom_test_<random>`` on it and migrates it once at session start; it hands the
URL to the workers through ``workerinput`` and drops the database at session end. Tests share
the database, so they must not assume it is empty: use fresh UUIDs and unique game names.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import dbsupport
import psycopg
import pytest
from logging_guard import LoggingGuard
from psycopg_pool import ConnectionPool

from service import keys as service_keys
from service.store.db import drop_database, make_pool
from service.store.events import EventStore

# No turn-clock sweeper thread in the apps tests build: a test that needs the clock calls
# ``Sweeper.sweep(now)`` itself, with the time it wants (service/live/clock.py).
os.environ.setdefault("CARDROOM_CLOCK_INTERVAL", "0")
# Nor rate limits: the suite creates far more games than a client may (test_abuse.py turns them
# on in its own apps).
os.environ.setdefault("CARDROOM_RATE_LIMITS", "off")

# The service's signing and seed keys (service/keys.py): a fresh set per test process, outside the
# repository. Servers the tests start in subprocesses inherit it.
os.environ.setdefault(
    "CARDROOM_KEYS_FILE", os.path.join(tempfile.mkdtemp(prefix="cardroom-keys-"), "keys.json")
)
if not os.path.exists(os.environ["CARDROOM_KEYS_FILE"]):  # the service never makes keys itself
    with contextlib.suppress(service_keys.KeysError):  # (another xdist worker made them first)
        service_keys.init()
# Without Chromium the browser tests (tests/test_web_*.py) are skipped with this note, so that
# `make test` runs everything else; under CI (CI=true) they run, and fail, instead.
NO_CHROMIUM = (
    "the browser tests need Chromium: apt-get install chromium (`make chromium` does, as root "
    "on Debian), or set CARDROOM_CHROMIUM to a Chromium executable"
)
_web_skipped = pytest.StashKey[int]()

_WORKER_KEY = "cardroom_database_url"  # in xdist's workerinput: a URL, or "!" + the error


@dataclass
class _RunDatabase:
    server: dbsupport.TestServer | None
    name: str
    url: str | None
    error: str | None = None


_run_key = pytest.StashKey[_RunDatabase]()


def pytest_configure(config: pytest.Config) -> None:
    # Tests that run `cardroom` in-process must not leave its logging set-up to later tests.
    config.pluginmanager.register(LoggingGuard(), "cardroom-logging-guard")


@pytest.hookimpl(tryfirst=True)  # before xdist's own sessionstart starts the workers
def pytest_sessionstart(session: pytest.Session) -> None:
    config = session.config
    workerinput: dict[str, Any] | None = getattr(config, "workerinput", None)
    if workerinput is not None:
        value: str = workerinput[_WORKER_KEY]
        config.stash[_run_key] = (
            _RunDatabase(None, "", None, value[1:])
            if value.startswith("!")
            else _RunDatabase(None, "", value)
        )
        return
    name = dbsupport.new_database_name()
    server = None
    try:
        server = dbsupport.start_test_server()
        url = dbsupport.create_migrated_database(server.admin_url, name)
        config.stash[_run_key] = _RunDatabase(server, name, url)
    except Exception as exc:  # reported by the fixtures, so tests without a database still run
        config.stash[_run_key] = _RunDatabase(server, name, None, f"{type(exc).__name__}: {exc}")
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_XdistHooks(config), "cardroom-xdist-hooks")


class _XdistHooks:
    """Registered only when xdist is present (its hook would be unknown otherwise)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    def pytest_configure_node(self, node: Any) -> None:
        run = self.config.stash[_run_key]
        node.workerinput[_WORKER_KEY] = run.url if run.url else "!" + str(run.error)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    run = session.config.stash.get(_run_key, None)
    if run is None or run.server is None:  # workers own nothing
        return
    try:
        if run.url is not None:
            drop_database(run.server.admin_url, run.name)
    finally:
        run.server.close()


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() in {"true", "1", "yes"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    web = [item for item in items if item.path.name.startswith("test_web_")]
    if not web or _in_ci() or os.environ.get("CARDROOM_CHROMIUM") or shutil.which("chromium"):
        return
    for item in web:
        item.add_marker(pytest.mark.skip(reason=NO_CHROMIUM))
    config.stash[_web_skipped] = len(web)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    skipped = config.stash.get(_web_skipped, 0)
    if skipped:
        terminalreporter.write_line(f"{skipped} browser tests did not run: {NO_CHROMIUM}", red=True)


@pytest.fixture(scope="session")
def database_url(pytestconfig: pytest.Config) -> str:
    run = pytestconfig.stash.get(_run_key, None)
    if run is None or run.url is None:
        pytest.fail(f"no test database: {run.error if run else 'not set up'}", pytrace=False)
    return run.url


@pytest.fixture(scope="session")
def pool(database_url: str) -> Iterator[ConnectionPool]:
    with make_pool(database_url, max_size=12) as opened:
        yield opened


@pytest.fixture(scope="session")
def store(pool: ConnectionPool) -> EventStore:
    return EventStore(pool)


@pytest.fixture
def owner_connection(database_url: str) -> Iterator[psycopg.Connection[Any]]:
    """A raw autocommit connection as the database owner, for tests that need plain SQL."""
    with psycopg.connect(database_url, autocommit=True) as conn:
        yield conn
