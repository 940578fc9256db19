"""Reads of the deadlines' table, ``turn_deadlines`` (migrations 0005, 0010), and the per-game
lock sweepers take. Rows are written only by ``EventStore.create_game`` and ``append``, with the
events they count from: a game's latest row is the deadline of where it is now. Its ``kind``:

- ``fill``: a waiting game's seats must fill by then (``CARDROOM_FILL_SECONDS`` after creation),
  else it is cancelled;
- ``turn``: a timed turn's clock (``turn_seconds``): the clock moves for seats that have not;
- ``stall``: a turn nobody moved in for ``CARDROOM_STALL_SECONDS`` (of a game without a clock, or
  whose clock is longer): the greedy bot takes over the seats it waits for.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any, NamedTuple
from uuid import UUID

import psycopg
from psycopg_pool import ConnectionPool

from domain.decider import GAME_CANCELLED, GAME_ENDED
from service.store import budget

# The first key of the sweepers' advisory locks (the second is derived from the game id), so
# that they never collide with another use of advisory locks: "clk" in ASCII.
LOCK_SPACE = 0x636C6B

# Expired: past its deadline, no later turn (no later row), the game not over. ``recent`` bounds
# the scan by deadline (the index), since rows are never deleted; a full scan finds the rest.
_EXPIRED = f"""
SELECT d.game_id, d.version, d.kind, coalesce(%(now)s::timestamptz, now()) FROM turn_deadlines d
WHERE d.deadline < coalesce(%(now)s::timestamptz, now())
  AND (%(recent)s::interval IS NULL OR d.deadline >= now() - %(recent)s::interval)
  AND (%(games)s::uuid[] IS NULL OR d.game_id = ANY(%(games)s::uuid[]))
  AND NOT EXISTS (
      SELECT 1 FROM turn_deadlines l WHERE l.game_id = d.game_id AND l.version > d.version)
  AND NOT EXISTS (
      SELECT 1 FROM events e
      WHERE e.game_id = d.game_id AND e.type IN ('{GAME_ENDED}', '{GAME_CANCELLED}'))
ORDER BY d.deadline
LIMIT %(limit)s
"""


class Deadline(NamedTuple):
    version: int  # the event that started the turn (or created the game: ``fill``)
    deadline: datetime
    kind: str = "turn"  # ``turn``, ``stall`` or ``fill`` (see the module's docstring)


class Expired(NamedTuple):
    game_id: UUID
    version: int
    kind: str
    now: datetime  # the time it was judged by


class Deadlines:
    def __init__(self, pool: ConnectionPool, watchdog: budget.Watchdog | None = None) -> None:
        self.pool = pool
        self.watchdog = watchdog or budget.Watchdog(lambda: str(pool.conninfo))

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        with budget.session(self.pool, self.watchdog) as conn:
            yield conn

    def latest(self, game_id: UUID, at_most: int | None = None) -> Deadline | None:
        """The game's latest deadline row (of a version up to ``at_most``), if any."""
        with self._connection() as conn:
            row = conn.execute(
                "SELECT version, deadline, kind FROM turn_deadlines WHERE game_id = %s"
                " AND version <= %s ORDER BY version DESC LIMIT 1",
                (game_id, 2**31 - 1 if at_most is None else at_most),
            ).fetchone()
        return None if row is None else Deadline(row[0], row[1], row[2])

    def expired(
        self,
        now: datetime | None,
        recent: timedelta | None,
        games: Collection[UUID] | None = None,
        limit: int = 100,
    ) -> list[Expired]:
        """Expired rows (game, version of its row, kind, the time judged by), the longest
        overdue first. ``now`` None: the database's clock."""
        params = {
            "now": now,
            "recent": recent,
            "games": None if games is None else list(games),
            "limit": limit,
        }
        with self._connection() as conn:
            return [Expired(*r) for r in conn.execute(_EXPIRED, params).fetchall()]

    @contextmanager
    def locked(self, game_id: UUID) -> Iterator[bool]:
        """Try the game's sweeper lock, held until the block ends; yields whether it was got.
        A transaction-level lock: it cannot outlive the block, even if the process dies."""
        key = int.from_bytes(game_id.bytes[:4], "big", signed=True)
        with self._connection() as conn, conn.transaction():
            row = conn.execute("SELECT pg_try_advisory_xact_lock(%s, %s)", (LOCK_SPACE, key))
            got = row.fetchone()
            yield bool(got and got[0])
