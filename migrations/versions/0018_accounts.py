"""Accounts (issue 35) and their personal access tokens.

Accounts (issue 35): one identity across games, with personal access tokens (Lichess's model:
no passwords, no sessions).

- ``accounts``: a person's or a program's identity. Its id is a UUID (text) for people, and
  ``bot:<kind>`` for the built-in bots, whose rows this migration writes (their seats are
  theirs in every game: histories treat everyone alike).
- ``account_names``: every UTS #39 skeleton of every account's name (domain/names.py, rule 2):
  the primary key makes names that look alike unique across hosts, whoever inserts first.
- ``account_tokens``: only the SHA-256 of each token, its scopes and label; ``revoked_at`` and
  ``last_used_at`` are the only columns ever updated.
- ``account_seats``: which account took which seat, written in the same statement as the
  ``seat_taken`` event that names it (service/store/event_sql.py), bots' seats included. A row
  is a fact: a seat left later is told by its ``seat_left`` event, as for ``seats``.
- ``account_feed``: what an account's stream tells it (``GET /accounts/me/stream``): a game
  started, its turn, a game finished, a rematch, a challenge and its answer. Written in the
  transaction that makes it true; read in ``(tx, id)`` order below the oldest transaction still
  running, so a row that commits late is never skipped (service/store/account_feed.py).

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from domain import names
from domain.bots import KINDS

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None

ROLE = "cardroom_app"
NAME_RULE = 2  # UTS #39, as seats of games created since issue 31

UPGRADE = f"""
CREATE TABLE accounts (
    id          text PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 64),
    name        text NOT NULL,
    bot         text,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE account_names (
    skeleton    text PRIMARY KEY,
    account_id  text NOT NULL REFERENCES accounts (id)
);
CREATE TABLE account_tokens (
    id            uuid PRIMARY KEY,
    account_id    text NOT NULL REFERENCES accounts (id),
    token_hash    bytea NOT NULL UNIQUE CHECK (octet_length(token_hash) = 32),
    scopes        text[] NOT NULL,
    label         text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    last_used_at  timestamptz,
    revoked_at    timestamptz
);
CREATE INDEX account_tokens_account ON account_tokens (account_id, created_at, id);
CREATE TABLE account_seats (
    game_id     uuid NOT NULL REFERENCES games (id),
    seat        int NOT NULL CHECK (seat >= 0),
    taken_at    int NOT NULL CHECK (taken_at >= 1),
    account_id  text NOT NULL REFERENCES accounts (id),
    PRIMARY KEY (game_id, seat, taken_at)
);
CREATE INDEX account_seats_account ON account_seats (account_id, game_id);
CREATE TABLE account_feed (
    account_id  text NOT NULL REFERENCES accounts (id),
    id          bigint GENERATED ALWAYS AS IDENTITY,
    tx          xid8 NOT NULL DEFAULT pg_current_xact_id(),
    type        text NOT NULL,
    game_id     uuid,
    data        jsonb NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (account_id, id)
);
CREATE INDEX account_feed_account_tx ON account_feed (account_id, tx, id);
CREATE INDEX account_feed_tx ON account_feed (tx, id);
GRANT SELECT, INSERT ON accounts, account_names, account_seats, account_feed TO {ROLE};
GRANT SELECT, INSERT, UPDATE (last_used_at, revoked_at) ON account_tokens TO {ROLE};
"""

PROTECT = """
CREATE TRIGGER {table}_no_update_delete BEFORE UPDATE OR DELETE ON {table}
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table}
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();
"""


def bot_account(kind: str) -> tuple[str, str]:
    """A built-in bot's account: its id and name."""
    return f"bot:{kind}", f"{kind} bot"


def upgrade() -> None:
    op.execute(UPGRADE)
    for table in ("accounts", "account_names", "account_seats", "account_feed"):
        op.execute(PROTECT.format(table=table))
    conn = op.get_bind()
    for kind in KINDS:
        account_id, name = bot_account(kind)
        conn.execute(
            sa.text("INSERT INTO accounts (id, name, bot) VALUES (:id, :name, :kind)"),
            {"id": account_id, "name": name, "kind": kind},
        )
        for look in names.looks(name, NAME_RULE):
            conn.execute(
                sa.text("INSERT INTO account_names (skeleton, account_id) VALUES (:s, :a)"),
                {"s": look, "a": account_id},
            )


def downgrade() -> None:
    op.execute("DROP TABLE account_feed, account_seats, account_tokens, account_names, accounts")
