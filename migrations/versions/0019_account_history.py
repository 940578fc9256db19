"""An account's history (issue 35, ``GET /accounts/{account_id}/games``): its key.

A history page lists an account's games in the order of their creation, keyset-paged on
``(created_at, game_id)`` (as the lobby is), a key that never changes: a game that starts or
finishes while a client walks the pages does not move. ``account_seats`` gains the game's
``created_at``, written in the same statement as the seat (service/store/accounts.py), and an
index ``(account_id, game_created_at, game_id)``: a page is a range scan of the account's own
rows however many games the service holds (a built-in bot sits in most of them). Everything
else a history item shows (status, times, final scores, result) is read from the game's
lifecycle events at query time (service/store/account_games.py), and whether a seat was left
before the start from ``seat_left`` events, through a partial index of them (``events_seat_left``:
a few rows, where a plain anti-join would scan the whole log).

Rows written before this revision are given their game's time once, here (the table refuses
updates; its trigger is lifted for that one statement).

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-29
"""

from __future__ import annotations

from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None

UPGRADE = """
ALTER TABLE account_seats ADD COLUMN game_created_at timestamptz;
ALTER TABLE account_seats DISABLE TRIGGER account_seats_no_update_delete;
UPDATE account_seats s SET game_created_at = g.created_at FROM games g WHERE g.id = s.game_id;
ALTER TABLE account_seats ENABLE TRIGGER account_seats_no_update_delete;
ALTER TABLE account_seats ALTER COLUMN game_created_at SET NOT NULL;
CREATE INDEX account_seats_history ON account_seats (account_id, game_created_at, game_id);
CREATE INDEX events_seat_left ON events (game_id, version) WHERE type = 'seat_left';
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(
        "DROP INDEX events_seat_left, account_seats_history;"
        " ALTER TABLE account_seats DROP COLUMN game_created_at"
    )
