"""One deadline per request: everything a request waits for in the database, together, ends by
its budget (``CARDROOM_REQUEST_BUDGET``, default 5 s) from its arrival, less :func:`reserve`
(what answering takes, on a loaded machine too: the answer is out by the budget, issue 39
item 5).

A request's deadline is set when it arrives (service/http/observe.py); database work outside a
request (the turn clock, streams between their waits) gets a budget of its own per use. One
timer per request: the request's :class:`Guard`, made by its first :func:`session` and queued
once with the process's :class:`Watchdog`; its later sessions only hand it their connection
(issue 40, goal 3: a guard per statement cost every statement a heap entry, two locks and a
wake-up). :func:`session` hands out a pooled connection within it:

- the wait for a connection is bounded by what is left (then ``pool``: every connection busy,
  or ``down``: the pool has room but cannot connect);
- what then runs on it (lock waits, statements, and a commit's wait for a synchronous standby,
  which ``statement_timeout`` does not end) is cancelled at the deadline by the process's
  :class:`Watchdog`, which first asks the server what the backend was waiting for, so that the
  503 names the cause (``lock``, ``standby``, ``statement``).

A commit whose wait for the standby is cancelled is committed on the primary all the same
(PostgreSQL only warns): the request answers 503 ``standby`` rather than claiming the write is
as safe as promised. A retry with the same Idempotency-Key then gets the stored answer.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import logging
import socket
import threading
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from time import monotonic
from typing import Any

import psycopg
from psycopg import errors
from psycopg_pool import ConnectionPool, PoolTimeout

from service.settings import settings
from service.store import db
from service.store.failures import Cause, StoreUnavailable, unavailable

log = logging.getLogger(__name__)

_deadline: ContextVar[float | None] = ContextVar("cardroom_deadline", default=None)
# The request's guard: made by its first session, handed the connection of each later one.
_guard: ContextVar[Guard | None] = ContextVar("cardroom_guard", default=None)

MAX_RESERVE_SECONDS = 0.5


def reserve(seconds: float) -> float:
    """What of a budget of ``seconds`` is kept for answering: the database work ends that much
    before it (at most half a second, a quarter of a short budget). Under a held lock 15 of
    248 moves answered more than half a second after a 5 s budget on a loaded machine when
    the work ran to the budget itself (issue 39, item 5): a burst of 503s at one moment, each
    waiting for the CPU."""
    return min(MAX_RESERVE_SECONDS, seconds / 4)


def start(seconds: float | None = None, not_after: float | None = None) -> None:
    """This request's deadline: ``seconds`` (default: the request budget) from now, less the
    reserve for its answer, and never past ``not_after``. Called again by a request that waited
    for something else meanwhile (a long poll, once woken): a new deadline, and a new guard."""
    budget = settings().request_budget if seconds is None else seconds
    until = monotonic() + budget - reserve(budget)
    _deadline.set(until if not_after is None else min(until, not_after))
    _forget_guard()


def after_waiting(seconds: float) -> float:
    """The latest deadline of a request that also waits ``seconds`` for something else (a long
    poll): its own pushed back by the wait, so that it answers within its arrival + the wait
    + one budget however its reads and its wait fall (issue 39, item 6: long polls answered
    past that in a failover, each read after the wait getting a whole budget of its own)."""
    return deadline() + seconds


def end() -> None:
    _deadline.set(None)
    _forget_guard()


def _forget_guard() -> None:
    guard = _guard.get()
    if guard is not None:
        guard.done = True  # the watchdog drops it when it comes due
        _guard.set(None)


def deadline() -> float:
    """The current request's deadline, else one budget from now (work outside a request)."""
    current = _deadline.get()
    if current is None:
        budget = settings().request_budget
        return monotonic() + budget - reserve(budget)
    return current


@contextlib.contextmanager
def within(seconds: float) -> Iterator[None]:
    """Run the block under a deadline of its own (readiness probes: shorter than a request's)."""
    token = _deadline.set(min(monotonic() + seconds - reserve(seconds), deadline()))
    guard = _guard.set(None)  # the block's sessions: a guard of their deadline
    try:
        yield
    finally:
        _forget_guard()
        _guard.reset(guard)
        _deadline.reset(token)


def connection_wait(pool: ConnectionPool) -> float:
    """How long to wait for a connection of ``pool`` now: what is left of the deadline, and
    less while the database is known to be down (service/store/db.py)."""
    return max(0.001, min(db.connection_timeout(pool), deadline() - monotonic()))


