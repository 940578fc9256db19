"""Idempotency-Key: the first response to each (client, key), replayed to retries.

``scope`` is who sent it: the SHA-256 of the bearer token in hex, or ``anonymous``. Rows are
facts like events: written once, never changed (the same guard refuses UPDATE and DELETE).

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22
"""

from __future__ import annotations

from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """
CREATE TABLE idempotency_keys (
    scope         text NOT NULL,
    key           text NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
    method        text NOT NULL,
    path          text NOT NULL,
    request_hash  bytea NOT NULL,
    status        int NOT NULL,
    headers       jsonb NOT NULL,
    body          bytea NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (scope, key)
);
CREATE TRIGGER idempotency_keys_no_update_delete BEFORE UPDATE OR DELETE ON idempotency_keys
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER idempotency_keys_no_truncate BEFORE TRUNCATE ON idempotency_keys
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();
"""
    )


def downgrade() -> None:
    op.execute("DROP TABLE idempotency_keys;")
