"""The event store: every game's events in one append-only table (Message DB style).

psycopg 3, no ORM. Rows are only ever inserted: a game's state is the fold of its events, its
lobby status is derived from its lifecycle events, and concurrent writers are kept apart by the
(game_id, version) primary key (optimistic concurrency), not by locks.
"""

from __future__ import annotations

import base64
import hmac
import logging
import os
import socket
import threading
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any, NamedTuple
from uuid import UUID

import psycopg
from psycopg import errors, sql
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

from domain.chain import GENESIS, event_hash
from domain.decider import (
    FINAL_EVENTS,
    GAME_CANCELLED,
    GAME_ENDED,
    GAME_STARTED,
    SEAT_LEFT,
    Event,
)
from service import metrics
from service.store import budget, idempotency_records, invitations, rematches, signatures
from service.store.failures import StoreError, StoreUnavailable, unavailable
from service.store.idempotency_records import IdempotencyRecord
from service.store.recent import Recent

log = logging.getLogger(__name__)

STATUSES = ("waiting", "playing", "over", "cancelled")
# Orders of ``list_games``: by (created_at, id) ascending or descending.
ORDERS = ("oldest", "newest")

# Constraint names from migrations/versions/0001_initial.py that mean "someone appended first".
# (0005: a turn's deadline row is keyed by the version appended with it, so it races the same.)
_CONFLICT_CONSTRAINTS = {
    "events_pkey",
    "seats_pkey",
    "events_version_contiguous",
    "turn_deadlines_pkey",
}


class GameNotFound(StoreError):
    def __init__(self, game_id: UUID) -> None:
        super().__init__(f"no game {game_id}")
        self.game_id = game_id


class GameExists(StoreError):
    def __init__(self, game_id: UUID) -> None:
        super().__init__(f"game {game_id} already exists")
        self.game_id = game_id


class InvitationRevoked(StoreError):
    """The invitation a join presented is no longer the private game's invitation in force."""

    def __init__(self, game_id: UUID) -> None:
        super().__init__(f"the invitation of game {game_id} changed")
        self.game_id = game_id


class VersionConflict(StoreError):
    """The game is no longer at ``expected_version``: re-read it and decide again."""

    def __init__(self, game_id: UUID, expected_version: int) -> None:
        super().__init__(f"game {game_id} is no longer at version {expected_version}")
        self.game_id = game_id
        self.expected_version = expected_version


# The readiness probe commits a write that needs new disk space every time (migration 0011):
# TRUNCATE gives the table a new, empty file, and the row then needs a new page.
_PROBE_EMPTY = "TRUNCATE readiness_probe"
_PROBE_WRITE = "INSERT INTO readiness_probe (process) VALUES (%s)"
_PROCESS = f"{socket.gethostname()}:{os.getpid()}"
# What an append locks (the mode INSERT takes: appends never wait for each other on it, only
# for a lock someone took on a whole table).
_PROBE_LOCKS = "LOCK TABLE games, events, seats, turn_deadlines IN ROW EXCLUSIVE MODE"
# Which database this is: the cluster (pg_control), its history (timeline), the server's
# lifetime (a restart onto a copy of the files keeps the first two) and the database itself.
_IDENTITY = (
    "SELECT (SELECT system_identifier FROM pg_control_system()),"
    " (SELECT timeline_id FROM pg_control_checkpoint()),"
    " pg_postmaster_start_time(),"
    " (SELECT oid FROM pg_database WHERE datname = current_database())"
)
_READ_ONLY = "SELECT pg_is_in_recovery(), current_setting('default_transaction_read_only')"


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """An event as recorded: its place in its game (``version``) and in the store (``position``)."""

    version: int
    type: str
    schema_version: int
    data: Mapping[str, Any]
    recorded_at: datetime
    position: int
    hash: str  # the chain of domain/chain.py

    @property
    def event(self) -> Event:
        return Event(self.type, self.data, self.schema_version)


class GameCursor(NamedTuple):
    """Where a page of ``list_games`` ended; pass it as ``after`` to get the next page.

    A cursor is a position, not tied to an order: with either order, ``after`` lists the games
    that come after that position in the order asked for.
    """

    created_at: datetime
    id: UUID

    def encode(self) -> str:
        """An opaque, URL-safe token for APIs."""
        raw = f"{self.created_at.isoformat()}|{self.id}".encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    @classmethod
    def decode(cls, token: str) -> GameCursor:
        """Inverse of :meth:`encode`; raises ``ValueError`` for a malformed token."""
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
            created_at, game_id = raw.split("|")
            cursor = cls(datetime.fromisoformat(created_at), UUID(game_id))
        except (ValueError, UnicodeDecodeError) as exc:
            raise ValueError(f"malformed cursor {token!r}") from exc
        if cursor.created_at.tzinfo is None:
            raise ValueError(f"malformed cursor {token!r}")
        return cursor