@contextlib.contextmanager
def session(pool: ConnectionPool, watchdog: Watchdog) -> Iterator[psycopg.Connection[Any]]:
    """A connection of ``pool`` for work that ends by the deadline, or StoreUnavailable."""
    until = deadline()
    left = until - monotonic()
    if left <= 0:
        raise StoreUnavailable("the request's time budget is spent", "statement")
    guard: Guard | None = None
    try:
        # getconn/putconn, not pool.connection(): that one also enters the connection's own
        # context, whose exit commits (rolls back on an error): nothing to do on these
        # autocommit connections, whose transactions are conn.transaction() blocks closed by
        # then, yet it took the connection's lock and a wait, and with the context managers
        # below nested as generators a session cost 155,000 instructions on top of its
        # statements (callgrind). A connection given back in a transaction all the same is
        # rolled back by the pool (putconn), a broken one replaced, as before.
        conn = pool.getconn(timeout=min(db.connection_timeout(pool), left))
        try:
            db.note_reachable(pool)
            try:
                # The guard first: setting a short lock_timeout is a statement too, and a
                # connection whose network went silent must not hold it past the deadline.
                guard = watchdog.watch(conn, until)
                try:
                    shortened = _shorten_lock_wait(conn, until, watchdog.lock_timeout)
                    try:
                        yield conn
                    finally:
                        if shortened:
                            _restore_lock_wait(conn)
                finally:
                    watchdog.unwatch(guard, conn)
            except errors.LockNotAvailable as exc:
                raise StoreUnavailable(str(exc), _lock_cause(conn)) from exc
            if guard.cause == "standby":  # committed here, not confirmed by the standby
                raise StoreUnavailable("the synchronous standby did not confirm", "standby")
        finally:
            pool.putconn(conn)
    except PoolTimeout as exc:
        raise StoreUnavailable(str(exc), _pool_cause(pool)) from exc
    except errors.QueryCanceled as exc:
        raise unavailable(exc, guard.cause if guard is not None else None) from exc
    except (psycopg.OperationalError, psycopg.InterfaceError, errors.DiskFull) as exc:
        db.note_unreachable(pool, exc)
        raise unavailable(exc) from exc
    except errors.ReadOnlySqlTransaction as exc:  # a read-only database, a standby
        raise unavailable(exc) from exc


def _shorten_lock_wait(conn: psycopg.Connection[Any], until: float, lock_timeout: float) -> bool:
    """A request left with less time than the session's lock_timeout (it waited for the pool)
    gets a lock_timeout of what it has left, for as long as it holds the connection (True:
    :func:`_restore_lock_wait` when it gives it back): the server then ends its lock waits on
    time by itself. (The watchdog would too, but one round trip after another when many such
    requests queue behind a lock.) Plain functions, not a context manager: every session
    passes here, and almost none sets anything."""
    left = until - monotonic()
    if left <= MIN_SECONDS:
        raise StoreUnavailable("the request's time budget is spent", "pool")
    if left >= lock_timeout:
        return False
    conn.execute("SELECT set_config('lock_timeout', %s, false)", (f"{int(left * 1000)}ms",))
    return True


def _restore_lock_wait(conn: psycopg.Connection[Any]) -> None:
    try:
        conn.execute("RESET lock_timeout")  # the session's own, as it connected
    except psycopg.Error:
        conn.close()  # never back to the pool with a short timeout: the pool drops it


# Commits wait for a synchronous standby now, or will: one is required and none is connected.
_BEHIND_STANDBY = (
    "SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE wait_event = 'SyncRep')"
    " OR (current_setting('synchronous_standby_names') <> ''"
    " AND current_setting('synchronous_commit') NOT IN ('off', 'local')"
    " AND NOT EXISTS (SELECT 1 FROM pg_stat_activity WHERE backend_type = 'walsender'))"
)


def _lock_cause(conn: psycopg.Connection[Any]) -> Cause:
    """A lock wait that ran out: ``standby`` when commits wait for a synchronous standby (they
    hold their locks meanwhile), else ``lock``."""
    with contextlib.suppress(psycopg.Error):
        row = conn.execute(_BEHIND_STANDBY).fetchone()
        if row is not None and row[0]:
            return "standby"
    return "lock"


