"""The notification hub: one LISTEN connection per server process, waking requests that wait
for a game to change (SSE streams, long polls).

Every append NOTIFYs channel ``cardroom_events`` with ``"<game_id> <last version>"`` at commit
(migrations/versions/0003), to every process that listens, on any host; a finished game's new
rematch, with ``"<game_id> rematch"`` (0016), which wakes every waiter of that game, whatever
version it waits past (a stream of the finished game announces it). A notification is only
a wake-up: whoever waits reads the store again, and the store is the truth. So a coalesced
notification loses nothing, and one missed while the connection was down is made up for by
waking every waiter when it is back (and, meanwhile, by letting waiters poll). The one case
left, a request that read the store just before a reconnection but starts waiting just after
it, costs latency, never an event: streams read again at each heartbeat, long polls at their
end.

The hub also vouches for what this process knows (:meth:`Hub.current`): the last version of a
game notified or read since the connection was made, with no notification past it since, is the
game's version (but for an append whose notification is on its way, which then wakes its
waiters as any other). A stream that reconnects at that version then waits without reading
the store first. A long poll still reads the store when it comes: with 200 clients long-polling,
those reads are what finds a database outage first, and without them picks that came just after
the database stopped waited for the pool's whole timeout (503 after 3.5-4 s, not 1 s:
``python -m bench.load --clients 200 --games 50 --db-outage``; tests/test_faults.py).
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from time import monotonic
from typing import Any, Protocol, TypeVar
from uuid import UUID

import psycopg

from service.live.shared import SingleFlight
from service.store import budget, db

log = logging.getLogger(__name__)


class Hangup(Protocol):
    """Watches a waiting request's client (service/http/hangup.py): ``watch`` sets ``woken`` as
    soon as the client goes, and ``gone`` says it went."""

    @property
    def gone(self) -> bool: ...

    def watch(self, woken: threading.Event) -> AbstractContextManager[None]: ...


CHANNEL = "cardroom_events"
REMATCH = "rematch"  # the payload's second word when a finished game gets its rematch
POLL_SECONDS = 1.0  # while the hub cannot listen, waiters wake this often to read the store
STOP_CHECK_SECONDS = 1.0  # how long the listener blocks before it looks at the stop flag
IDLE_PROBE_SECONDS = 30.0  # a quiet connection is probed: a dead peer is not always noticed
CONNECT_TIMEOUT_SECONDS = 3
MAX_BACKOFF_SECONDS = 10.0
KNOWN_GAMES = 8192  # games whose last notified version is remembered


@dataclass(eq=False, slots=True)  # no __dict__: one object fewer per wait (http/heap.py)
class _Waiter:
    after: int
    woken: threading.Event = field(default_factory=threading.Event)


class Hub:
    """Wakes waiters when a game passes a version. Thread-safe. The listening thread starts on
    first use (after a fork, in the process that uses it) and reconnects when the connection
    drops; :meth:`stop` ends it."""

    def __init__(self, conninfo: Callable[[], str], name: str = "cardroom-live") -> None:
        self._conninfo = conninfo  # called when connecting: the pool's URL may come later
        self._name = name  # its connection's application_name (pg_stat_activity)
        self._lock = threading.Lock()
        # Per game, the last version notified or read (``note``), and the epoch it was learnt
        # in: while that epoch lasts, no later version was notified, so it is the game's last.
        self._latest: OrderedDict[UUID, tuple[int, int]] = OrderedDict()
        self._waiters: dict[UUID, list[_Waiter]] = {}
        self._listening = threading.Event()
        self._tried = threading.Event()  # the first connection attempt is over, either way
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._epoch = 0  # connections made so far: a change means notifications may be lost

    @property
    def epoch(self) -> int:
        """Changes whenever the listening connection is (re)made: a waiter that timed out with
        the same epoch as when it last read the store, the hub listening all along, missed no
        notification, so it need not read the store again."""
        return self._epoch

    @property
    def listening(self) -> bool:
        return self._listening.is_set()

    @property
    def stopped(self) -> bool:
        """Stopped for good: the process is shutting down, so streams and long polls end."""
        return self._stopping.is_set()

    def current(self, game_id: UUID) -> int | None:
        """The game's last version if the hub vouches for it (else None): notified or noted in
        the current connection's lifetime, the hub listening all along, nothing later
        notified. An append committed just now may not be notified yet: a waiter past that
        version is woken when it is, so nothing is lost by not reading the store."""
        with self._lock:
            known = self._latest.get(game_id)
            if known is None or known[1] != self._epoch or not self._listening.is_set():
                return None
            return known[0]

    def note(self, game_id: UUID, version: int, epoch: int) -> None:
        """The store said ``game_id`` is at ``version`` in a read begun at ``epoch`` (the hub
        listening then): if it still is that epoch, the hub vouches for that version until a
        notification says otherwise."""
        with self._lock:
            if epoch == self._epoch and self._listening.is_set():
                self._learn(game_id, version)

    def _learn(self, game_id: UUID, version: int) -> None:
        """With the lock held."""
        known = self._latest.get(game_id)
        if known is None or known[0] <= version:
            self._latest[game_id] = (version, self._epoch)
        # else a later version is known already (versions never go back): it stays, with the
        # epoch it was learnt in
        self._latest.move_to_end(game_id)
        while len(self._latest) > KNOWN_GAMES:
            self._latest.popitem(last=False)

    def forget(self) -> None:
        """Vouch for nothing known so far (the database is another: its versions may be
        behind what was notified)."""
        with self._lock:
            self._latest.clear()

    def start(self) -> bool:
        """Start listening unless it already does; returns whether it listens. The first call
        waits for the first connection attempt, so that a caller who reads the store after it
        misses no notification of a later append."""
        with self._lock:
            if self._stopping.is_set():
                return False  # stopped for good (at exit): waiters poll
            if self._thread is None or not self._thread.is_alive():
                self._listening.clear()
                self._tried.clear()
                self._thread = threading.Thread(target=self._run, name="cardroom-live", daemon=True)
                self._thread.start()
        self._tried.wait(CONNECT_TIMEOUT_SECONDS + 1)
        return self.listening

    def stop(self, join: bool = True) -> None:
        """Stop for good (the process is shutting down) and wake every waiter; ``join=False``
        does not wait for the listening thread (in a signal handler)."""
        self._stopping.set()
        self._wake_all()
        thread = self._thread
        if join and thread is not None and thread is not threading.current_thread():
            thread.join(STOP_CHECK_SECONDS + CONNECT_TIMEOUT_SECONDS + 1)

    def wait(
        self, game_id: UUID, after_version: int, timeout: float, hangup: Hangup | None = None
    ) -> bool:
        """Block until ``game_id`` is notified past ``after_version`` (maybe before this call),
        or for ``timeout`` seconds. True when woken: by such a notification, by a reconnection
        (notifications may have been missed), or, while the hub cannot listen, after
        ``POLL_SECONDS``; at once once stopped; as soon as ``hangup``'s client goes. Whatever
        it returns, read the store to know what changed."""
        self.start()
        waiter = _Waiter(after_version)
        with self._lock:
            if self._latest.get(game_id, (0, 0))[0] > after_version or self.stopped:
                return True
            listening = self.listening
            self._waiters.setdefault(game_id, []).append(waiter)
        try:
            with hangup.watch(waiter.woken) if hangup is not None else nullcontext():
                if listening:
                    return waiter.woken.wait(max(0.0, timeout))
                polled = min(max(0.0, timeout), POLL_SECONDS)
                return waiter.woken.wait(polled) or timeout > POLL_SECONDS
        finally:
            with self._lock:
                waiters = self._waiters.get(game_id, [])
                waiters.remove(waiter)
                if not waiters:
                    self._waiters.pop(game_id, None)

    # --- the listening thread ----------------------------------------------------------------

    def _run(self) -> None:
        backoff = 0.5
        while not self._stopping.is_set():
            try:
                with db.FirstToAnswer.connect(  # a multi-host URL: its hosts at once
                    self._conninfo(),
                    autocommit=True,
                    connect_timeout=CONNECT_TIMEOUT_SECONDS,
                    application_name=self._name,
                    options=db.session_options(),
                ) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    with self._lock:
                        self._epoch += 1
                    self._listening.set()
                    self._tried.set()
                    self._wake_all()  # anything may have been appended while not listening
                    backoff = 0.5
                    self._listen(conn)
            except Exception as exc:  # never let the thread die: reconnect instead
                if not self._stopping.is_set():
                    log.warning("live updates: %s; reconnecting in %.1f s", exc, backoff)
            finally:
                if self._listening.is_set():
                    self._listening.clear()
                    # Waiters blocked on notifications that will not come (the connection is
                    # gone, maybe the database with it) read the store again now: a long poll
                    # then answers (or gets its 503) instead of holding a thread for its whole
                    # wait, and goes on polling if it waits again.
                    self._wake_all()
                self._tried.set()
            if self._stopping.wait(backoff):
                break
            backoff = min(backoff * 2, MAX_BACKOFF_SECONDS)

    def _listen(self, conn: psycopg.Connection[Any]) -> None:
        quiet_since = monotonic()
        while not self._stopping.is_set():
            for notify in conn.notifies(timeout=STOP_CHECK_SECONDS):
                self._notified(notify.payload)
                quiet_since = monotonic()
            if monotonic() - quiet_since > IDLE_PROBE_SECONDS:
                conn.execute("SELECT 1")  # raises if the connection is gone
                quiet_since = monotonic()

    def _notified(self, payload: str) -> None:
        game, _, version = payload.partition(" ")
        try:
            game_id = UUID(game)
            if version == REMATCH:  # a finished game's rematch (migration 0016): no new version
                self._wake_game(game_id)
                return
            last = int(version)
        except ValueError:
            log.warning("live updates: ignored a malformed notification %r", payload)
            return
        with self._lock:
            self._learn(game_id, last)
            for waiter in self._waiters.get(game_id, ()):
                if last > waiter.after:
                    waiter.woken.set()

    def _wake_game(self, game_id: UUID) -> None:
        """Wake every waiter of ``game_id``, whatever version it waits past."""
        with self._lock:
            for waiter in self._waiters.get(game_id, ()):
                waiter.woken.set()

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
            break  # the time is up and no notification was missed: nothing to read again
        epoch = hub.epoch
        budget.start()  # the wait is over: the request's reads get a budget from now
        current = _RELOADS.run((game_id, after), load).result or current
    budget.start()  # what the answer still reads gets a budget of its own too
    return current


_RELOADS: SingleFlight[Any] = SingleFlight()  # per process
