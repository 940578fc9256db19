"""What a watcher costs the store (service/live/hub.py, http/routes/stream.py): the hub vouches
for a game's last version while it listens, so a stream that reconnects at that version reads
nothing; a woken stream reads the new events once and moves this process's state on by them,
rather than reading the state too. (A long poll still reads the store when it comes: see
service/live/hub.py on why.)

The store's reads are counted per thread (each request of the test server has its own), so that
a pick made meanwhile, whose reads are its own business, is not counted against the stream.
Nothing is mocked: the counting wrappers call the real store.
"""

from __future__ import annotations

import sys
import threading
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from api_client import ApiClient, LiveServer, Table, expect_status
from dbsupport import terminate_sessions
from test_stream import WAIT, open_stream

from service.http.routes import stream
from service.live.hub import Hub

pytest_plugins = ["api_fixtures"]

READS = ("load", "events_after", "load_records", "version")


class Reads:
    """The store's reads, per thread, and the threads that waited on the hub, in order."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.by_thread: dict[int, Counter[str]] = {}
        self.for_streams: Counter[str] = Counter()  # by any stream (they share their reads)
        self.waiters: list[int] = []
        self.parked = threading.Condition(self.lock)

    def count(self, name: str) -> None:
        with self.lock:
            self.by_thread.setdefault(threading.get_ident(), Counter())[name] += 1
            if _for_a_stream():
                self.for_streams[name] += 1

    def of(self, thread: int) -> Counter[str]:
        with self.lock:
            return Counter(self.by_thread.get(thread, Counter()))

    def clear(self) -> None:
        with self.lock:
            self.by_thread.clear()
            self.for_streams.clear()
            self.waiters.clear()

    def next_waiter(self) -> int:
        """The first thread that waited on the hub since ``clear``."""
        with self.parked:
            assert self.parked.wait_for(lambda: self.waiters, WAIT), "nothing waited on the hub"
            return self.waiters[0]


@pytest.fixture
def reads(live_server: LiveServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[Reads]:
    found = Reads()
    store = live_server.app.extensions["cardroom"].store
    for name in READS:
        monkeypatch.setattr(store, name, _counted(found, name, getattr(store, name)))
    hub: Hub = live_server.app.extensions["cardroom_live"]
    original: Callable[..., bool] = hub.wait

    def wait(*args: Any, **kwargs: Any) -> bool:
        with found.parked:
            found.waiters.append(threading.get_ident())
            found.parked.notify_all()
        return original(*args, **kwargs)

    monkeypatch.setattr(hub, "wait", wait)
    yield found


STREAM_CODE = str(Path(stream.__file__))


def _for_a_stream() -> bool:
    """Whether the caller is service/http/routes/stream.py (a stream opening or woken)."""
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_filename == STREAM_CODE:
            return True
        frame = frame.f_back
    return False


def _counted(reads: Reads, name: str, call: Callable[..., Any]) -> Callable[..., Any]:
    def counted(*args: Any, **kwargs: Any) -> Any:
        reads.count(name)
        return call(*args, **kwargs)

    return counted


def test_a_stream_that_reconnects_at_the_last_version_reads_nothing_until_an_append(
    api: ApiClient, live_server: LiveServer, reads: Reads
) -> None:
    table = Table.open(api, 2)
    try:
        version = api.game(table.game_id)["version"]
        with open_stream(live_server.url, table.game_id, last_id=version) as first:
            expect_status(first.response, 200)
            reads.next_waiter()  # it read the game once, and the hub vouches for its version
        reads.clear()
        with open_stream(live_server.url, table.game_id, last_id=version) as again:
            expect_status(again.response, 200)
            reads.next_waiter()
            assert reads.for_streams == Counter()  # nothing read: the hub vouched
            alice = table.players[0]
            hand = alice.client.game(table.game_id)["you"]["hand"]
            alice.client.move(table.game_id, {"cards": hand[:1]})
            message = next(iter(again))
            assert message.id == version + 1
            # Woken: the new events, read once per stream at most (the first one's server side
            # may not know yet that its client went, and two reads share one call only when
            # they overlap), never the state: this process's, moved on by the events.
            assert set(reads.for_streams) == {"load_records"}
            assert 1 <= reads.for_streams["load_records"] <= 2
    finally:
        table.close()


def test_the_hub_vouches_only_for_what_it_learnt_since_it_listens(database_url: str) -> None:
    name = f"cardroom-live-test-{uuid.uuid4().hex[:8]}"
    hub = Hub(lambda: database_url, name=name)
    game = uuid.uuid4()
    try:
        assert hub.start()
        assert hub.current(game) is None  # never heard of it: read the store
        epoch = hub.epoch
        hub.note(game, 3, epoch)
        assert hub.current(game) == 3
        hub.note(game, 2, epoch)  # an older read (versions never go back): 3 stays
        assert hub.current(game) == 3
        with psycopg.connect(database_url, autocommit=True) as admin:
            admin.execute("INSERT INTO games (id, game) VALUES (%s, 'test')", (game,))
            admin.execute(  # versions 1 to 5 in one append, read by the hub's reader
                "INSERT INTO events (game_id, version, type, schema_version, data, hash)"
                " SELECT %s, v, 'test', 1, '{}', repeat('0', 64) FROM generate_series(1, 5) v",
                (game,),
            )
            assert hub.wait(game, 3, WAIT)
            assert hub.current(game) == 5  # read: a later version than any read of the store
            assert terminate_sessions(admin, name) == [(True,)]
        # Reconnected (or not yet): an append may have been missed meanwhile, so the hub
        # vouches for nothing it learnt before, nor for a read begun before.
        assert hub.wait(game, 5, WAIT)  # woken by the loss (and again by the reconnection)
        assert hub.current(game) is None
        hub.note(game, 6, epoch)
        assert hub.current(game) is None
    finally:
        hub.stop()