def _pool_cause(pool: ConnectionPool) -> Cause:
    """Why no connection came: every one busy (``pool``), or the pool, with room to grow,
    could not connect (``down``: the database refuses or does not answer)."""
    stats = pool.get_stats()
    return "down" if stats.get("pool_size", 0) < pool.max_size else "pool"


# --- the watchdog ---------------------------------------------------------------------------

_WAITS: dict[tuple[str, str], Cause] = {("IPC", "SyncRep"): "standby"}
_CANCEL = (
    "SELECT pid, coalesce(wait_event_type, ''), coalesce(wait_event, ''),"
    f" ({_BEHIND_STANDBY}), pg_cancel_backend(pid)"
    " FROM pg_stat_activity WHERE pid = ANY(%s) AND state = 'active'"
)
OBSERVER_TIMEOUT_MS = 1000  # the watchdog's own statements
MIN_SECONDS = 0.01  # a connection had with less time than this left is given back at once
RECHECK_SECONDS = 0.05  # how soon a guard past its deadline and still in use is looked at again
TICK_SECONDS = 0.05  # the watchdog looks at most this often (a cancel may come this late)
# Past its deadline, a guard whose server has not answered the watchdog (a cut-off or hung
# server, a dead network: neither the observer nor libpq's cancel got through) is severed
# this much later: its socket shut down, so the request's wait ends with an error.
GRACE_SECONDS = 0.25  # within the reserve (:func:`reserve`): severed before the budget
CANCEL_TIMEOUT = 0.5  # libpq's cancel request, when the observer could not be used


@dataclass(eq=False)
class Guard:
    """A request's deadline, and the connection it holds now (None between its sessions);
    ``cause`` is set if that connection's statement was cancelled. One per request (shared by
    its sessions: :data:`_guard`), or one per session outside a request.

    ``reached``: its statement was cancelled after its deadline (the server answered the
    watchdog about it); ``severed``: it was not, and at the grace's end, still in use, its
    socket was shut down (the connection is closed, never given back to the pool as it is):
    its server did not answer, or ran nothing for it (the request waited for an answer the
    network lost, or stayed between two statements past its deadline). ``done``: the request
    (or the session) is over; the watchdog drops it."""

    deadline: float
    watchdog: Watchdog | None = None
    conn: psycopg.Connection[Any] | None = None
    cause: Cause | None = None
    reached: bool = False
    severed: bool = False
    done: bool = False
    request: bool = False  # the request's, shared by its sessions (else one session's own)
    lock: threading.Lock = field(default_factory=threading.Lock)  # held while cancelling
    state: threading.Lock = field(default_factory=threading.Lock)  # conn, done and severed

    @property
    def pid(self) -> int:
        assert self.conn is not None
        return self.conn.info.backend_pid

    @property
    def server(self) -> tuple[str, str]:
        assert self.conn is not None
        info = self.conn.info
        return info.host, str(info.port)

    @property
    def idle(self) -> bool:
        """Over, or holding no connection now (nothing to cancel)."""
        return self.done or self.conn is None


