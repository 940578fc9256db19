"""Replayed secrets bound to their client; a finished game's signature, made once and kept.

Both additive:

- ``idempotency_keys.binding``: an HMAC (keyed by the idempotency key) of what binds a keyed
  request to the client that sent it: its ``Idempotency-Secret`` header, else (without a bearer
  token) its address. A retry whose answer holds a secret (a seat's token, an invitation, a
  creator token) gets it only if it brings the same binding (service/http/idempotency.py). Rows
  written before hold NULL: a secret in such a row is replayed to no one without a token.
- ``game_signatures``: the service's receipt for a game's last event (its end or its
  cancellation), signed when that event is appended, in the same statement, with the signing
  key then active (``kid``). An export carries this one and the service never signs a finished
  game again: a finished game without its row is reported as tampered (domain/receipts.py).
  Append-only, like the events. Games finished before this revision have no row until
  ``cardroom sign-finished`` signs them (README, "What each kind of evidence proves").

Revision ID: 0014
Revises: 0011
Create Date: 2026-11-27
"""

from __future__ import annotations

from alembic import op

revision = "0014"
down_revision = "0012"
branch_labels = None
depends_on = None

ROLE = "cardroom_app"


def upgrade() -> None:
    op.execute(
        f"""
ALTER TABLE idempotency_keys ADD COLUMN binding bytea;
CREATE TABLE game_signatures (
    game_id    uuid PRIMARY KEY REFERENCES games (id),
    version    int NOT NULL CHECK (version > 0),
    kid        text NOT NULL,
    receipt    jsonb NOT NULL,
    signed_at  timestamptz NOT NULL DEFAULT now()
);
CREATE TRIGGER game_signatures_no_update_delete BEFORE UPDATE OR DELETE ON game_signatures
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER game_signatures_no_truncate BEFORE TRUNCATE ON game_signatures
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();
GRANT SELECT, INSERT ON game_signatures TO {ROLE};
"""
    )


def downgrade() -> None:
    op.execute("DROP TABLE game_signatures; ALTER TABLE idempotency_keys DROP COLUMN binding")
