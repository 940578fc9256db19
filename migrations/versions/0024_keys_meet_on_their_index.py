"""Copies of a keyed request meet on their key's unique index.

Copies of a keyed request meet on their key: ``idempotency_keys (scope, key)`` becomes a
unique index (a plain one since migration 0015).

Until now every keyed request took an advisory lock on (scope, key) on a connection of its own
and looked its key up under it before it wrote (service/http/idempotency.py): that kept the
pair unique in practice. Now the record goes in with the request's change and nothing is taken
before: a copy sent at the same time waits on this index for the first one's transaction (as
PostgreSQL makes a second insert of a key wait for the first), then fails on it and replays the
first answer, or goes on if the first rolled back. The primary key (game_id, scope, key) stays,
for a distributed PostgreSQL (docs/scaling.md: this index is its one exception).

Revision ID: 0024
Revises: 0023
Create Date: 2026-11-29
"""

from __future__ import annotations

from alembic import op

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """
-- A key reused after its record expired, before the purge took that record, has two rows:
-- keep the one that expires last (the others are expired cache entries, which the service
-- deletes anyway), or the unique index cannot be built.
DELETE FROM idempotency_keys a USING idempotency_keys b
 WHERE a.scope = b.scope AND a.key = b.key
   AND (a.expires_at, a.game_id) < (b.expires_at, b.game_id);
DROP INDEX idempotency_keys_scope_key;
CREATE UNIQUE INDEX idempotency_keys_scope_key ON idempotency_keys (scope, key);
"""
    )


def downgrade() -> None:
    op.execute(
        """
DROP INDEX idempotency_keys_scope_key;
CREATE INDEX idempotency_keys_scope_key ON idempotency_keys (scope, key);
"""
    )