class Watchdog:
    """Cancels the statements of connections kept past their deadline: one thread per process
    (a greenlet under gevent) and one connection of its own, opened the first time it is
    needed. Before it cancels it reads what each backend waits for (``pg_stat_activity``):
    a lock, a synchronous standby (``SyncRep``), or nothing (a statement running long).

    The thread itself never waits for the network: the cancels run in a helper, one batch at
    a time, so that a server that does not answer (cut off, its network dead) cannot hold it.
    A guard still in use :data:`GRACE_SECONDS` past its deadline whose server did not answer
    is severed (:func:`sever`): libpq reads EOF, the request fails and answers 503 ``down``
    instead of waiting for TCP to give up. A commit whose answer is lost that way may have
    happened: the client's retry with its Idempotency-Key finds it and gets its answer."""

    def __init__(self, conninfo: Callable[[], str]) -> None:
        self._conninfo = conninfo
        self.lock_timeout = settings().lock_timeout  # the sessions' own (service/store/db.py)
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._heap: list[tuple[float, int, Guard]] = []
        self._order = itertools.count()
        self._thread: threading.Thread | None = None
        self._observer: psycopg.Connection[Any] | None = None
        self._helping_since: float | None = None  # a batch of cancels is running since then

    def watch(self, conn: psycopg.Connection[Any], deadline: float) -> Guard:
        """``conn`` watched until :meth:`unwatch`: by the request's guard (queued once, at its
        first session), or by one of its own outside a request (or nested in another). Two
        plain calls rather than a context manager (and no ExitStack): every session passes
        here, and the generators cost more than the guard's own work."""
        guard = _guard.get()
        shared = guard is not None and guard.watchdog is self and guard.deadline == deadline
        if guard is None or not shared or guard.conn is not None or guard.done:
            shared = guard is None and _deadline.get() is not None
            guard = Guard(deadline, self, request=shared)
            if shared:
                _guard.set(guard)  # the request's: its later sessions share it
            self._queue(guard, deadline)
        with guard.state:
            guard.conn, guard.cause, guard.reached, guard.severed = conn, None, False, False
        return guard

    def unwatch(self, guard: Guard, conn: psycopg.Connection[Any]) -> None:
        """The session is done with ``conn``. Not while it is being cancelled (the pool must not
        reuse it yet), unless it was severed: then it is closed here, and no other request
        ever gets it."""
        held = not guard.severed and guard.lock.acquire()
        try:
            with guard.state:
                guard.conn = None
                guard.done = guard.done or not guard.request
        finally:
            if held:
                guard.lock.release()
        if guard.severed:
            conn.close()

    def _queue(self, guard: Guard, at: float) -> None:
        with self._lock:
            heapq.heappush(self._heap, (at, next(self._order), guard))
            first = self._heap[0][2] is guard
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="cardroom-watchdog")
                self._thread.daemon = True
                self._thread.start()
        if first:
            self._wake.set()

    def _run(self) -> None:
        while True:
            self._wake.clear()
            with self._lock:
                now, due = monotonic(), []
                while self._heap and self._heap[0][0] <= now:
                    guard = heapq.heappop(self._heap)[2]
                    if not guard.done:
                        due.append(guard)  # between two sessions: looked at again shortly
                wait = self._heap[0][0] - now if self._heap else None
            if due:
                try:
                    self._look_at(due, now)
                except Exception:  # never let the thread die
                    log.exception("watchdog: could not cancel %d statements", len(due))
                self._watch_again(due)
                continue
            # Not sooner than a tick: most guards are done long before their deadline, and
            # one wake-up per request (each has its own deadline) would cost every request.
            self._wake.wait(None if wait is None else max(wait, TICK_SECONDS))

    def _look_at(self, due: list[Guard], now: float) -> None:
        """Sever what the server did not answer for in time; cancel the rest (in the helper,
        if it is free: else they are looked at again shortly)."""
        late = [
            g for g in due if not g.idle and not g.reached and now >= g.deadline + GRACE_SECONDS
        ]
        for guard in late:
            sever(guard)
        if self._helping_since is not None:
            if now - self._helping_since > GRACE_SECONDS:
                self._sever_observer()  # its server does not answer: the helper gives up
            return
        batch = [g for g in due if not g.severed and not g.idle]
        if batch:
            self._helping_since = now
            threading.Thread(target=self._help, args=(batch,), daemon=True).start()

    def _help(self, batch: list[Guard]) -> None:
        try:
            self._cancel(batch)
        except Exception:  # never let a batch keep the helper busy
            log.exception("watchdog: could not cancel %d statements", len(batch))
        finally:
            self._helping_since = None

    def _watch_again(self, guards: list[Guard]) -> None:
        """Guards still in use after their cancel (or not cancelled: between two statements
        of a transaction, which then starts the next) are looked at again shortly."""
        again = monotonic() + RECHECK_SECONDS
        with self._lock:
            for guard in guards:
                if not guard.done and not guard.severed:  # between sessions: until it is over
                    heapq.heappush(self._heap, (again, next(self._order), guard))

    def _cancel(self, due: list[Guard]) -> None:
        """Cancel through the observer the guards on its server; the others (another server
        after a failover, or the observer failed) through libpq, one by one. No guard is held
        while the observer connects: a request that ends meanwhile gives its connection back."""
        live = [g for g in due if not g.idle and not g.severed]
        if not live:
            return
        observed: set[Guard] = set()
        try:
            server = self._server()
        except psycopg.Error as exc:
            log.warning("watchdog: %s; cancelling through libpq instead", exc)
            self._drop_observer()
        else:
            observed = self._observe_and_cancel([g for g in live if _on(g, server)])
        for guard in live:
            if guard.reached or guard.severed or guard.idle or guard in observed:
                continue
            if guard.lock.acquire(blocking=False) or _locked(guard):
                try:
                    if not guard.idle and not guard.severed:
                        _cancel_through_libpq(guard)
                finally:
                    guard.lock.release()

    def _observe_and_cancel(self, guards: list[Guard]) -> set[Guard]:
        """What each backend waits for, read and cancelled in one statement, while their guards
        are held (a connection given back meanwhile could serve another request's statement).
        Returns the guards the observer answered for: those whose statement ran were cancelled
        (``reached``); the others' backends were running nothing, so the request holding one
        past its deadline is between two statements, or waits for an answer the server sent
        and the network lost (a connection cut, the server's side still open): neither is
        cancelled (nothing runs), and one still in use at the grace's end is severed."""
        held = [g for g in guards if g.lock.acquire(blocking=False) or _locked(g)]
        try:
            here = {g.pid: g for g in held if not g.idle and not g.severed}
            if not here:
                return set()
            try:
                rows = self._observe(list(here))
            except psycopg.Error as exc:
                log.warning("watchdog: %s; cancelling through libpq instead", exc)
                self._drop_observer()
                return set()
            for pid, wait_type, wait_event, behind_standby, _ in rows:
                cause = _WAITS.get((wait_type, wait_event))
                if cause is None and wait_type == "Lock":
                    cause = "standby" if behind_standby else "lock"
                here[pid].cause = cause or "statement"
                here[pid].reached = True  # cancelled
            return set(here.values())
        finally:
            for guard in held:
                guard.lock.release()

    def _server(self) -> tuple[str, str]:
        """The server the observer is on (connected first if need be): a pid means the same
        backend on that server only (a multi-host URL may have reached another since)."""
        if self._observer is None or self._observer.closed:
            self._observer = db.FirstToAnswer.connect(
                self._conninfo(),
                autocommit=True,
                connect_timeout=2,
                application_name="cardroom-watchdog",
                options=f"-c statement_timeout={OBSERVER_TIMEOUT_MS}",
            )
        info = self._observer.info
        return info.host, str(info.port)

    def _observe(self, pids: list[int]) -> list[tuple[int, str, str, bool, bool]]:
        """What the backends ``pids`` of the observer's server were doing; each cancelled."""
        assert self._observer is not None
        return self._observer.execute(_CANCEL, (pids,)).fetchall()

    def _sever_observer(self) -> None:
        observer = self._observer
        if observer is not None and not observer.closed:
            _shut_down(observer)

    def _drop_observer(self) -> None:
        if self._observer is not None:
            with contextlib.suppress(psycopg.Error):
                self._observer.close()
            self._observer = None


