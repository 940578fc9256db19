"""The live hub: wakes requests that wait for a game to change (SSE streams, long polls), one
per server process, fed by one reader of the log (service/live/reader.py).

The reader polls ``events`` every ``CARDROOM_LIVE_INTERVAL`` seconds for rows committed since
its last look, whichever process or host appended them, and the hub wakes the waiters of each
game past whose version a row went; a new ``rematches`` row wakes every waiter of its finished
game, whatever version it waits past (a stream of the finished game announces it). No
notification is sent inside the append's commit (migration 0017): commits share their WAL
flushes. A wake-up is only a wake-up: whoever waits reads the store again, and the store is the
truth. So a coalesced or repeated wake-up loses nothing, and rows missed while the connection
was down are made up for by waking every waiter when it is back (and, meanwhile, by letting
waiters poll). The one case left, a request that read the store just before a reconnection but
starts waiting just after it, costs latency, never an event: streams read again at each
heartbeat, long polls at their end.

Waiters wait on a key: a game's id for the API above (:meth:`Hub.wait`), any hashable for other
followers of the log (:meth:`Hub.wait_key`, woken by :meth:`Hub.wake` or by a reader
:class:`~service.live.reader.Source` given to the hub).

The hub also vouches for what this process knows (:meth:`Hub.current`): the last version of a
game read by the reader or by a request since the connection was made, with nothing later read
since, is the game's version (but for an append not read yet, which then wakes its waiters as
any other). A stream that reconnects at that version then waits without reading the store
first. A long poll still reads the store when it comes: with 200 clients long-polling, those
reads are what finds a database outage first, and without them picks that came just after the
database stopped waited for the pool's whole timeout (503 after 3.5-4 s, not 1 s:
``python -m bench.load --clients 200 --games 50 --db-outage``; tests/test_faults.py).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from time import monotonic
from typing import Any, Protocol, TypeVar
from uuid import UUID

from service.live.reader import Reader, Source
from service.live.shared import SingleFlight
from service.settings import settings
from service.store import budget


class Hangup(Protocol):
    """Watches a waiting request's client (service/http/hangup.py): ``watch`` sets ``woken`` as
    soon as the client goes, and ``gone`` says it went."""

    @property
    def gone(self) -> bool: ...

    def watch(self, woken: threading.Event) -> AbstractContextManager[None]: ...


POLL_SECONDS = 1.0  # while the hub cannot read the log, waiters wake this often to read the store
KNOWN_GAMES = 8192  # keys whose last version read is remembered

# What the hub follows: a game's appends (its waiters past an older version wake), and a
# finished game's rematch (all its waiters wake: the game has no new version).
EVENTS = Source("events", "position", ("game_id", "version"), lambda row: (row[0], row[1]))
REMATCHES = Source("rematches", "game_id", ("game_id",), lambda row: (row[0], None))
# An account's feed (its stream, issue 35): every waiter of the account wakes.
ACCOUNT_FEED = Source(
    "account_feed", "id", ("account_id",), lambda row: (account_key(row[0]), None)
)
SOURCES = (EVENTS, REMATCHES, ACCOUNT_FEED)


def account_key(account_id: str) -> tuple[str, str]:
    """The key the waiters of an account's feed wait on."""
    return ("account", account_id)


@dataclass(eq=False, slots=True)  # no __dict__: one object fewer per wait (http/heap.py)
class _Waiter:
    after: int
    woken: threading.Event = field(default_factory=threading.Event)


