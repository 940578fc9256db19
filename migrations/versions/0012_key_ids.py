"""Keys are data: ``key_ids`` records every key id the service has used, never a secret.

A signing key's row holds its public JWK (RFC 8037) and its RFC 7638 thumbprint, so every host
can publish it (``/.well-known/cardroom-keys``) as long as receipts signed with it must verify;
a seed key's row holds a key check value (HMAC-SHA256 of a fixed label under the key), which says
whether a host holds the same key without revealing it. ``retired_at``: ``cardroom keys retire``
(service/key_registry.py) said a host need no longer hold the key's secret half.

Every start (``cardroom serve``) checks that its keys hold every id recorded here and refuses to
start otherwise; ``/readyz`` fails while they do not. Seeds sealed before this revision name their
key in ``game_secrets.key_id``: those ids are recorded here with no fingerprint (the key itself is
not known to a migration), so they are checked by id.

The app role may read the rows and record new keys (SELECT, INSERT), not change or retire them.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-27
"""

from __future__ import annotations

from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

ROLE = "cardroom_app"


def upgrade() -> None:
    op.execute(
        f"""
CREATE TABLE key_ids (
    kid          text PRIMARY KEY CHECK (length(kid) BETWEEN 1 AND 200),
    use          text NOT NULL CHECK (use IN ('sig', 'enc')),
    public_jwk   jsonb CHECK (public_jwk IS NULL OR NOT public_jwk ?| ARRAY['d', 'k']),
    fingerprint  text,
    recorded_at  timestamptz NOT NULL DEFAULT now(),
    retired_at   timestamptz,
    CHECK (use = 'enc' OR (public_jwk IS NOT NULL AND fingerprint IS NOT NULL)),
    CHECK (use = 'sig' OR public_jwk IS NULL)
);
INSERT INTO key_ids (kid, use)
    SELECT DISTINCT key_id, 'enc' FROM game_secrets WHERE key_id IS NOT NULL;
GRANT SELECT, INSERT ON key_ids TO {ROLE};
"""
    )


def downgrade() -> None:
    op.execute("DROP TABLE key_ids")
