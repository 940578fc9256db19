"""Private games, their invitations, and which client took each seat (issue 20).

- ``private_games``: a game created ``"visibility": "private"`` has a row here, with the SHA-256
  of its creator's token (shown once, at creation). Such a game is not listed in the lobby.
- ``invitations``: the invitations of a private game, one row per change: serial 1 at creation,
  then one row each time the creator revokes (``token_hash`` NULL) or issues a new one; the row
  with the highest serial is the invitation in force. Only SHA-256 hashes are kept.
- ``seats.client``: a keyed hash of the address that took a seat (``Keyring.client_hash``), so
  that one address cannot hold seats in more than N waiting games; NULL for seats taken before.

None of this is in the events: it is access control, not the game, and exports publish events.
Rows are facts, written once (append-only like the tables of 0001). Hashes are looked up by game
only, so no key leaves out ``game_id`` (docs/scaling.md: every game table is distributed by it).

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-23
"""

from __future__ import annotations

from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

ROLE = "cardroom_app"
APPEND_ONLY = ("private_games", "invitations")

UPGRADE = f"""
CREATE TABLE private_games (
    game_id       uuid PRIMARY KEY REFERENCES games (id),
    creator_hash  bytea NOT NULL CHECK (octet_length(creator_hash) = 32),
    created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE invitations (
    game_id      uuid NOT NULL REFERENCES private_games (game_id),
    serial       int NOT NULL CHECK (serial >= 1),
    token_hash   bytea CHECK (octet_length(token_hash) = 32),
    recorded_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (game_id, serial)
);
ALTER TABLE seats ADD COLUMN client bytea CHECK (octet_length(client) = 32);
CREATE INDEX seats_client ON seats (client) WHERE client IS NOT NULL;
GRANT SELECT, INSERT ON private_games, invitations TO {ROLE};
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
        "DROP TABLE invitations, private_games;"
        " DROP INDEX seats_client; ALTER TABLE seats DROP COLUMN client;"
    )
