"""The event store: every game's events in one append-only table (Message DB style).

psycopg 3, no ORM. Rows are only ever inserted: a game's state is the fold of its events, its
lobby status is derived from its lifecycle events, and concurrent writers are kept apart by the
(game_id, version) primary key (optimistic concurrency), not by locks.

By what it holds: events.py (``EventStore``: the writes), event_reads.py (its connections and
reads), event_sql.py (the SQL), event_types.py (the rows it returns and the errors it raises).
Import them from here.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable, Sequence
from typing import Any
from uuid import UUID

import psycopg
from psycopg import errors

from domain.chain import GENESIS
from domain.decider import FINAL_EVENTS, Event
from service import metrics
from service.store import (
    account_feed,
    accounts,
    idempotency_records,
    invitations,
    ratings,
    rematches,
    signatures,
)
from service.store.event_reads import EventReads
from service.store.event_sql import (
    CONFLICT_CONSTRAINTS,
    DEADLINE_INSERT,
    INSERT_EVENT,
    SEAT_INSERT,
    append_query,
    event_rows,
)
from service.store.event_types import (
    ORDERS,
    STATUSES,
    CorruptEvent,
    GameCursor,
    GameExists,
    GameNotFound,
    GameRow,
    InvitationRevoked,
    NewDeadline,
    SeatToken,
    StoredEvent,
    VersionConflict,
)
from service.store.failures import KeyTaken, StoreError, StoreUnavailable
from service.store.idempotency_records import IdempotencyRecord

__all__ = [
    "EventStore",
    "GameCursor",
    "CorruptEvent",
    "GameExists",
    "GameNotFound",
    "GameRow",
    "InvitationRevoked",
    "KeyTaken",
    "NewDeadline",
    "ORDERS",
    "STATUSES",
    "SeatToken",
    "StoreError",
    "StoreUnavailable",
    "StoredEvent",
    "VersionConflict",
]


class EventStore(EventReads):
    """All reads and writes of games. Thread-safe: each call takes its own pooled connection."""

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
        seats: Sequence[tuple[int, bytes, int, bytes | None]] = (),
        along: Callable[[psycopg.Cursor[Any]], None] | None = None,
        feed: Sequence[account_feed.Item] = (),
    ) -> int:
        """Record a new game, its secret seed (sealed under key ``seed_key_id``, see
        service/keys.py) and its first events (and the idempotency ``record`` of the keyed
        request that creates it, and the ``deadline`` its seats must fill by, in the same
        transaction); return its version. ``private``: the hashes of its creator's token and of
        its first invitation, for a private game. ``rematch_of``: the finished game (and its
        seat that proposed it) this game is the rematch of; :class:`RematchExists` if that
        game has one already (nothing is written then). ``seats``: the ``(seat, token_hash,
        taken_at, client)`` rows of seats the events take for people (a game created with its
        players seated: challenges, quick match). ``along``: more writes of the caller, run in
        the same transaction after the game's rows; whatever it raises undoes the game too."""
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
                rows = event_rows(game_id, 1, GENESIS, events)
                cur.executemany(INSERT_EVENT, rows)
                if deadline is not None:
                    cur.execute(DEADLINE_INSERT, (game_id, *deadline))
                if record is not None:
                    cur.execute(idempotency_records.INSERT, record.params(game_id, len(rows)))
                if rematch_of is not None:
                    rematches.insert(cur, rematch_of[0], game_id, rematch_of[1])
                accounts.insert_seats(cur, accounts.seat_rows(game_id, 1, events))
                if seats:
                    cur.executemany(SEAT_INSERT, [(game_id, *seat) for seat in seats])
                if along is not None:
                    along(cur)
                account_feed.insert(cur, feed)  # its seats' accounts', the finished game's
                signature = self._final_signature(game_id, rows, events)
                if signature is not None:
                    cur.execute(signatures.INSERT, signature)
        except errors.UniqueViolation as exc:
            if exc.diag.constraint_name in idempotency_records.CONSTRAINTS:
                raise KeyTaken(str(exc)) from exc  # another send of the request committed
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
        feed: Sequence[account_feed.Item] = (),
        rated: ratings.RatedFinish | None = None,
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
        :class:`GameNotFound` if there is no such game, :class:`KeyTaken` if the ``record``'s
        key has one already (another send of the request committed). ``invitation``: a join
        into a private game, the hash of the invitation it presented; the events are appended
        only if it is still the invitation in force (else :class:`InvitationRevoked`), checked
        under the lock a change of the invitation takes (service/store/invitations.py).
        ``rematch_seat``: a join into a rematch, ``(finished game, its seat, the new seat)``;
        :class:`RematchSeatTaken` if that seat has its seat in the rematch already. ``feed``:
        what the events tell the accounts in the game (service/play/feed.py). ``rated``: the
        events end a rated game (the state they lead to): it is rated in the same transaction,
        under its pool's lock (service/store/ratings.py).
        """
        if not events:
            raise ValueError("nothing to append")
        generation = self.generation
        previous = self.hash_at(game_id, expected_version)
        rows = event_rows(game_id, expected_version + 1, previous, events)
        signature = self._final_signature(game_id, rows, events)
        seated = accounts.seat_rows(game_id, expected_version + 1, events)
        query = append_query(
            len(rows),
            seat_token is not None,
            deadline is not None,
            record is not None,
            rematch_seat is not None,
            signature is not None,
            len(seated),
            len(feed),
            rated is not None,
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
        params += [value for row in seated for value in row]
        params += account_feed.params(feed)
        if rated is None:
            params += [value for row in rows for value in row]
        # One statement, hence atomic even in autocommit, in one round trip.
        metrics.APPENDS.inc()
        try:
            with self._connection() as conn:
                if self.generation != generation:  # the hash linked to may be of another
                    raise VersionConflict(game_id, expected_version)  # database: decide again
                if rated is not None:  # a transaction: the pool's lock, the events, the ratings
                    before = None if invitation is None else self._invited(game_id, invitation)
                    ratings.append(conn, game_id, rated, query, params, rows, before)
                elif invitation is None:
                    conn.execute(query, params)
                else:
                    self._append_invited(conn, game_id, invitation, query, params)
        except (errors.UniqueViolation, errors.CheckViolation) as exc:
            if exc.diag.constraint_name in idempotency_records.CONSTRAINTS:
                raise KeyTaken(str(exc)) from exc  # another send of the request committed
            if exc.diag.constraint_name in CONFLICT_CONSTRAINTS:
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
    def _invited(game_id: UUID, invitation: bytes) -> Callable[[Any], None]:
        """The invitation check of :meth:`_append_invited`, for a transaction of the caller's."""

        def check(cur: Any) -> None:
            cur.execute(invitations.LOCK_SHARED, invitations.lock_key(game_id))
            in_force = invitations.in_force(cur, game_id)
            if in_force is None or not hmac.compare_digest(in_force, invitation):
                raise InvitationRevoked(game_id)

        return check

    @staticmethod
    def _append_invited(
        conn: psycopg.Connection[Any], game_id: UUID, invitation: bytes, query: Any, params: Any
    ) -> None:
        """The append of a join into a private game: three statements in one transaction,
        the invitation checked after any change of it in flight has committed."""
        with conn.transaction(), conn.cursor() as cur:
            EventStore._invited(game_id, invitation)(cur)
            cur.execute(query, params)
