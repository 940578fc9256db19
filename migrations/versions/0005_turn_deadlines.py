"""Turn clock: each timed turn's deadline, kept in PostgreSQL.

Turn clock: when each timed turn must be over, kept in PostgreSQL (not in a process's memory)
so that any server process, including one started after a crash, can enforce it.

A row is written with the events that start a timed turn: ``version`` is the event that started
it. Rows are facts: never changed (a later turn simply has a later row).

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-22
"""

from __future__ import annotations

from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """
CREATE TABLE turn_deadlines (
    game_id   uuid NOT NULL REFERENCES games (id),
    version   int NOT NULL CHECK (version >= 1),
    deadline  timestamptz NOT NULL,
    PRIMARY KEY (game_id, version)
);
CREATE INDEX turn_deadlines_deadline ON turn_deadlines (deadline);
CREATE TRIGGER turn_deadlines_no_update_delete BEFORE UPDATE OR DELETE ON turn_deadlines
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER turn_deadlines_no_truncate BEFORE TRUNCATE ON turn_deadlines
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();
"""
    )


def downgrade() -> None:
    op.execute("DROP TABLE turn_deadlines;")
