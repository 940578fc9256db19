"""The live hub (service/live/hub.py) when its reader's connection is lost: waiters must not stay
blocked on wake-ups that cannot come (a long poll would hold its thread for its whole wait, and
during a database outage answer late instead of with a quick 503)."""

from __future__ import annotations

import threading
import time
import uuid

import psycopg
from dbsupport import terminate_sessions

from service.live.hub import Hub


def test_a_lost_connection_wakes_every_waiter_and_the_hub_listens_again(
    database_url: str,
) -> None:
    name = f"cardroom-live-test-{uuid.uuid4().hex[:8]}"
    address = [database_url]  # what the hub connects to: below, a server that is not there
    hub = Hub(lambda: address[0], name=name)
    try:
        assert hub.start()  # listening
        waits: list[float] = []  # when each wait began
        woken: dict[float, float] = {}  # a wait's beginning -> when it returned True
        done = threading.Event()

        def wait() -> None:
            # Waits again and again: a wake also comes when the hub first listens.
            while not done.is_set():
                began = time.monotonic()
                waits.append(began)
                if hub.wait(uuid.uuid4(), 0, 30.0):
                    woken[began] = time.monotonic()

        waiter = threading.Thread(target=wait, daemon=True)
        waiter.start()
        while not waits or time.monotonic() - waits[-1] < 0.2:  # one wait under way for a while
            time.sleep(0.02)
        blocked = waits[-1]
        with psycopg.connect(database_url, autocommit=True) as admin:
            # Kill the hub's connection and let it find no database to reconnect to, as in an
            # outage: the wait under way must not sleep through it.
            address[0] = "postgresql://postgres@127.0.0.1:1/test"
            assert terminate_sessions(admin, name) == [(True,)]
            for _ in range(200):  # 10 s at most, not the 30 s the waiter asked for
                if blocked in woken:
                    break
                time.sleep(0.05)
            assert blocked in woken
            assert not hub.listening
            address[0] = database_url  # the database is back
            for _ in range(400):  # it reconnects by itself (backoff 0.5 s, then 1 s, …)
                if hub.listening:
                    break
                time.sleep(0.05)
            assert hub.listening
    finally:
        done.set()
        hub.stop()  # wakes the waiter for good