@dataclass(frozen=True, slots=True)
class GameRow:
    id: UUID
    game: str
    created_at: datetime
    status: str
    version: int
    private: bool = False  # not listed unless asked for by id (migration 0009)

    @property
    def cursor(self) -> GameCursor:
        return GameCursor(self.created_at, self.id)


class SeatToken(NamedTuple):
    seat: int
    token_hash: bytes
    taken_at: int | None  # the version of the seat's seat_taken; None: written before 0010


_INSERT_EVENT = (
    "INSERT INTO events (game_id, version, type, schema_version, data, hash)"
    " VALUES (%s, %s, %s, %s, %s, %s)"
)

_APPEND = "INSERT INTO events (game_id, version, type, schema_version, data, hash) VALUES {values}"
_SEAT_ROW = (
    "seat AS (INSERT INTO seats (game_id, seat, token_hash, taken_at, client)"
    " VALUES (%s, %s, %s, %s, %s))"
)
# The database's clock, not the process's: every server process agrees on every deadline.
_DEADLINE_VALUES = "VALUES (%s, %s, now() + %s * interval '1 second', %s)"
_DEADLINE_INSERT = (
    "INSERT INTO turn_deadlines (game_id, version, deadline, kind) " + _DEADLINE_VALUES
)
_DEADLINE_ROW = f"deadline AS ({_DEADLINE_INSERT})"

# A deadline to write with an append: (the version it counts from, seconds, kind), kind one of
# ``turn`` (the turn clock), ``stall`` (a turn nobody moves in) or ``fill`` (a waiting game).
NewDeadline = tuple[int, int, str]

# Status is derived, never stored: the lifecycle events are the only source of truth.
_LIST_GAMES = f"""
SELECT g.id, g.game, g.created_at, s.status,
       (SELECT max(e.version) FROM events e WHERE e.game_id = g.id) AS version,
       EXISTS (SELECT 1 FROM private_games p WHERE p.game_id = g.id) AS private
FROM games g
CROSS JOIN LATERAL (
    SELECT CASE
        WHEN EXISTS (
            SELECT 1 FROM events e WHERE e.game_id = g.id AND e.type = '{GAME_CANCELLED}')
            THEN 'cancelled'
        WHEN EXISTS (SELECT 1 FROM events e WHERE e.game_id = g.id AND e.type = '{GAME_ENDED}')
            THEN 'over'
        WHEN EXISTS (SELECT 1 FROM events e WHERE e.game_id = g.id AND e.type = '{GAME_STARTED}')
            THEN 'playing'
        ELSE 'waiting'
    END AS status
) s
WHERE {{where}}
ORDER BY {{order}}
LIMIT %(limit)s
"""


# A game waits until it starts (or ends, which a started game does): the lifecycle index.
_WAITING_GAMES = f"""
SELECT count(DISTINCT s.game_id) FROM seats s
WHERE s.client = %s AND s.game_id <> %s AND NOT EXISTS (
    SELECT 1 FROM events e
    WHERE e.game_id = s.game_id
    AND e.type IN ('{GAME_STARTED}', '{GAME_ENDED}', '{GAME_CANCELLED}')
) AND NOT EXISTS (  -- a seat left since (issue 20: seat_left) is not held
    SELECT 1 FROM events l
    WHERE l.game_id = s.game_id AND l.type = '{SEAT_LEFT}'
    AND (l.data->>'seat')::int = s.seat AND l.version > s.taken_at
)
"""


@lru_cache(maxsize=128)
def _append_query(
    rows: int,
    seat: bool,
    deadline: bool,
    record: bool,
    rematch_seat: bool = False,
    signature: bool = False,
) -> str:
    """The statement of an ``append`` of that shape: built once, not composed per append.
    Its parameters: the seat row's, the deadline row's, the record's, the rematch seat's,
    the signature's (those given, in that order), then each event row's."""
    append = _APPEND.format(values=", ".join(["(%s, %s, %s, %s, %s, %s)"] * rows))
    with_rows = [
        row
        for row, wanted in (
            (_SEAT_ROW, seat),
            (_DEADLINE_ROW, deadline),
            (idempotency_records.ROW, record),
            (rematches.SEAT_ROW, rematch_seat),
            (signatures.ROW, signature),
        )
        if wanted
    ]
    return f"WITH {', '.join(with_rows)} {append}" if with_rows else append


