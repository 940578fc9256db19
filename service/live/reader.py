"""One reader of the log per process: polls followed tables for rows committed since its last
look and hands each row's wake-up to a listener (the hub, service/live/hub.py).

Rows become visible out of order: an append takes its ``position`` (or any id) before it
commits, so a transaction holding a lower one may commit after a higher one was read. Each row
therefore carries ``tx``, the id of the transaction that wrote it (``pg_current_xact_id()``,
migration 0017), and the reader follows a table by ``(tx, id)``. One statement per source and
poll reads, under one snapshot,

- the rows past the cursor, in ``(tx, id)`` order, at most ``LIMIT`` (then it polls again at
  once): they wake at once, however old the oldest transaction still running in the cluster;
- the rows of the transactions that were still running at the last poll with a ``tx`` at or
  below the cursor (``pending``): those may commit behind it, and are read by their ``tx``
  (the index) once they have ended;
- the snapshot (``pg_current_snapshot()``): its in-progress list, cut at the new cursor, is
  the next ``pending``. Every transaction below its ``xmin`` has ended, so has every one below
  its ``xmax`` that it does not list, and any other is above the cursor (which is a committed
  transaction's, below ``xmax``): no row is ever skipped, and none is read twice.

This keeps the watermark's promise (nothing below ``xmin`` still to come) without its cost: a
cursor that only advanced below ``xmin`` would read every row above it again at each poll
while one long transaction anywhere in the cluster holds ``xmin`` back.

The cursor starts at the head when the reader connects (older rows are the store's to read: a
waiter reads the store after the hub starts), and again after a reconnection, when the
listener wakes everyone (something may have been missed meanwhile). A source is a table with a
``tx xid8 DEFAULT pg_current_xact_id()`` column, a column unique within a transaction (its
order there) and a partial index ``(tx, id) WHERE tx IS NOT NULL``; see :class:`Source`.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import psycopg
from psycopg import sql

from service.store import db

log = logging.getLogger(__name__)

LIMIT = 500  # rows past the cursor read at once; more: poll again without waiting
CONNECT_TIMEOUT_SECONDS = 3
MAX_BACKOFF_SECONDS = 10.0

Wake = tuple[Hashable, int | None]  # a key to wake, and the version it reached (None: any)


@dataclass(frozen=True)
class Source:
    """A followed table. ``columns`` of each new row are passed to ``wakes``, which says what
    to wake: a key (a game's id, or any hashable the waiters use) and the version that key
    reached, or None to wake every waiter of the key. For example a feed of accounts::

        Source("account_feed", "id", ("account_id",), lambda row: (("account", row[0]), None))
    """

    table: str
    id: str  # unique within one transaction's rows; orders them
    columns: tuple[str, ...]
    wakes: Callable[[tuple[Any, ...]], Wake]
    query: sql.Composed = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Under one snapshot: the rows past the cursor (part 0), the rows of transactions that
        # were pending (part 1), and the snapshot itself (once, on every row; alone when none).
        rows = sql.SQL(
            "SELECT {part}, t.tx::text, t.{id}, {columns} FROM {table} t WHERE t.tx IS NOT NULL"
        )
        fields = {
            "id": sql.Identifier(self.id),
            "columns": sql.SQL(", ").join(sql.SQL("t.") + sql.Identifier(c) for c in self.columns),
            "table": sql.Identifier(self.table),
        }
        past = rows.format(part=sql.Literal(0), **fields) + sql.SQL(
            " AND (t.tx, t.{id}) > (%(tx)s::xid8, %(id)s) ORDER BY t.tx, t.{id} LIMIT %(limit)s"
        ).format(id=fields["id"])
        ended = rows.format(part=sql.Literal(1), **fields) + sql.SQL(
            " AND t.tx = ANY (%(pending)s::xid8[]) LIMIT %(limit)s"
        )
        query = sql.SQL(
            "SELECT s.snapshot, r.* FROM (SELECT pg_current_snapshot()::text AS snapshot) s"
            " LEFT JOIN LATERAL (({past}) UNION ALL ({ended})) r ON true"
        ).format(past=past, ended=ended)
        object.__setattr__(self, "query", query)


class Listener(Protocol):
    """What the reader tells (the hub): all calls come from the reader's thread."""

    def connected(self) -> None:
        """The cursor is at the head: every commit from now on will be read."""

    def lost(self) -> None:
        """The connection is gone: nothing is read until ``connected`` again."""

    def woken(self, wakes: Mapping[Hashable, int | None]) -> None:
        """Rows were read: each key, with the highest version read (None: wake all of it)."""

    def missed(self) -> None:
        """Rows may have been missed (too many at once): wake every waiter."""


@dataclass
class _Cursor:
    tx: int
    id: Any  # None: every row of transactions after ``tx``
    pending: frozenset[int]


def _snapshot(text: str) -> tuple[int, int, list[int]]:
    """``xmin:xmax:xip,...`` as PostgreSQL writes a pg_snapshot."""
    xmin, xmax, xip = text.split(":")
    return int(xmin), int(xmax), [int(x) for x in xip.split(",") if x]


class Reader:
    """Polls ``sources`` every ``interval`` seconds on one connection of its own, on a thread
    started by :meth:`start`; reconnects with backoff. Tells ``listener`` what it reads."""

    def __init__(
        self,
        conninfo: Callable[[], str],
        sources: Sequence[Source],
        listener: Listener,
        *,
        interval: float,
        name: str = "cardroom-live",
    ) -> None:
        self._conninfo = conninfo
        self._sources = tuple(sources)
        self._listener = listener
        self._interval = interval
        self._name = name  # the connection's application_name (pg_stat_activity)
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._connected = threading.Event()
        self._tried = threading.Event()  # the first connection attempt is over, either way
        self._stopping = threading.Event()

    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    def start(self, wait: float = CONNECT_TIMEOUT_SECONDS + 1) -> bool:
        """Start reading unless it does already; waits up to ``wait`` seconds for the first
        connection attempt and returns whether it is connected."""
        with self._lock:
            if self._stopping.is_set():
                return False
            if self._thread is None or not self._thread.is_alive():
                self._tried.clear()
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
        self._tried.wait(wait)
        return self.connected

    def stop(self, join: bool = True) -> None:
        self._stopping.set()
        thread = self._thread
        if join and thread is not None and thread is not threading.current_thread():
            thread.join(self._interval + CONNECT_TIMEOUT_SECONDS + 1)

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
                    head = self._head(conn)
                    cursors = [_Cursor(head.tx, None, head.pending) for _ in self._sources]
                    self._connected.set()
                    self._listener.connected()  # before start() returns: its epoch is new
                    self._tried.set()
                    backoff = 0.5
                    self._follow(conn, cursors)
            except Exception as exc:  # never let the thread die: reconnect instead
                if not self._stopping.is_set():
                    log.warning("live updates: %s; reconnecting in %.1f s", exc, backoff)
            finally:
                if self._connected.is_set():
                    self._connected.clear()
                    self._listener.lost()
                self._tried.set()
            if self._stopping.wait(backoff):
                break
            backoff = min(backoff * 2, MAX_BACKOFF_SECONDS)

    @staticmethod
    def _head(conn: psycopg.Connection[Any]) -> _Cursor:
        """A cursor past every committed row: rows of transactions running now, or later."""
        row = conn.execute("SELECT pg_current_snapshot()::text").fetchone()
        assert row is not None
        _, xmax, running = _snapshot(row[0])
        return _Cursor(xmax - 1, None, frozenset(running))

    def _follow(self, conn: psycopg.Connection[Any], cursors: list[_Cursor]) -> None:
        # Each source's statement composed once for the connection, not at every poll (20 a
        # second, a quarter of a poll's CPU: issue 40, goal 3).
        queries = [source.query.as_bytes(conn) for source in self._sources]
        while not self._stopping.is_set():
            wakes: dict[Hashable, int | None] = {}
            behind = False
            for source, query, cursor in zip(self._sources, queries, cursors, strict=True):
                behind |= self._poll(conn, source, query, cursor, wakes)
            if wakes:
                self._listener.woken(wakes)
            if not behind:
                self._stopping.wait(self._interval)

    def _poll(
        self,
        conn: psycopg.Connection[Any],
        source: Source,
        query: bytes,
        cursor: _Cursor,
        wakes: dict[Hashable, int | None],
    ) -> bool:
        """One statement (``source``'s ``query``): reads what is new into ``wakes``, moves
        ``cursor``; True when it stopped at the LIMIT (more to read)."""
        pending = "{" + ",".join(map(str, sorted(cursor.pending))) + "}"
        params = {"tx": str(cursor.tx), "id": cursor.id, "pending": pending, "limit": LIMIT}
        rows = conn.execute(query, params).fetchall()
        _, _, running = _snapshot(rows[0][0])
        for row in rows:
            if row[1] is not None:  # None: no rows, the snapshot alone
                _wake(wakes, *source.wakes(tuple(row[4:])))
        past = [(int(row[2]), row[3]) for row in rows if row[1] == 0]
        if past:
            cursor.tx, cursor.id = max(past)  # (UNION ALL promises no order)
        if sum(row[1] == 1 for row in rows) >= LIMIT:  # some of those rows may be unread
            self._listener.missed()
        cursor.pending = frozenset(x for x in running if x <= cursor.tx)
        return len(past) >= LIMIT


def _wake(wakes: dict[Hashable, int | None], key: Hashable, version: int | None) -> None:
    if key in wakes:
        known = wakes[key]
        wakes[key] = None if known is None or version is None else max(known, version)
    else:
        wakes[key] = version
