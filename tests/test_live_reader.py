"""The log reader (service/live/reader.py) behind the hub: rows that commit out of order, a long
transaction elsewhere, a lost connection, and a table followed by a key of its own. Appends are
raw inserts on connections of their own, so each test decides when each transaction commits."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Hashable, Iterator, Mapping
from typing import Any

import psycopg
import pytest
from dbsupport import terminate_sessions
from patience import scaled

from service.live.hub import SOURCES, Hub
from service.live.reader import LIMIT, Reader, Source

INTERVAL = 0.05
WAIT = scaled(10.0)  # a wake-up due now comes far sooner; a missed one makes the test fail at this

Connection = psycopg.Connection[Any]


@pytest.fixture
def name() -> str:
    return f"cardroom-live-test-{uuid.uuid4().hex[:8]}"  # the reader's application_name


@pytest.fixture
def hub(database_url: str, name: str) -> Iterator[Hub]:
    hub = Hub(lambda: database_url, name=name)
    assert hub.start()
    yield hub
    hub.stop()


def new_game(conn: Connection) -> uuid.UUID:
    game = uuid.uuid4()
    conn.execute("INSERT INTO games (id, game) VALUES (%s, 'reader-test')", (game,))
    return game


def append(conn: Connection, game: uuid.UUID, version: int) -> None:
    conn.execute(
        "INSERT INTO events (game_id, version, type, schema_version, data, hash)"
        " VALUES (%s, %s, 'reader_test', 1, '{}', repeat('0', 64))",
        (game, version),
    )


def connect(url: str) -> Connection:
    return psycopg.connect(url, autocommit=True)


def test_a_lower_transaction_that_commits_after_a_higher_one_wakes_its_waiters(
    hub: Hub, database_url: str
) -> None:
    with connect(database_url) as early, connect(database_url) as late:
        first, second = new_game(early), new_game(early)
        epoch = hub.epoch
        with early.transaction():
            append(early, first, 1)  # the lower transaction id and position, held open
            with late.transaction():
                append(late, second, 1)
            assert hub.wait(second, 0, WAIT)  # the reader has read past the later commit
        assert hub.wait(first, 0, WAIT)  # and still finds the earlier one when it commits
        assert hub.current(first) == 1
        assert hub.epoch == epoch  # woken by the row, not by a reconnection


def test_a_long_transaction_elsewhere_does_not_delay_a_wake_up(hub: Hub, database_url: str) -> None:
    with connect(database_url) as idle, connect(database_url) as appender:
        game = new_game(appender)
        with idle.transaction():
            idle.execute("SELECT pg_current_xact_id()")  # holds the cluster's xmin back
            for version in (1, 2, 3):
                began = time.monotonic()
                append(appender, game, version)
                assert hub.wait(game, version - 1, WAIT)
                took = time.monotonic() - began
                assert took < 20 * INTERVAL, f"woken {took:.2f} s after the commit"


def test_after_its_session_is_terminated_the_reader_wakes_every_waiter_and_follows_again(
    hub: Hub, database_url: str, name: str
) -> None:
    game = uuid.uuid4()
    epoch = hub.epoch
    with connect(database_url) as admin:
        assert terminate_sessions(admin, name) == [(True,)]
        assert hub.wait(game, 0, WAIT)  # no row of this game: woken by the loss
        deadline = time.monotonic() + WAIT
        while hub.epoch == epoch and time.monotonic() < deadline:
            hub.wait(game, 0, 0.5)  # woken again by the reconnection
        assert hub.epoch != epoch and hub.listening
        game = new_game(admin)
        append(admin, game, 1)
        assert hub.wait(game, 0, WAIT)
        assert hub.current(game) == 1


def test_a_rematch_row_wakes_every_waiter_of_its_game(hub: Hub, database_url: str) -> None:
    with connect(database_url) as conn:
        finished, rematch = new_game(conn), new_game(conn)
        epoch = hub.epoch
        conn.execute(
            "INSERT INTO rematches (game_id, rematch_id, proposed_by) VALUES (%s, %s, 0)",
            (finished, rematch),
        )
        assert hub.wait(finished, 1_000, WAIT)  # whatever version it waits past
        assert hub.epoch == epoch


def test_another_table_followed_by_key(database_url: str) -> None:
    table = f"feed_{uuid.uuid4().hex[:8]}"
    with connect(database_url) as conn:
        conn.execute(
            f"CREATE TABLE {table} (account_id uuid NOT NULL,"
            " id bigint GENERATED ALWAYS AS IDENTITY, tx xid8 DEFAULT pg_current_xact_id());"
            f" CREATE INDEX ON {table} (tx, id) WHERE tx IS NOT NULL"
        )
        feed = Source(table, "id", ("account_id",), lambda row: (("account", row[0]), None))
        hub = Hub(lambda: database_url, sources=(*SOURCES, feed), interval=INTERVAL)
        try:
            assert hub.start()
            account, other = uuid.uuid4(), uuid.uuid4()
            conn.execute(f"INSERT INTO {table} (account_id) VALUES (%s)", (other,))
            assert not hub.wait_key(("account", account), -1, 5 * INTERVAL)
            conn.execute(f"INSERT INTO {table} (account_id) VALUES (%s)", (account,))
            assert hub.wait_key(("account", account), -1, WAIT)
        finally:
            hub.stop()
            conn.execute(f"DROP TABLE {table}")


def test_more_rows_than_a_poll_reads_are_read_in_turn(hub: Hub, database_url: str) -> None:
    rows = 2 * LIMIT + 100  # one transaction: the cursor moves within its tx
    with connect(database_url) as conn:
        game = new_game(conn)
        append_many(conn, game, rows)
        assert hub.wait(game, rows - 1, WAIT)
        assert hub.current(game) == rows


class Recorder:
    """A listener of the reader's own (service/live/reader.py's Listener): what it was told."""

    def __init__(self) -> None:
        self.changed = threading.Condition()
        self.wakes: dict[Hashable, int | None] = {}
        self.missed_rows = threading.Event()

    def connected(self) -> None:
        pass

    def lost(self) -> None:
        pass

    def missed(self) -> None:
        self.missed_rows.set()

    def woken(self, wakes: Mapping[Hashable, int | None]) -> None:
        with self.changed:
            self.wakes.update(wakes)
            self.changed.notify_all()

    def heard_of(self, key: Hashable) -> bool:
        with self.changed:
            return self.changed.wait_for(lambda: key in self.wakes, WAIT)


def test_more_late_rows_than_a_poll_reads_say_some_may_be_missed(database_url: str) -> None:
    recorder = Recorder()
    reader = Reader(lambda: database_url, SOURCES, recorder, interval=INTERVAL)
    try:
        assert reader.start()
        with connect(database_url) as early, connect(database_url) as late:
            big, small = new_game(early), new_game(early)
            with early.transaction():
                append_many(early, big, LIMIT + 1)  # behind the cursor once the next is read
                with late.transaction():
                    append(late, small, 1)
                assert recorder.heard_of(small)
            # Read by their transaction's id, at most LIMIT of them: the others might be
            # missed, so the hub is told to wake every waiter (they read the store).
            assert recorder.missed_rows.wait(WAIT)
            assert recorder.heard_of(big)
    finally:
        reader.stop()


def append_many(conn: Connection, game: uuid.UUID, count: int) -> None:
    conn.execute(
        "INSERT INTO events (game_id, version, type, schema_version, data, hash)"
        " SELECT %s, v, 'reader_test', 1, '{}', repeat('0', 64) FROM generate_series(1, %s) v",
        (game, count),
    )