class Hub:
    """Wakes waiters when a game (or any key) passes a version. Thread-safe. The reader's thread
    starts on first use (after a fork, in the process that uses it) and reconnects when the
    connection drops; :meth:`stop` ends it. ``sources``: the tables the reader follows (more
    than :data:`SOURCES` for other followers of the log); ``interval``: seconds between its
    polls (default ``CARDROOM_LIVE_INTERVAL``)."""

    def __init__(
        self,
        conninfo: Callable[[], str],  # called when connecting: the pool's URL may come later
        name: str = "cardroom-live",  # the reader's application_name (pg_stat_activity)
        *,
        sources: Sequence[Source] = SOURCES,
        interval: float | None = None,
    ) -> None:
        self._lock = threading.Lock()
        # Per key, the last version read (by the reader, or ``note``), and the epoch it was
        # learnt in: while that epoch lasts, no later version was read, so it is the last.
        self._latest: OrderedDict[Hashable, tuple[int, int]] = OrderedDict()
        self._waiters: dict[Hashable, list[_Waiter]] = {}
        # Per key, how many wake-ups without a version it had (``ticket``): a waiter that read
        # the store at one ticket and waits past it misses none that came in between.
        self._tickets: OrderedDict[Hashable, int] = OrderedDict()
        self._listening = threading.Event()
        self._stopping = threading.Event()
        self._epoch = 0  # connections made so far: a change means rows may have been missed
        self._followers: list[Callable[[], None]] = []  # told of every wake-up (``follow``)
        every = settings().live_interval if interval is None else interval
        self._reader = Reader(conninfo, sources, self, interval=every, name=name)

    @property
    def epoch(self) -> int:
        """Changes whenever the reader's connection is (re)made: a waiter that timed out with
        the same epoch as when it last read the store, the hub listening all along, missed no
        append, so it need not read the store again."""
        return self._epoch

    @property
    def listening(self) -> bool:
        return self._listening.is_set()

    @property
    def stopped(self) -> bool:
        """Stopped for good: the process is shutting down, so streams and long polls end."""
        return self._stopping.is_set()

    def current(self, game_id: UUID) -> int | None:
        """The game's last version if the hub vouches for it (else None): read by the reader
        or noted in the current connection's lifetime, the hub listening all along, nothing
        later read. An append committed just now may not be read yet: a waiter past that
        version is woken when it is, so nothing is lost by not reading the store."""
        with self._lock:
            known = self._latest.get(game_id)
            if known is None or known[1] != self._epoch or not self._listening.is_set():
                return None
            return known[0]

    def note(self, game_id: UUID, version: int, epoch: int) -> None:
        """The store said ``game_id`` is at ``version`` in a read begun at ``epoch`` (the hub
        listening then): if it still is that epoch, the hub vouches for that version until the
        reader reads a later one."""
        with self._lock:
            if epoch == self._epoch and self._listening.is_set():
                self._learn(game_id, version)

    def _learn(self, key: Hashable, version: int) -> None:
        """With the lock held."""
        known = self._latest.get(key)
        if known is None or known[0] <= version:
            self._latest[key] = (version, self._epoch)
        # else a later version is known already (versions never go back): it stays, with the
        # epoch it was learnt in
        self._latest.move_to_end(key)
        while len(self._latest) > KNOWN_GAMES:
            self._latest.popitem(last=False)

    def forget(self) -> None:
        """Vouch for nothing known so far (the database is another: its versions may be
        behind what was read)."""
        with self._lock:
            self._latest.clear()

    def start(self) -> bool:
        """Start the reader unless it runs already; returns whether it reads. The first call
        waits for the first connection attempt, so that a caller who reads the store after it
        misses no later append."""
        if self._stopping.is_set():
            return False  # stopped for good (at exit): waiters poll
        self._reader.start()
        return self.listening

    def stop(self, join: bool = True) -> None:
        """Stop for good (the process is shutting down) and wake every waiter; ``join=False``
        does not wait for the reader's thread (in a signal handler)."""
        self._stopping.set()
        self._wake_all()
        self._reader.stop(join)

    def wait(
        self, game_id: UUID, after_version: int, timeout: float, hangup: Hangup | None = None
    ) -> bool:
        """Block until ``game_id`` is appended to past ``after_version`` (maybe before this
        call), or for ``timeout`` seconds. True when woken: by such an append, by a
        reconnection (appends may have been missed), or, while the hub cannot read, after
        ``POLL_SECONDS``; at once once stopped; as soon as ``hangup``'s client goes. Whatever
        it returns, read the store to know what changed."""
        return self.wait_key(game_id, after_version, timeout, hangup)

    def wait_key(
        self, key: Hashable, after: int, timeout: float, hangup: Hangup | None = None
    ) -> bool:
        """:meth:`wait` for any key (a game's is its id): woken by ``wake(key, version)`` past
        ``after``, or ``wake(key)``. ``after`` must be a version that grows in commit order
        (as a game's does); with anything else, wait past -1 and read the store when woken."""
        self.start()
        waiter = _Waiter(after)
        with self._lock:
            known = self._latest.get(key)
            if (known is not None and known[0] > after) or self.stopped:
                return True
            listening = self.listening
            self._waiters.setdefault(key, []).append(waiter)
        return self._park(key, waiter, listening, timeout, hangup)

    def ticket(self, key: Hashable) -> tuple[int, int]:
        """Where ``key``'s wake-ups without a version are (and the epoch): take it before
        reading the store, then :meth:`wait_ticket` past it (an account's feed, whose rows
        have no version that grows in commit order)."""
        with self._lock:
            return self._epoch, self._tickets.get(key, 0)

    def wait_ticket(
        self, key: Hashable, ticket: tuple[int, int], timeout: float, hangup: Hangup | None = None
    ) -> bool:
        """:meth:`wait_key` for a wake-up of ``key`` after ``ticket`` (``ticket(key)``): at
        once if one came since, or the reader reconnected."""
        self.start()
        waiter = _Waiter(-1)
        with self._lock:
            if (self._epoch, self._tickets.get(key, 0)) != ticket or self.stopped:
                return True
            listening = self.listening
            self._waiters.setdefault(key, []).append(waiter)
        return self._park(key, waiter, listening, timeout, hangup)

    def _park(
        self,
        key: Hashable,
        waiter: _Waiter,
        listening: bool,
        timeout: float,
        hangup: Hangup | None,
    ) -> bool:
        """Wait for ``waiter`` (registered under ``key``) to be woken."""
        try:
            with hangup.watch(waiter.woken) if hangup is not None else nullcontext():
                if listening:
                    return waiter.woken.wait(max(0.0, timeout))
                polled = min(max(0.0, timeout), POLL_SECONDS)
                return waiter.woken.wait(polled) or timeout > POLL_SECONDS
        finally:
            with self._lock:
                waiters = self._waiters.get(key, [])
                waiters.remove(waiter)
                if not waiters:
                    self._waiters.pop(key, None)

    def follow(self, told: Callable[[], None]) -> None:
        """Call ``told`` (from the reader's thread; it must not block) whenever the reader
        reads anything, reconnects, or may have missed rows: a follower of the whole log (the
        webhooks' deliverer) looks at the store then."""
        self._followers.append(told)

    def _tell_followers(self) -> None:
        for told in self._followers:
            told()

    def wake(self, key: Hashable, version: int | None = None) -> None:
        """Wake the waiters of ``key`` past whose version ``version`` is (and remember it), or
        every waiter of ``key`` when ``version`` is None."""
        self.woken({key: version})

    # --- what the reader tells (service/live/reader.py's Listener), from its thread ------------

    def connected(self) -> None:
        with self._lock:
            self._epoch += 1
            self._listening.set()
        self._wake_all()  # anything may have been appended while not reading
        self._tell_followers()

    def lost(self) -> None:
        # Waiters blocked on wake-ups that will not come (the connection is gone, maybe the
        # database with it) read the store again now: a long poll then answers (or gets its
        # 503) instead of holding a thread for its whole wait, and goes on polling if it
        # waits again.
        self._listening.clear()
        self._wake_all()

    def missed(self) -> None:
        self._wake_all()
        self._tell_followers()

    def woken(self, wakes: Mapping[Hashable, int | None]) -> None:
        with self._lock:
            for key, version in wakes.items():
                if version is not None:
                    self._learn(key, version)
                else:
                    self._tickets[key] = self._tickets.pop(key, 0) + 1  # newest last
                    while len(self._tickets) > KNOWN_GAMES:  # a forgotten ticket: one spurious
                        self._tickets.popitem(last=False)  # wake-up, never a missed one
                for waiter in self._waiters.get(key, ()):
                    if version is None or version > waiter.after:
                        waiter.woken.set()
        self._tell_followers()

    def _wake_all(self) -> None:
        with self._lock:
            for waiters in self._waiters.values():
                for waiter in waiters:
                    waiter.woken.set()


