"""Every key of a game's rows includes the game's id (Citus-ready).

Every key of a game's rows includes the game's id, so a distributed PostgreSQL (Citus) can
place all of a game's rows on one shard (docs/scaling.md, "Past one primary").

- ``idempotency_keys``: the primary key becomes (game_id, scope, key). A pick writes its record in
  the same statement as its events: with the table distributed by the game's id, that write
  stays on the game's shard (keyed by its own (scope, key), it would span two). The lookup of a
  retry by (scope, key) keeps an index of its own; (scope, key) stays unique in practice, since
  every keyed request looks its key up under an advisory lock on (scope, key) before it writes
  (service/http/idempotency.py), and a key found with another request is refused.
- ``events``: ``position`` (one identity sequence: unique by construction) loses its unique
  constraint for a plain index; nothing looks events up across games by position.
- ``seats``: a token hash is unique within its game; the lookup of a token without its game
  (only to answer 403 not_your_game) keeps a plain index.

Revision ID: 0015
Revises: 0011
Create Date: 2026-11-27
"""

from __future__ import annotations

from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_pkey;
ALTER TABLE idempotency_keys ADD PRIMARY KEY (game_id, scope, key);
CREATE INDEX idempotency_keys_scope_key ON idempotency_keys (scope, key);

ALTER TABLE events DROP CONSTRAINT events_position_key;
CREATE INDEX events_position ON events (position);

ALTER TABLE seats DROP CONSTRAINT seats_token_hash_key;
ALTER TABLE seats ADD CONSTRAINT seats_game_token_hash_key UNIQUE (game_id, token_hash);
CREATE INDEX seats_token_hash ON seats (token_hash);
"""
    )


def downgrade() -> None:
    op.execute(
        """
DROP INDEX seats_token_hash;
ALTER TABLE seats DROP CONSTRAINT seats_game_token_hash_key;
ALTER TABLE seats ADD CONSTRAINT seats_token_hash_key UNIQUE (token_hash);

DROP INDEX events_position;
ALTER TABLE events ADD CONSTRAINT events_position_key UNIQUE (position);

DROP INDEX idempotency_keys_scope_key;
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_pkey;
ALTER TABLE idempotency_keys ADD PRIMARY KEY (scope, key);
"""
    )
