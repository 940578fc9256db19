"""Idempotency keys become receipts written with the events, and a cache that expires.

Each row says what a keyed request did: the game it changed and that game's version after the
request's append (and, for a join, the seat's token sealed under the key). It is inserted in the
same statement (or transaction) as the request's events, so a request that took effect always has
its row and a request that did not never has one; the answer is rebuilt from it on a retry
(service/http/idempotency.py). Rows expire (``expires_at``) and the service deletes them itself:
the app role may now DELETE here, and the append-only triggers of 0004 are gone (keys are not
facts: the events are).

The old rows stored whole answers, written after the fact on another connection: they are dropped
(at worst a retry within a day of the upgrade runs again, as it would have after a crash).

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-23
"""

from __future__ import annotations

from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

ROLE = "cardroom_app"


def upgrade() -> None:
    op.execute(
        f"""
DROP TABLE idempotency_keys;
CREATE TABLE idempotency_keys (
    scope         text NOT NULL,
    key           text NOT NULL CHECK (length(key) = 64),
    request_hash  bytea NOT NULL,
    game_id       uuid NOT NULL,
    version       int NOT NULL CHECK (version > 0),
    secret        bytea,
    created_at    timestamptz NOT NULL DEFAULT now(),
    expires_at    timestamptz NOT NULL,
    PRIMARY KEY (scope, key)
);
CREATE INDEX idempotency_keys_expires_at ON idempotency_keys (expires_at);
GRANT SELECT, INSERT, DELETE ON idempotency_keys TO {ROLE};
"""
    )


def downgrade() -> None:
    op.execute(
        f"""
DROP TABLE idempotency_keys;
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
GRANT SELECT, INSERT ON idempotency_keys TO {ROLE};
"""
    )
