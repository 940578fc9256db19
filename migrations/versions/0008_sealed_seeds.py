"""Seeds sealed at rest: ``game_secrets.key_id`` names the key that sealed the ``seed``.

From here on ``seed`` holds ``nonce + AES-256-GCM(seed)`` under a key kept outside the database
(service/keys.py), and ``key_id`` that key's id; a row written before keeps its seed in clear with
``key_id`` NULL (rows are facts: they are never rewritten). A database reader, or a backup,
no longer reads the seeds of games in play.

Revision ID: 0008
Revises: 0006
Create Date: 2026-11-23
"""

from __future__ import annotations

from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("ALTER TABLE game_secrets ADD COLUMN key_id text")


def downgrade() -> None:
    op.execute("ALTER TABLE game_secrets DROP COLUMN key_id")
