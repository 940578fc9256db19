"""A finished game's rematch (migration 0016): one row per finished game, written in the
transaction that creates the new game, and one row per seat of the finished game that took its
seat in it, written in the statement that appends that seat's ``seat_taken``.

The primary keys decide the races, on any number of hosts: two seats proposing at once create
one rematch (the second creation rolls back whole, new game included, and joins the first's),
and one seat asking twice at once gets one seat.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, NamedTuple
from uuid import UUID

import psycopg

from service.store.connections import Connections

# The CTE an append's statement carries for a rematch seat (service/store/events.py).
SEAT_ROW = (
    "rematch_seat AS (INSERT INTO rematch_seats (game_id, seat, new_seat) VALUES (%s, %s, %s))"
)
SEAT_CONSTRAINT = "rematch_seats_pkey"
CONSTRAINT = "rematches_pkey"


class Rematch(NamedTuple):
    game_id: UUID  # the finished game
    rematch_id: UUID  # the new game
    proposed_by: int  # the finished game's seat that asked first
    created_at: datetime


class RematchExists(Exception):
    """The finished game has its rematch already (another request created it first)."""

    def __init__(self, game_id: UUID) -> None:
        super().__init__(f"game {game_id} has a rematch already")
        self.game_id = game_id


class RematchSeatTaken(Exception):
    """This seat of the finished game has its seat in the rematch already."""

    def __init__(self, game_id: UUID, seat: int) -> None:
        super().__init__(f"seat {seat} of game {game_id} has a seat in its rematch already")
        self.game_id = game_id
        self.seat = seat


def insert(cur: psycopg.Cursor[Any], game_id: UUID, rematch_id: UUID, proposed_by: int) -> None:
    """The rematch's row, in the transaction that creates ``rematch_id``."""
    cur.execute(
        "INSERT INTO rematches (game_id, rematch_id, proposed_by) VALUES (%s, %s, %s)",
        (game_id, rematch_id, proposed_by),
    )


class Rematches:
    """Reads of rematches. Thread-safe."""

    def __init__(self, store: Connections) -> None:
        self.store = store

    def of(self, game_id: UUID) -> Rematch | None:
        """The finished game's rematch, if one was proposed."""
        with self.store.connection() as conn:
            row = conn.execute(
                "SELECT game_id, rematch_id, proposed_by, created_at FROM rematches"
                " WHERE game_id = %s",
                (game_id,),
            ).fetchone()
        return None if row is None else Rematch(row[0], row[1], int(row[2]), row[3])

    def seats(self, game_id: UUID) -> dict[int, int]:
        """The finished game's seats that sat down in its rematch, each with its new seat."""
        with self.store.connection() as conn:
            rows = conn.execute(
                "SELECT seat, new_seat FROM rematch_seats WHERE game_id = %s", (game_id,)
            ).fetchall()
        return {int(seat): int(new) for seat, new in rows}