def _rows(
    game_id: UUID, first_version: int, previous_hash: str, events: Sequence[Event]
) -> list[tuple[Any, ...]]:
    """The rows to insert, each with its link of the hash chain (domain/chain.py)."""
    rows = []
    for version, event in enumerate(events, start=first_version):
        data = dict(event.data)
        previous_hash = event_hash(
            previous_hash, str(game_id), version, event.type, event.schema_version, data
        )
        rows.append(
            (game_id, version, event.type, event.schema_version, Jsonb(data), previous_hash)
        )
    return rows


class EventStore:
    """All reads and writes of games. Thread-safe: each call takes its own pooled connection."""

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
        identity = tuple(conn.execute(_IDENTITY).fetchone() or ())
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

    # --- writes ---------------------------------------------------------------------------

    def create_game(
        self,
        game_id: UUID,
        game: str,
        seed: bytes,
        events: Sequence[Event],
        record: IdempotencyRecord | None = None,
        seed_key_id: str | None = None,
        private: tuple[bytes, bytes] | None = None,
        deadline: NewDeadline | None = None,
        rematch_of: tuple[UUID, int] | None = None,
    ) -> int:
        """Record a new game, its secret seed (sealed under key ``seed_key_id``, see
        service/keys.py) and its first events (and the idempotency ``record`` of the keyed
        request that creates it, and the ``deadline`` its seats must fill by, in the same
        transaction); return its version. ``private``: the hashes of its creator's token and of
        its first invitation, for a private game. ``rematch_of``: the finished game (and its
        seat that proposed it) this game is the rematch of; :class:`RematchExists` if that
        game has one already (nothing is written then)."""
        if not events:
            raise ValueError("a game starts with at least one event")
        try:
            with self._connection() as conn, conn.transaction(), conn.cursor() as cur:
                cur.execute("INSERT INTO games (id, game) VALUES (%s, %s)", (game_id, game))
                cur.execute(
                    "INSERT INTO game_secrets (game_id, seed, key_id) VALUES (%s, %s, %s)",
                    (game_id, seed, seed_key_id),
                )
                if private is not None:
                    invitations.insert_private(cur, game_id, *private)
                rows = _rows(game_id, 1, GENESIS, events)
                cur.executemany(_INSERT_EVENT, rows)
                if deadline is not None:
                    cur.execute(_DEADLINE_INSERT, (game_id, *deadline))
                if record is not None:
                    cur.execute(idempotency_records.INSERT, record.params(game_id, len(rows)))
                if rematch_of is not None:
                    rematches.insert(cur, rematch_of[0], game_id, rematch_of[1])
                signature = self._final_signature(game_id, rows, events)
                if signature is not None:
                    cur.execute(signatures.INSERT, signature)
        except errors.UniqueViolation as exc:
            if exc.diag.constraint_name == "games_pkey":
                raise GameExists(game_id) from exc
            if rematch_of is not None and exc.diag.constraint_name == rematches.CONSTRAINT:
                raise rematches.RematchExists(rematch_of[0]) from exc
            raise
        self._remember_head(game_id, len(rows), rows[-1][-1])
        return len(events)

    def append(
        self,
        game_id: UUID,
        expected_version: int,
        events: Sequence[Event],
        *,
        seat_token: tuple[int, bytes, int] | None = None,
        client: bytes | None = None,
        deadline: NewDeadline | None = None,
        record: IdempotencyRecord | None = None,
        invitation: bytes | None = None,
        rematch_seat: tuple[UUID, int, int] | None = None,
    ) -> int:
        """Append ``events`` as versions ``expected_version + 1 ..``; return the new version.

        All or nothing, in one transaction, together with the optional ``(seat, token_hash,
        taken_at)`` row (``taken_at``: the version of its ``seat_taken``; with the ``client``
        taking the seat: ``Keyring.client_hash``), the optional
        ``(version, seconds, kind)`` of a turn the events start (a turn_deadlines row, due
        ``seconds`` from now) and the optional idempotency ``record`` of
        the keyed request that appends (service/store/idempotency_records.py). Raises
        :class:`VersionConflict` if the game is not at ``expected_version`` (someone else appended
        first),
        :class:`GameNotFound` if there is no such game. ``invitation``: a join into a private
        game, the hash of the invitation it presented; the events are appended only if it is
        still the invitation in force (else :class:`InvitationRevoked`), checked under the lock
        a change of the invitation takes (service/store/invitations.py). ``rematch_seat``: a
        join into a rematch, ``(finished game, its seat, the new seat)``;
        :class:`RematchSeatTaken` if that seat has its seat in the rematch already.
        """
        if not events:
            raise ValueError("nothing to append")
        generation = self.generation
        previous = self.hash_at(game_id, expected_version)
        rows = _rows(game_id, expected_version + 1, previous, events)
        signature = self._final_signature(game_id, rows, events)
        query = _append_query(
            len(rows),
            seat_token is not None,
            deadline is not None,
            record is not None,
            rematch_seat is not None,
            signature is not None,
        )
        params: list[Any] = []
        if seat_token is not None:
            params += [game_id, *seat_token, client]
        if deadline is not None:
            params += [game_id, *deadline]
        if record is not None:
            params += record.params(game_id, expected_version + len(rows))
        if rematch_seat is not None:
            params += rematch_seat
        if signature is not None:
            params += signature
        params += [value for row in rows for value in row]
        # One statement, hence atomic even in autocommit, in one round trip.
        metrics.APPENDS.inc()
        try:
            with self._connection() as conn:
                if self.generation != generation:  # the hash linked to may be of another
                    raise VersionConflict(game_id, expected_version)  # database: decide again
                if invitation is None:
                    conn.execute(query, params)
                else:
                    self._append_invited(conn, game_id, invitation, query, params)
        except (errors.UniqueViolation, errors.CheckViolation) as exc:
            if exc.diag.constraint_name in _CONFLICT_CONSTRAINTS:
                metrics.APPEND_CONFLICTS.inc()
                raise VersionConflict(game_id, expected_version) from exc
            if rematch_seat is not None and exc.diag.constraint_name == rematches.SEAT_CONSTRAINT:
                raise rematches.RematchSeatTaken(*rematch_seat[:2]) from exc
            raise
        except errors.ForeignKeyViolation as exc:
            raise GameNotFound(game_id) from exc
        self._remember_head(game_id, expected_version + len(rows), rows[-1][-1])
        metrics.EVENTS_APPENDED.inc(len(events))
        metrics.count_seat_changes(events)
        return expected_version + len(events)

    def _final_signature(
        self, game_id: UUID, rows: Sequence[tuple[Any, ...]], events: Sequence[Event]
    ) -> list[Any] | None:
        """The signature row's values when ``events`` finish the game (service/store/
        signatures.py); None when they do not, or without a signer."""
        if self.signer is None or events[-1].type not in FINAL_EVENTS:
            return None
        version, digest = rows[-1][1], rows[-1][-1]
        return signatures.row(self.signer, game_id, version, digest, events[-1].data)

    @staticmethod
    def _append_invited(
        conn: psycopg.Connection[Any], game_id: UUID, invitation: bytes, query: Any, params: Any
    ) -> None:
        """The append of a join into a private game: three statements in one transaction,
        the invitation checked after any change of it in flight has committed."""
        with conn.transaction(), conn.cursor() as cur:
            cur.execute(invitations.LOCK_SHARED, invitations.lock_key(game_id))
            in_force = invitations.in_force(cur, game_id)
            if in_force is None or not hmac.compare_digest(in_force, invitation):
                raise InvitationRevoked(game_id)
            cur.execute(query, params)

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
        query = sql.SQL(_LIST_GAMES).format(
            where=sql.SQL(" AND ").join(where), order=sql.SQL(order_by)
        )
        with self._connection() as conn:
            rows = conn.execute(query, params).fetchall()
        return [GameRow(*row) for row in rows]

    def waiting_games(self, client: bytes, besides: UUID) -> int:
        """How many games other than ``besides`` that wait for players ``client`` holds a seat
        in (seats taken before migration 0009 have no client: they do not count)."""
        with self._connection() as conn:
            row = conn.execute(_WAITING_GAMES, (client, besides)).fetchone()
        return int(row[0]) if row else 0

    def ping(self) -> None:
        """Raise :class:`StoreUnavailable` unless the database answers."""
        with self._connection() as conn:
            conn.execute("SELECT 1")

    def check_read_write(self) -> None:
        """Raise :class:`StoreUnavailable` (``read_only``) if the database takes no writes: a
        standby in recovery, or ``default_transaction_read_only`` on."""
        with self._connection() as conn:
            row = conn.execute(_READ_ONLY).fetchone()
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
                conn.execute(_PROBE_LOCKS)
                conn.execute(_PROBE_EMPTY)
                conn.execute(_PROBE_WRITE, (_PROCESS,))
        except psycopg.Error as exc:  # e.g. InsufficientPrivilege
            raise unavailable(exc) from exc

    @staticmethod
    def _exists(conn: psycopg.Connection[Any], game_id: UUID) -> bool:
        return conn.execute("SELECT 1 FROM games WHERE id = %s", (game_id,)).fetchone() is not None