def _on(guard: Guard, server: tuple[str, str]) -> bool:
    """Whether the connection ``guard`` holds now is on ``server``."""
    with guard.state:
        return not guard.idle and guard.server == server


def _cancel_through_libpq(guard: Guard) -> None:
    """libpq's cancel request, to the guard's own server (the observer is elsewhere)."""
    assert guard.conn is not None
    try:
        guard.conn.cancel_safe(timeout=CANCEL_TIMEOUT)
    except psycopg.Error:
        return
    guard.cause = guard.cause or "statement"
    guard.reached = True


def sever(guard: Guard) -> None:
    """End the request's wait on a server that does not answer: its connection's socket shut
    down in both directions, so libpq reads EOF at once (the request raises OperationalError
    and answers 503) rather than waiting for TCP to give up. Not once the request is done with
    it: the pool may have handed it to another request already."""
    with guard.state:
        if guard.idle or guard.severed or guard.conn is None:
            return
        guard.severed = True
        log.warning(
            "watchdog: the database did not answer for a statement %.1f s past its deadline:"
            " its connection is cut",
            monotonic() - guard.deadline,
        )
        _shut_down(guard.conn)


def _shut_down(conn: psycopg.Connection[Any]) -> None:
    """shutdown(SHUT_RDWR) of ``conn``'s socket, through a duplicate of its descriptor: libpq
    keeps its own (closing that under it could close another file opened meanwhile)."""
    with contextlib.suppress(OSError, psycopg.Error):
        fd = conn.pgconn.socket
        with socket.fromfd(fd, socket.AF_INET, socket.SOCK_STREAM) as duplicate:
            duplicate.shutdown(socket.SHUT_RDWR)


def _locked(guard: Guard) -> bool:
    """Wait for a guard whose request is handing its connection back at this very moment."""
    return guard.lock.acquire(timeout=1.0)
