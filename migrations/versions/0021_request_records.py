"""Kept answers of keyed requests that change no game (issue 35).

What a keyed request that changes no game answered (issue 35): ``POST /accounts``, a token
minted, a challenge offered or answered, a quick match that created its game.

The answer itself, sealed (AES-GCM under a key derived from the ``Idempotency-Key``, the client's
scope and its binding: it holds a token shown once), written in the transaction that made the
change, so that a retry gets it exactly when the change was committed. Expires like
``idempotency_keys`` (``CARDROOM_IDEMPOTENCY_TTL``); the service purges both.

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-28
"""

from __future__ import annotations

from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None

ROLE = "cardroom_app"


def upgrade() -> None:
    op.execute(
        f"""
CREATE TABLE request_records (
    scope         text NOT NULL,
    key           text NOT NULL CHECK (length(key) = 64),
    request_hash  bytea NOT NULL,
    status        int NOT NULL CHECK (status BETWEEN 200 AND 299),
    location      text,
    body          bytea NOT NULL,
    binding       bytea,
    created_at    timestamptz NOT NULL DEFAULT now(),
    expires_at    timestamptz NOT NULL,
    PRIMARY KEY (scope, key)
);
CREATE INDEX request_records_expires_at ON request_records (expires_at);
GRANT SELECT, INSERT, DELETE ON request_records TO {ROLE};
"""
    )


def downgrade() -> None:
    op.execute("DROP TABLE request_records")
