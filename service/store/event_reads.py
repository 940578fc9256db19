"""The event store's connections and reads (``EventReads``): a pooled connection checked against the
database this process read before (a restored copy, a failover, another server: every cache is
dropped), the hash chain's heads it remembers, and every read of games, events, seeds and seats
(the lobby's list included). The writes (events.py) build on it."""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any
from uuid import UUID

import psycopg
from psycopg import sql
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

from domain.chain import GENESIS
from domain.decider import Event
from service.store import budget, signatures
from service.store.event_sql import (
    IDENTITY,
    LIST_GAMES,
    PROBE_EMPTY,
    PROBE_LOCKS,
    PROBE_WRITE,
    PROCESS,
    READ_ONLY,
    WAITING_GAMES,
)
from service.store.event_types import (
    ORDERS,
    STATUSES,
    GameCursor,
    GameNotFound,
    GameRow,
    SeatToken,
    StoredEvent,
    VersionConflict,
)
from service.store.failures import StoreUnavailable, unavailable
from service.store.recent import Recent

log = logging.getLogger("service.store.events")  # its name before the split, kept for log filters


class EventReads:
    """The connections and reads of ``EventStore`` (events.py)."""

    def __init__(self, pool: ConnectionPool, signer: signatures.Signer | None = None) -> None:
        self.pool = pool
        # Signs the event that finishes a game, once, in the statement that appends it (the
        # game service sets it: service/play/). Without one, no signature is written, and
        # the finished game's exports and audits say so.
        self.signer = signer
        # The last (version, hash) seen of recent games: the next append links to it without
        # reading it back (events never change, so a remembered hash stays true).
        self._heads: Recent[UUID, tuple[int, str]] = Recent(4096)
        self.watchdog = budget.Watchdog(lambda: str(pool.conninfo))
        # Which database the caches were read from, and the connections checked against it.
        self._identity: tuple[Any, ...] | None = None
        self._identity_lock = threading.Lock()
        self._checked: weakref.WeakSet[psycopg.Connection[Any]] = weakref.WeakSet()
        self._forgetters: list[Callable[[], None]] = [self._heads.clear]
        # Counts the databases met: a read that began under another generation must not
        # believe (nor remember) what it took from memory before.
        self.generation = 0

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        """A pooled connection in autocommit mode, for work that ends by the request's
        deadline (service/store/budget.py): a read is one round trip; writes open their own
        transaction (``conn.transaction()``)."""
        with budget.session(self.pool, self.watchdog) as conn:
            if conn not in self._checked:
                self._check_database(conn)
            yield conn

    def on_new_database(self, forget: Callable[[], None]) -> None:
        """Call ``forget`` whenever this process finds its database is not the one it read
        before: a restart onto a restored copy, a failover, another server or database."""
        self._forgetters.append(forget)

    def _check_database(self, conn: psycopg.Connection[Any]) -> None:
        """On each new connection: the server's system identifier, timeline and start time
        and the database's oid. Any change (a server restarted onto a copy of its files that
        lacks the last commits, a promoted standby, another server or database) means what
        this process remembers may be ahead of what the database holds: it is all dropped."""
        identity = tuple(conn.execute(IDENTITY).fetchone() or ())
        with self._identity_lock:
            known, self._identity = self._identity, identity
            if known is not None and known != identity:
                log.warning(
                    "the database is not the one this process read before (system, timeline,"
                    " database, start: %s, was %s): every cache is dropped",
                    identity,
                    known,
                )
                self.generation += 1  # before the caches go: see GameService.load
                for forget in self._forgetters:
                    forget()
            self._checked.add(conn)

    connection = _connection  # for the store's companions (service/store/invitations.py)

    def hash_at(self, game_id: UUID, version: int) -> str:
        """The hash of ``version`` (the genesis constant for 0), from memory if at hand."""
        if version == 0:
            return GENESIS
        head = self._heads.get(game_id)
        if head is not None and head[0] == version:
            return head[1]
        with self._connection() as conn:
            row = conn.execute(
                "SELECT hash FROM events WHERE game_id = %s AND version = %s", (game_id, version)
            ).fetchone()
            if row is None:
                if not self._exists(conn, game_id):
                    raise GameNotFound(game_id)
                raise VersionConflict(game_id, version)  # the game is not at that version
        return str(row[0])

    def _remember_head(self, game_id: UUID, version: int, digest: str) -> None:
        head = self._heads.get(game_id)
        if head is None or head[0] < version:
            self._heads.put(game_id, (version, digest))

    # --- reads ----------------------------------------------------------------------------

    def load(self, game_id: UUID) -> tuple[str, list[Event]]:
        """The game's name and all its events in version order."""
        with self._connection() as conn:
            rows = conn.execute(
                "SELECT g.game, e.type, e.data, e.schema_version FROM games g"
                " LEFT JOIN events e ON e.game_id = g.id WHERE g.id = %s ORDER BY e.version",
                (game_id,),
            ).fetchall()
        if not rows:
            raise GameNotFound(game_id)
        return rows[0][0], [Event(t, d, s) for _, t, d, s in rows if t is not None]

    def load_records(self, game_id: UUID, after: int = 0, limit: int = 100) -> list[StoredEvent]:
        """Up to ``limit`` recorded events with version > ``after``, in version order."""
        with self._connection() as conn:
            cur = conn.cursor(row_factory=dict_row)
            rows = cur.execute(
                "SELECT version, type, schema_version, data, recorded_at, position, hash"
                " FROM events WHERE game_id = %s AND version > %s ORDER BY version LIMIT %s",
                (game_id, after, limit),
            ).fetchall()
            if not rows and not self._exists(conn, game_id):
                raise GameNotFound(game_id)
        return [StoredEvent(**row) for row in rows]

    def events_after(self, game_id: UUID, version: int) -> list[Event]:
        """The events of a game known to exist with version > ``version`` (one query)."""
        with self._connection() as conn:
            rows = conn.execute(
                "SELECT type, data, schema_version, version, hash FROM events"
                " WHERE game_id = %s AND version > %s ORDER BY version",
                (game_id, version),
            ).fetchall()
        if rows:
            self._remember_head(game_id, rows[-1][3], rows[-1][4])
        return [Event(t, d, s) for t, d, s, _, _ in rows]

    def version(self, game_id: UUID) -> int:
        """The game's current version (number of events)."""
        with self._connection() as conn:
            row = conn.execute(
                "SELECT max(version) FROM events WHERE game_id = %s", (game_id,)
            ).fetchone()
            if row is None or row[0] is None:
                raise GameNotFound(game_id)
        return int(row[0])

    def seed(self, game_id: UUID) -> tuple[bytes, str | None]:
        """The game's seed as stored, and the id of the key that sealed it (None: in clear)."""
        with self._connection() as conn:
            row = conn.execute(
                "SELECT seed, key_id FROM game_secrets WHERE game_id = %s", (game_id,)
            ).fetchone()
        if row is None:
            raise GameNotFound(game_id)
        return bytes(row[0]), row[1]

    def seat_for_token(self, game_id: UUID, token_hash: bytes) -> int | None:
        """The seat in ``game_id`` whose bearer token hashes to ``token_hash``, if any."""
        with self._connection() as conn:
            row = conn.execute(
                "SELECT seat FROM seats WHERE game_id = %s AND token_hash = %s",
                (game_id, token_hash),
            ).fetchone()
        return None if row is None else int(row[0])

    def seat_tokens(self, game_id: UUID) -> list[SeatToken]:
        """Every token issued for a seat of ``game_id``: its seat, hash (for constant-time
        checks) and the version of its ``seat_taken`` (None: issued before migration 0010).
        A seat left before the start has a row per holder; the game's state says which holds
        it now (service/http/auth.py)."""
        with self._connection() as conn:
            rows = conn.execute(
                "SELECT seat, token_hash, taken_at FROM seats WHERE game_id = %s"
                " ORDER BY seat, taken_at NULLS FIRST",
                (game_id,),
            ).fetchall()
        return [SeatToken(int(seat), bytes(digest), taken_at) for seat, digest, taken_at in rows]

    def token_game(self, token_hash: bytes) -> tuple[UUID, int] | None:
        """The (game, seat) a bearer token belongs to, if any."""
        with self._connection() as conn:
            row = conn.execute(
                "SELECT game_id, seat FROM seats WHERE token_hash = %s", (token_hash,)
            ).fetchone()
        return None if row is None else (row[0], int(row[1]))

    def list_games(
        self,
        *,
        status: str | None = None,
        game: str | None = None,
        limit: int = 50,
        after: GameCursor | None = None,
        order: str = "oldest",
        ids: Sequence[UUID] | None = None,
    ) -> list[GameRow]:
        """Games oldest (or ``newest``) first, optionally filtered; keyset-paginated by
        (created_at, id): ``after`` lists the games past that cursor in the given order.

        ``ids``: only these games (a client's own games, from the seats it holds); private
        games are listed only this way (by id: whoever has the id may look at the game).

        Status: ``cancelled`` once ``game_cancelled`` is recorded, ``over`` once ``game_ended``
        is, ``playing`` once ``game_started`` is, else ``waiting``.
        """
        if status is not None and status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}")
        if order not in ORDERS:
            raise ValueError(f"order must be one of {ORDERS}")
        newest = order == "newest"
        # Only the filters in use go into the SQL, so the planner sees a plain keyset scan.
        where = [sql.SQL("true")]
        params: dict[str, Any] = {"limit": limit}
        if status is not None:
            where.append(sql.SQL("s.status = %(status)s"))
            params["status"] = status
        if game is not None:
            where.append(sql.SQL("g.game = %(game)s"))
            params["game"] = game
        if ids is not None:
            where.append(sql.SQL("g.id = ANY(%(ids)s)"))
            params["ids"] = list(ids)
        else:
            where.append(
                sql.SQL("NOT EXISTS (SELECT 1 FROM private_games p WHERE p.game_id = g.id)")
            )
        if after is not None:
            # Both directions are a keyset scan of games_created_at_id (backwards for newest).
            past = "<" if newest else ">"
            where.append(sql.SQL(f"(g.created_at, g.id) {past} (%(after_at)s, %(after_id)s)"))
            params.update(after_at=after.created_at, after_id=after.id)
        order_by = "g.created_at DESC, g.id DESC" if newest else "g.created_at, g.id"
        query = sql.SQL(LIST_GAMES).format(
            where=sql.SQL(" AND ").join(where), order=sql.SQL(order_by)
        )
        with self._connection() as conn:
            rows = conn.execute(query, params).fetchall()
        return [GameRow(*row) for row in rows]

    def waiting_games(self, client: bytes, besides: UUID) -> int:
        """How many games other than ``besides`` that wait for players ``client`` holds a seat
        in (seats taken before migration 0009 have no client: they do not count)."""
        with self._connection() as conn:
            row = conn.execute(WAITING_GAMES, (client, besides)).fetchone()
        return int(row[0]) if row else 0

    def ping(self) -> None:
        """Raise :class:`StoreUnavailable` unless the database answers."""
        with self._connection() as conn:
            conn.execute("SELECT 1")

    def check_read_write(self) -> None:
        """Raise :class:`StoreUnavailable` (``read_only``) if the database takes no writes: a
        standby in recovery, or ``default_transaction_read_only`` on."""
        with self._connection() as conn:
            row = conn.execute(READ_ONLY).fetchone()
        if row is not None and row[0]:
            raise StoreUnavailable("the database is a standby in recovery", "read_only")
        if row is not None and row[1] == "on":
            raise StoreUnavailable("the database's transactions are read-only", "read_only")

    def check_writable(self) -> None:
        """Raise :class:`StoreUnavailable` unless the database commits, within the deadline, a
        write that needs new disk space (one row in a freshly emptied table) after taking the
        locks every append takes: a lock held on the game tables, a full disk, a read-only
        database, a lost privilege, a synchronous standby missing (at COMMIT) all fail it."""
        try:
            with self._connection() as conn, conn.transaction():
                conn.execute(PROBE_LOCKS)
                conn.execute(PROBE_EMPTY)
                conn.execute(PROBE_WRITE, (PROCESS,))
        except psycopg.Error as exc:  # e.g. InsufficientPrivilege
            raise unavailable(exc) from exc

    @staticmethod
    def _exists(conn: psycopg.Connection[Any], game_id: UUID) -> bool:
        return conn.execute("SELECT 1 FROM games WHERE id = %s", (game_id,)).fetchone() is not None
