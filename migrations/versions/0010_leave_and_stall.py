"""Seats that can be left, games that never stall (issue 20, part B).

- ``seats.taken_at``: the version of the ``seat_taken`` event a token was issued with. A seat left
  before the start (``seat_left``) can be taken again, by a new token: a seat now has a row per
  holder, and a token acts only while its row is the seat's current holder's (the game's state
  says which: service/http/auth.py). Rows written before keep ``taken_at`` NULL (rows are facts,
  never rewritten): the seat's first holder. The primary key becomes a unique index of the same
  name (``seats_pkey``: two joins racing for one seat still conflict on it).
- ``turn_deadlines.kind``: ``turn`` (the turn clock, as before), ``stall`` (a started game's
  turn whose seat has not moved for ``CARDROOM_STALL_SECONDS``: the greedy bot takes the seat
  over) or ``fill`` (a waiting game whose seats have not filled in ``CARDROOM_FILL_SECONDS``: it
  is cancelled). Swept alike (service/live/clock.py).
- The lobby's lifecycle index also covers ``game_cancelled``.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-23
"""

from __future__ import annotations

from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """
ALTER TABLE seats ADD COLUMN taken_at int CHECK (taken_at >= 1);
ALTER TABLE seats DROP CONSTRAINT seats_pkey;
CREATE UNIQUE INDEX seats_pkey ON seats (game_id, seat, coalesce(taken_at, 0));
ALTER TABLE turn_deadlines ADD COLUMN kind text NOT NULL DEFAULT 'turn'
    CHECK (kind IN ('turn', 'stall', 'fill'));
DROP INDEX events_lifecycle;
CREATE INDEX events_lifecycle ON events (game_id, type)
    WHERE type IN ('game_started', 'game_ended', 'game_cancelled');
"""
    )


def downgrade() -> None:
    op.execute(
        """
DROP INDEX events_lifecycle;
CREATE INDEX events_lifecycle ON events (game_id, type)
    WHERE type IN ('game_started', 'game_ended');
ALTER TABLE turn_deadlines DROP COLUMN kind;
DROP INDEX seats_pkey;
ALTER TABLE seats DROP COLUMN taken_at;
ALTER TABLE seats ADD PRIMARY KEY (game_id, seat);
"""
    )
