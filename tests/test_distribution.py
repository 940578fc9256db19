"""The path to a distributed PostgreSQL (Citus), checked against the real schema (docs/scaling.md,
"Past one primary"): every game table is distributed by its game's id, so every primary key,
unique constraint, unique index and foreign key of it must include that column (Citus enforces
uniqueness per shard only). What does not is listed here with its reason, and in the note."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psycopg

NOTE = Path(__file__).resolve().parents[1] / "docs" / "scaling.md"

# Each table: its distribution column, or None with the reason it is not distributed by game.
DISTRIBUTION: dict[str, str | None] = {
    "games": "id",
    "events": "game_id",
    "seats": "game_id",
    "game_secrets": "game_id",
    "turn_deadlines": "game_id",
    "private_games": "game_id",  # migration 0009: a private game's creator token hash
    "invitations": "game_id",  # its invitations, looked up by game only
    "game_signatures": "game_id",  # 0014: a finished game's signature, one row per game
    "rematches": "game_id",  # migration 0016: a finished game's rematch (no key on the new game)
    "rematch_seats": "game_id",  # the finished game's seats that took a seat in it
    # Written in the same statement as the events of the request it records (migration 0015).
    "idempotency_keys": "game_id",
    "alembic_version": None,  # one row: a local table of the coordinator
    "readiness_probe": None,  # /readyz's scratch row (0011): a local table of the coordinator
    "key_ids": None,  # the service's key ids (0012): a few rows, a reference table
    # 0018: an account's seats are its game's rows (written with the seat's event); accounts,
    # their names and tokens are reference tables (one row per account or token, read by
    # hash or id from any game's request), and an account's feed is read by account.
    "account_seats": "game_id",
    "accounts": None,
    "account_names": None,
    "account_tokens": None,
    "account_feed": None,
    # 0020: an account's challenges, keyed by their own id and read by account (a game is made
    # only on acceptance); quick match's open game per rules key: a few rows, a reference table.
    "challenges": None,
    "quick_games": None,
    # 0021: the answers of keyed requests that change no game, by (scope, key): local.
    "request_records": None,
    # 0022: ratings are per pool, folded in one order per pool under the pool's lock: read and
    # written by pool and account, never by game alone (docs/scaling.md).
    "rated_games": None,
    "rating_changes": None,
    "ratings": None,
    # 0023: webhook endpoints (a few per game or account, claimed across all of them by the
    # deliverers) and their delivery log: local to the coordinator.
    "webhook_endpoints": None,
    "webhook_deliveries": None,
}

# Keys of distributed tables without the distribution column: none since migration 0015 (the
# idempotency records, events' global position and seats' token hash included the game's id
# only in part before). A new one must be named here with its reason, and in docs/scaling.md.
EXCEPTIONS: dict[str, str] = {
    # 0018: an account seat names its account, a row of the reference table ``accounts``
    # (Citus allows a foreign key from a distributed table to a reference table).
    "account_seats_account_id_fkey": "to a reference table",
    # 0024: copies of a keyed request meet on (scope, key), with no lock taken before (a keyed
    # create makes a new game per send: its game's id cannot tell copies apart). On Citus it
    # stays a plain index and copies meet on the primary key (game_id, scope, key): plan, not
    # run (docs/scaling.md).
    "idempotency_keys_scope_key": "unique (scope, key): one PostgreSQL only",
}


def keys(conn: psycopg.Connection[Any]) -> list[tuple[str, str, str, list[str]]]:
    """(table, name, kind, columns) of every primary key, unique constraint, foreign key (its
    own columns and the referenced ones) and unique index of the public schema."""
    rows = conn.execute(
        """
        SELECT c.conrelid::regclass::text, c.conname, c.contype::text,
               array(SELECT a.attname FROM unnest(c.conkey) k
                     JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k)
        FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
        WHERE n.nspname = 'public' AND c.contype IN ('p', 'u', 'f')
        UNION ALL
        SELECT c.confrelid::regclass::text, c.conname, 'referenced',
               array(SELECT a.attname FROM unnest(c.confkey) k
                     JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k)
        FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
        WHERE n.nspname = 'public' AND c.contype = 'f'
        UNION ALL
        SELECT i.indrelid::regclass::text, x.relname, 'unique index',
               array(SELECT a.attname FROM unnest(i.indkey) k
                     JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k)
        FROM pg_index i JOIN pg_class x ON x.oid = i.indexrelid
        JOIN pg_namespace n ON n.oid = x.relnamespace
        WHERE n.nspname = 'public' AND i.indisunique
          AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)
        """
    ).fetchall()
    return [(table, name, kind, list(columns)) for table, name, kind, columns in rows]


def test_every_table_is_placed(owner_connection: psycopg.Connection[Any]) -> None:
    tables = {
        name
        for (name,) in owner_connection.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
        )
    }
    assert tables == set(DISTRIBUTION), "say how a new table would be distributed (and why)"


def test_every_key_of_a_game_table_includes_the_game(
    owner_connection: psycopg.Connection[Any],
) -> None:
    lacking = {}
    for table, name, kind, columns in keys(owner_connection):
        column = DISTRIBUTION.get(table)
        if column is not None and column not in columns:
            lacking[name] = f"{kind} {table} ({', '.join(columns)})"
    assert set(lacking) == set(EXCEPTIONS), lacking
    note = NOTE.read_text()
    for name in EXCEPTIONS:
        assert f"`{name}`" in note, f"docs/scaling.md must say what becomes of {name}"
