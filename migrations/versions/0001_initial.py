"""Initial schema: games, the append-only event log, seats and game secrets.

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

from __future__ import annotations

from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

# Tables whose rows are facts: written once, never updated, deleted or truncated.
APPEND_ONLY = ("games", "events", "seats", "game_secrets")

UPGRADE = """
CREATE TABLE games (
    id          uuid PRIMARY KEY,
    game        text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);
-- Keyset pagination of the lobby by (created_at, id).
CREATE INDEX games_created_at_id ON games (created_at, id);
CREATE INDEX games_game_created_at_id ON games (game, created_at, id);

-- One table for every game's events (Message DB style). (game_id, version) is the stream
-- position and the optimistic-concurrency guard; position is the global order.
CREATE TABLE events (
    game_id         uuid NOT NULL REFERENCES games (id),
    version         int NOT NULL CHECK (version >= 1),
    type            text NOT NULL,
    schema_version  int NOT NULL,
    data            jsonb NOT NULL,
    recorded_at     timestamptz NOT NULL DEFAULT now(),
    position        bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    PRIMARY KEY (game_id, version)
);
-- The lobby derives a game's status from these two lifecycle events only.
CREATE INDEX events_lifecycle ON events (game_id, type)
    WHERE type IN ('game_started', 'game_ended');

-- A seat's name lives in its seat_taken event; only the SHA-256 of the bearer token is kept.
CREATE TABLE seats (
    game_id     uuid NOT NULL REFERENCES games (id),
    seat        int NOT NULL CHECK (seat >= 0),
    token_hash  bytea NOT NULL UNIQUE CHECK (octet_length(token_hash) = 32),
    PRIMARY KEY (game_id, seat)
);

CREATE TABLE game_secrets (
    game_id  uuid PRIMARY KEY REFERENCES games (id),
    seed     bytea NOT NULL
);

CREATE FUNCTION refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% are append-only', TG_TABLE_NAME
        USING ERRCODE = 'insufficient_privilege',
              HINT = 'rows are facts: write new ones instead of changing old ones';
END;
$$;

-- Versions of a game are gapless: version n needs version n-1 (visible to this transaction).
-- Row triggers see the rows inserted earlier by the same statement, so batches work.
CREATE FUNCTION events_contiguous() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.version > 1 AND NOT EXISTS (
        SELECT 1 FROM events WHERE game_id = NEW.game_id AND version = NEW.version - 1
    ) THEN
        RAISE EXCEPTION 'event version % of game % leaves a gap', NEW.version, NEW.game_id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'events_version_contiguous';
    END IF;
    RETURN NEW;
END;
$$;

CREATE TRIGGER events_contiguous BEFORE INSERT ON events
    FOR EACH ROW EXECUTE FUNCTION events_contiguous();
"""

PROTECT = """
CREATE TRIGGER {table}_no_update_delete BEFORE UPDATE OR DELETE ON {table}
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table}
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();
"""


def upgrade() -> None:
    op.execute(UPGRADE)
    for table in APPEND_ONLY:
        op.execute(PROTECT.format(table=table))


def downgrade() -> None:
    op.execute(
        "DROP TABLE game_secrets, seats, events, games;"
        " DROP FUNCTION refuse_change(); DROP FUNCTION events_contiguous();"
    )
