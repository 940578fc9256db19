"""Bounded waits (issue 12): every connection the service opens has a statement_timeout, a
lock_timeout and an idle_in_transaction_session_timeout (service/store/db.py), so a request that
cannot get the database in time answers 503 with Retry-After instead of waiting for tens of
seconds: here, behind a lock on ``events`` held by another connection."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from api_client import ApiClient, Table, expect_problem, expect_status, serve

from service.http.app import create_app
from service.store import db

pytest_plugins = ["api_fixtures"]

LOCK_TIMEOUT = 1.0  # seconds, for this test's app (default 3)


@pytest.fixture
def quick_app_url(database_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("CARDROOM_LOCK_TIMEOUT", str(LOCK_TIMEOUT))
    monkeypatch.setenv("CARDROOM_STATEMENT_TIMEOUT", "2")
    with db.make_pool(database_url, max_size=4) as pool, serve(create_app(pool=pool)) as url:
        yield url


def test_every_connection_has_its_timeouts(database_url: str) -> None:
    with db.make_pool(database_url, max_size=1) as pool, pool.connection() as conn:
        shown = {
            name: conn.execute(f"SHOW {name}").fetchone()[0]  # type: ignore[index]
            for name in db.SESSION_TIMEOUTS
        }
    assert shown == {
        "statement_timeout": "5s",
        "lock_timeout": "3s",
        "idle_in_transaction_session_timeout": "10s",
    }


def test_a_move_behind_a_lock_on_events_answers_503_within_the_timeout(
    quick_app_url: str, owner_connection: psycopg.Connection[Any]
) -> None:
    with ApiClient(quick_app_url) as api:
        table = Table.open(api, 2)
        player = table.players[0]
        body = {
            "round": 1,
            "turn": 1,
            "cards": player.client.game(table.game_id)["you"]["hand"][:1],
        }
        with owner_connection.transaction():
            owner_connection.execute("LOCK TABLE events IN SHARE MODE")  # reads go on, appends wait
            started = time.monotonic()
            blocked = player.client.post(f"{table.path}/moves", body)
            waited = time.monotonic() - started
        expect_problem(blocked, 503, "database_unavailable")
        assert int(blocked.headers["Retry-After"]) >= 1
        assert LOCK_TIMEOUT <= waited < LOCK_TIMEOUT + 2, waited
        assert player.client.game(table.game_id)["you"]["pick"] is None  # nothing half-written
        # The lock is gone: the same move goes through at once (the database was never "down").
        started = time.monotonic()
        expect_status(player.client.post(f"{table.path}/moves", body), 200)
        assert time.monotonic() - started < 1.0
        table.close()
