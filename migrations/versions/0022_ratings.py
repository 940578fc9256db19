"""Ratings per pool from rated games (issue 37).

Ratings (issue 37): per pool (``sushi-go-gamewright``, ``sushi-go-zoch``, ``sequence``), an
OpenSkill rating per account, folded over finished rated games in finish order.

- ``rated_games``: one row per rated game, written in the transaction of its last event. Its
  primary key is the game: however many hosts see the game finish, it is rated once. Its
  ``finished_at`` is taken under the pool's lock (an advisory lock, service/store/ratings.py),
  strictly after the pool's previous finish, and is the ``recorded_at`` of the game's last
  events: the export carries it, so a rebuild from exports folds the games in the order the
  service rated them (``UNIQUE (pool, finished_at)`` holds the order total).
- ``rating_changes``: per rated game and rated seat, the account's rating before and after
  (``float8``: the floats as computed, bit for bit) and its rank; the history. Keyed by the
  account's ``games``-th game of the pool: written once.
- ``ratings``: each account's latest rating per pool, the one table of this migration that
  changes: the leaderboard's keyset index needs each account once. ``rating_changes`` is the
  truth; ``ratings`` is its last row per account and pool, written in the same transaction.
  The app role may UPDATE its rating columns only.

Revision ID: 0022
Revises: 0021
Create Date: 2026-11-29
"""

from __future__ import annotations

from alembic import op

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None

ROLE = "cardroom_app"
POOLS = "('sushi-go-gamewright', 'sushi-go-zoch', 'sequence')"

UPGRADE = f"""
CREATE TABLE rated_games (
    game_id      uuid PRIMARY KEY REFERENCES games (id),
    pool         text NOT NULL CHECK (pool IN {POOLS}),
    finished_at  timestamptz NOT NULL,
    CONSTRAINT rated_games_pool_order UNIQUE (pool, finished_at)
);
CREATE TABLE rating_changes (
    account_id    text NOT NULL REFERENCES accounts (id),
    pool          text NOT NULL CHECK (pool IN {POOLS}),
    games         int NOT NULL CHECK (games >= 1),
    game_id       uuid NOT NULL REFERENCES rated_games (game_id),
    seat          int NOT NULL CHECK (seat >= 0),
    rank          int NOT NULL CHECK (rank >= 1),
    mu_before     float8 NOT NULL,
    sigma_before  float8 NOT NULL,
    mu            float8 NOT NULL,
    sigma         float8 NOT NULL,
    finished_at   timestamptz NOT NULL,
    PRIMARY KEY (account_id, pool, games),
    CONSTRAINT rating_changes_game_seat UNIQUE (game_id, seat)
);
CREATE TABLE ratings (
    account_id   text NOT NULL REFERENCES accounts (id),
    pool         text NOT NULL CHECK (pool IN {POOLS}),
    mu           float8 NOT NULL,
    sigma        float8 NOT NULL,
    ordinal      float8 NOT NULL,
    games        int NOT NULL CHECK (games >= 1),
    provisional  boolean NOT NULL,
    game_id      uuid NOT NULL,
    updated_at   timestamptz NOT NULL,
    PRIMARY KEY (account_id, pool)
);
CREATE INDEX ratings_leaderboard ON ratings (pool, ordinal DESC, account_id)
    WHERE NOT provisional;
GRANT SELECT, INSERT ON rated_games, rating_changes TO {ROLE};
GRANT SELECT, INSERT, UPDATE (mu, sigma, ordinal, games, provisional, game_id, updated_at)
    ON ratings TO {ROLE};
"""

PROTECT = """
CREATE TRIGGER {table}_no_update_delete BEFORE UPDATE OR DELETE ON {table}
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table}
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();
"""


def upgrade() -> None:
    op.execute(UPGRADE)
    for table in ("rated_games", "rating_changes"):
        op.execute(PROTECT.format(table=table))


def downgrade() -> None:
    op.execute("DROP TABLE ratings, rating_changes, rated_games")
