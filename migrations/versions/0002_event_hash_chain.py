"""Tamper evidence: every event carries the hash chain of domain/chain.py.

Existing events are hashed in version order. They are append-only, so the rewrite lifts the
update guard for its own transaction only (ALTER TABLE takes an exclusive lock until commit:
no other session ever sees the guard down).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from domain.chain import GENESIS, event_hash

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("events", sa.Column("hash", sa.Text(), nullable=True))
    conn = op.get_bind()
    conn.execute(sa.text("ALTER TABLE events DISABLE TRIGGER events_no_update_delete"))
    rows = conn.execute(
        sa.text(
            "SELECT game_id, version, type, schema_version, data FROM events"
            " ORDER BY game_id, version"
        )
    )
    previous: dict[str, str] = {}
    for game_id, version, type_, schema_version, data in rows.fetchall():
        digest = event_hash(
            previous.get(str(game_id), GENESIS), str(game_id), version, type_, schema_version, data
        )
        previous[str(game_id)] = digest
        conn.execute(
            sa.text("UPDATE events SET hash = :hash WHERE game_id = :game AND version = :version"),
            {"hash": digest, "game": game_id, "version": version},
        )
    conn.execute(sa.text("ALTER TABLE events ENABLE TRIGGER events_no_update_delete"))
    op.alter_column("events", "hash", nullable=False)
    op.create_check_constraint("events_hash_hex", "events", "hash ~ '^[0-9a-f]{64}$'")


def downgrade() -> None:
    op.execute("ALTER TABLE events DISABLE TRIGGER events_no_update_delete")
    op.drop_constraint("events_hash_hex", "events")
    op.drop_column("events", "hash")
    op.execute("ALTER TABLE events ENABLE TRIGGER events_no_update_delete")
