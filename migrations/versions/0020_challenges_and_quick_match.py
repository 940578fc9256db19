"""Challenges and quick match (issue 35, point 5).

- ``challenges``: a game one account offers another (``POST /accounts/{id}/challenges``), with
  the rules as ``POST /games`` takes them (``request``). ``status`` moves once, from
  ``offered`` to ``accepted``, ``declined``, ``cancelled`` or ``expired``, by an ``UPDATE ...
  WHERE status = 'offered'``: the row lock and the re-check decide a race of answers on any
  number of hosts. An accepted challenge names its game, written in the transaction that
  creates the game with both accounts seated (service/play/challenges.py).
- ``quick_games``: per canonical key of a game's rules (service/play/quick.py), the public game
  that quick match seats people in while it waits for players. A new game replaces it only by
  a compare-and-set on the game it replaces, in the transaction that creates the new game, so
  there is at most one waiting quick game per key, whatever the hosts.

Only the columns that change are granted for UPDATE; nothing is ever deleted.

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-29
"""

from __future__ import annotations

from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None

ROLE = "cardroom_app"

UPGRADE = f"""
CREATE TABLE challenges (
    id            uuid PRIMARY KEY,
    from_account  text NOT NULL REFERENCES accounts (id),
    to_account    text NOT NULL REFERENCES accounts (id),
    game          text NOT NULL,
    request       jsonb NOT NULL,
    status        text NOT NULL DEFAULT 'offered'
                  CHECK (status IN ('offered', 'accepted', 'declined', 'cancelled', 'expired')),
    created_at    timestamptz NOT NULL DEFAULT now(),
    expires_at    timestamptz NOT NULL,
    answered_at   timestamptz,
    game_id       uuid REFERENCES games (id),
    CHECK (from_account <> to_account),
    CHECK ((status = 'accepted') = (game_id IS NOT NULL)),
    CHECK ((status = 'offered') = (answered_at IS NULL))
);
CREATE INDEX challenges_to_open ON challenges (to_account, created_at) WHERE status = 'offered';
CREATE INDEX challenges_from_open ON challenges (from_account, created_at)
    WHERE status = 'offered';
CREATE TABLE quick_games (
    key         text PRIMARY KEY CHECK (length(key) = 64),
    game_id     uuid REFERENCES games (id),
    updated_at  timestamptz NOT NULL DEFAULT now()
);
GRANT SELECT, INSERT ON challenges, quick_games TO {ROLE};
GRANT UPDATE (status, answered_at, game_id) ON challenges TO {ROLE};
GRANT UPDATE (game_id, updated_at) ON quick_games TO {ROLE};
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute("DROP TABLE quick_games, challenges")
