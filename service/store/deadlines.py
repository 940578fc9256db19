"""Reads of the turn clock's table, ``turn_deadlines`` (migration 0005), and the per-game lock
sweepers take. Rows are written only by ``EventStore.append``, in the statement that appends the
events starting a timed turn: a game's latest row is the deadline of its current turn.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any, NamedTuple
from uuid import UUID

import psycopg
from psycopg_pool import ConnectionPool

from domain.decider import GAME_ENDED
from service.store.events import StoreUnavailable

# The first key of the sweepers' advisory locks (the second is derived from the game id), so
# that they never collide with another use of advisory locks: "clk" in ASCII.
LOCK_SPACE = 0x636C6B

# Expired: past its deadline, no later turn (no later row), the game not over. ``recent`` bounds
# the scan by deadline (the index), since rows are never deleted; a full scan finds the rest.
_EXPIRED = f"""
SELECT d.game_id, d.version FROM turn_deadlines d
WHERE d.deadline < coalesce(%(now)s::timestamptz, now())
  AND (%(recent)s::interval IS NULL OR d.deadline >= now() - %(recent)s::interval)
  AND (%(games)s::uuid[] IS NULL OR d.game_id = ANY(%(games)s::uuid[]))
  AND NOT EXISTS (
      SELECT 1 FROM turn_deadlines l WHERE l.game_id = d.game_id AND l.version > d.version)
  AND NOT EXISTS (
      SELECT 1 FROM events e WHERE e.game_id = d.game_id AND e.type = '{GAME_ENDED}')
ORDER BY d.deadline
LIMIT %(limit)s
"""


class Deadline(NamedTuple):
    version: int  # the event that started the turn
    deadline: datetime


class Deadlines:
    def __init__(self, pool: ConnectionPool) -> None:
        self.pool = pool

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        try:
            with self.pool.connection() as conn:
                yield conn
        except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
            raise StoreUnavailable(str(exc)) from exc

    def latest(self, game_id: UUID, at_most: int | None = None) -> Deadline | None:
        """The game's latest deadline row (of a version up to ``at_most``), if any."""
        with self._connection() as conn:
            row = conn.execute(
                "SELECT version, deadline FROM turn_deadlines WHERE game_id = %s"
                " AND version <= %s ORDER BY version DESC LIMIT 1",
                (game_id, 2**31 - 1 if at_most is None else at_most),
            ).fetchone()
        return None if row is None else Deadline(row[0], row[1])

    def expired(
        self,
        now: datetime | None,
        recent: timedelta | None,
        games: Collection[UUID] | None = None,
        limit: int = 100,
    ) -> list[tuple[UUID, int]]:
        """(game, version of its turn's row) of expired turns, the longest overdue first.
        ``now`` None: the database's clock."""
        params = {
            "now": now,
            "recent": recent,
            "games": None if games is None else list(games),
            "limit": limit,
        }
        with self._connection() as conn:
            return [(r[0], r[1]) for r in conn.execute(_EXPIRED, params).fetchall()]

    @contextmanager
    def locked(self, game_id: UUID) -> Iterator[bool]:
        """Try the game's sweeper lock, held until the block ends; yields whether it was got.
        A transaction-level lock: it cannot outlive the block, even if the process dies."""
        key = int.from_bytes(game_id.bytes[:4], "big", signed=True)
        with self._connection() as conn, conn.transaction():
            row = conn.execute("SELECT pg_try_advisory_xact_lock(%s, %s)", (LOCK_SPACE, key))
            got = row.fetchone()
            yield bool(got and got[0])
