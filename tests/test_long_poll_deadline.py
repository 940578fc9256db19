"""A long poll answers within its wait plus one request budget of its arrival (issue 39, item 6:
in the HA drill's switchover and rolling restart, long polls answered past that, each read after
the wait getting a whole budget of its own). The reads here are real statements on a real
PostgreSQL, cut by the service's own watchdog; the live hub is a stand-in whose wait ends when
the test says (an append a lagging standby does not show yet, or no append at all)."""

from __future__ import annotations

import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any

import pytest
from psycopg_pool import ConnectionPool

from service.live.hub import wait_past
from service.store import budget
from service.store.failures import StoreUnavailable

BUDGET = 2.0  # CARDROOM_REQUEST_BUDGET here: the database work of a request ends 0.5 s before
WAIT = 2.0  # the long poll's wait_seconds
SLACK = 0.5  # the most an answer may come after its bound


@dataclass
class Version:
    version: int


class StandInHub:
    """What ``wait_past`` asks of the live hub: it listens, and each wait ends after
    ``wait_for`` seconds, woken (an append) or not (the time is up, nothing missed)."""

    listening = True
    stopped = False

    def __init__(self, wait_for: float, woken: bool) -> None:
        self.wait_for, self.woken, self.epoch = wait_for, woken, 0

    def start(self) -> bool:
        return True

    def wait(self, game_id: uuid.UUID, after: int, seconds: float, hangup: Any = None) -> bool:
        threading.Event().wait(min(seconds, self.wait_for))  # the wait's own time passing
        return self.woken


@pytest.mark.parametrize("woken", [True, False], ids=["woken, reload slow", "time up, answer slow"])
def test_a_long_poll_answers_within_its_wait_and_one_budget(
    database_url: str, monkeypatch: pytest.MonkeyPatch, woken: bool
) -> None:
    monkeypatch.setenv("CARDROOM_REQUEST_BUDGET", str(BUDGET))
    pool = ConnectionPool(database_url, min_size=1, max_size=2, open=True, timeout=5)
    watchdog = budget.Watchdog(lambda: database_url)

    def slow_read(seconds: float) -> None:
        with budget.session(pool, watchdog) as conn:
            conn.execute("SELECT pg_sleep(%s)", (seconds,))

    try:
        arrived = time.monotonic()
        budget.start()  # the request arrives (service/http/observe.py)
        slow_read(1.2)  # its first read is slow but within its budget (a failover under way)
        hub = StandInHub(WAIT - 0.1, woken)
        with pytest.raises(StoreUnavailable):
            # woken: the read after the wait never ends; not woken: what the answer still
            # reads (the route's rematch announcement) never ends. Both are cut.
            reload = lambda: slow_read(60) or Version(0)  # noqa: E731
            wait_past(hub, uuid.uuid4(), 0, WAIT, reload, Version(0))  # type: ignore[arg-type]
            slow_read(60)
        took = time.monotonic() - arrived
        print(f"answered after {took:.2f} s (bound {BUDGET + WAIT} s + {SLACK} s)")
        assert took <= BUDGET + WAIT + SLACK
    finally:
        budget.end()
        pool.close()
