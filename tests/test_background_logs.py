"""The background loops (the turn clock's sweeper, the webhook deliverer, the idempotency keys'
purge) say in one log line, not a traceback, that the database is away: a failover drill logged
427 tracebacks of pool timeouts (issue 39, item 6's run). A fault of the code still gets its
traceback."""

from __future__ import annotations

import logging
import socket
from types import SimpleNamespace
from typing import Any

import pytest
from psycopg_pool import ConnectionPool

from service.http.idempotency import Purger
from service.live.clock import Sweeper
from service.store.failures import StoreUnavailable
from service.webhooks.deliver import Deliverer


def closed_port() -> int:
    with socket.socket() as sock:  # bound, never listening: connections are refused
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def records(caplog: pytest.LogCaptureFixture, name: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name.startswith(name)]


def sweeper_failing_with(error: Exception) -> Sweeper:
    def expired(*_: Any) -> Any:
        raise error

    games: Any = SimpleNamespace(deadlines=SimpleNamespace(expired=expired))
    return Sweeper(games)


def test_the_clock_says_the_database_is_away_in_one_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING)
    sweeper_failing_with(StoreUnavailable("connection refused", "down")).sweep_logged()
    (record,) = records(caplog, "service.")
    assert record.exc_info is None and "database is away (down)" in record.getMessage()


def test_the_clock_keeps_the_traceback_of_a_fault(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    sweeper_failing_with(KeyError("a bug")).sweep_logged()
    (record,) = records(caplog, "service.")
    assert record.exc_info is not None and record.getMessage() == "turn clock: sweep failed"


def test_the_deliverer_says_the_database_is_away_in_one_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING)
    url = f"postgresql://postgres@127.0.0.1:{closed_port()}/none?connect_timeout=1"
    with ConnectionPool(url, min_size=0, max_size=1, timeout=0.5, open=True) as pool:
        deliverer = Deliverer(pool, lambda: None)  # type: ignore[arg-type, return-value]
        assert deliverer.run_once_logged() == 0
    logged = records(caplog, "service.webhooks")
    assert [r.exc_info for r in logged] == [None] * len(logged)  # its purge's failure too
    assert any("database is away (pool)" in r.getMessage() for r in logged)


class AwayStore:
    """A store whose every connection is refused, as in a failover (what Purger.run needs)."""

    def connection(self) -> Any:
        raise StoreUnavailable("couldn't get a connection after 0.05 sec", "pool")


def test_the_key_purge_says_the_database_is_away_in_one_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The HA drill's log held 29 tracebacks of this purge's pool timeouts (this session's run).
    caplog.set_level(logging.WARNING)
    Purger(60.0).run(AwayStore())
    (record,) = records(caplog, "service.http.idempotency")
    assert record.exc_info is None and "database is away (pool)" in record.getMessage()
