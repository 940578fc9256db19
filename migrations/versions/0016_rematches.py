"""Rematches (issue 29): a finished game's one rematch, and which of its seats took a seat in it.

- ``rematches``: at most one row per finished game (the primary key: several hosts asking at
  once cannot create two rematches; the loser's new game rolls back with its row). It names the
  new game and the seat that proposed it. No foreign key to the new game: it is another game's
  row (docs/scaling.md: every key of a game table is its own game's).
- ``rematch_seats``: the finished game's seats that took their seat in the rematch, one row
  each (the primary key: a seat asking twice at once gets one seat), written with the join.

An insert into ``rematches`` notifies ``cardroom_events`` with ``"<game_id> rematch"``: streams
of the finished game wake and announce it (service/live/hub.py). Rows are facts, written once.

Revision ID: 0016
Revises: 0011
Create Date: 2026-11-27
"""

from __future__ import annotations

from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None

ROLE = "cardroom_app"
CHANNEL = "cardroom_events"
APPEND_ONLY = ("rematches", "rematch_seats")

UPGRADE = f"""
CREATE TABLE rematches (
    game_id      uuid PRIMARY KEY REFERENCES games (id),
    rematch_id   uuid NOT NULL,
    proposed_by  int NOT NULL CHECK (proposed_by >= 0),
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE rematch_seats (
    game_id   uuid NOT NULL REFERENCES rematches (game_id),
    seat      int NOT NULL CHECK (seat >= 0),
    new_seat  int NOT NULL CHECK (new_seat >= 0),
    PRIMARY KEY (game_id, seat)
);
GRANT SELECT, INSERT ON rematches, rematch_seats TO {ROLE};
CREATE FUNCTION notify_rematch() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('{CHANNEL}', NEW.game_id::text || ' rematch');
    RETURN NULL;
END;
$$;
CREATE TRIGGER rematches_notify AFTER INSERT ON rematches
    FOR EACH ROW EXECUTE FUNCTION notify_rematch();
"""

PROTECT = """
CREATE TRIGGER {table}_no_update_delete BEFORE UPDATE OR DELETE ON {table}
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table}
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();
"""


def upgrade() -> None:
    op.execute(UPGRADE)
    for table in APPEND_ONLY:
        op.execute(PROTECT.format(table=table))


def downgrade() -> None:
    op.execute("DROP TABLE rematch_seats, rematches; DROP FUNCTION notify_rematch();")