class Versioned(Protocol):
    @property
    def version(self) -> int: ...


V = TypeVar("V", bound=Versioned)


def vouched(hub: Hub, game_id: UUID, cached: V | None) -> V | None:
    """``cached`` (this process's last state of the game) if the hub vouches that it is the
    game's last version (``Hub.current``): then a read of the store would tell nothing new."""
    if cached is not None and hub.current(game_id) == cached.version:
        return cached
    return None


def wait_past(
    hub: Hub,
    game_id: UUID,
    after: int,
    seconds: float,
    load: Callable[[], V],
    current: V,
    hangup: Hangup | None = None,
) -> V:
    """A long poll: ``current`` if its version is past ``after``, else the game as ``load``
    reads it once it is, or once ``seconds`` have passed (whichever comes first; at once when
    ``hangup``'s client goes: the answer will not be read). ``load`` must read the same for
    every long poll of ``game_id`` past ``after``: the long polls woken together share one
    call (an append wakes them all at once)."""
    if current.version > after:
        return current
    deadline = monotonic() + seconds
    latest = budget.after_waiting(seconds)  # the answer is out by arrival + wait + budget
    listened, epoch = hub.listening, hub.epoch
    hub.start()
    if not listened:
        current = load()  # read again now that the hub listens: an append in between is seen
    while current.version <= after:
        remaining = deadline - monotonic()
        if remaining <= 0 or hub.stopped:
            break
        woken = hub.wait(game_id, after, remaining, hangup)
        if hangup is not None and hangup.gone:
            break
        if not woken and hub.listening and hub.epoch == epoch:
            break  # the time is up and no append was missed: nothing to read again
        epoch = hub.epoch
        budget.start(not_after=latest)  # the wait is over: the reads get a budget from now
        current = _RELOADS.run((game_id, after), load).result or current
    budget.start(not_after=latest)  # and what the answer still reads
    return current


_RELOADS: SingleFlight[Any] = SingleFlight()  # per process
