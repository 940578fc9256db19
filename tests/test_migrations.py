"""The schema comes from alembic, and migrating is safe to run from several processes at once."""

from __future__ import annotations

import subprocess
import sys
import uuid

import psycopg
from alembic.script import ScriptDirectory

from service.store.db import ROOT, alembic_config, drop_database, ensure_database


def test_concurrent_migrations_apply_once(database_url: str) -> None:
    name = f"cardroom_migrate_{uuid.uuid4().hex[:8]}"
    url = ensure_database(database_url, name)  # any database of the server can create another
    # Processes, not threads: alembic keeps its migration context in module globals.
    code = "import sys; from service.store.db import migrate; migrate(sys.argv[1])"
    try:
        runs = [
            subprocess.Popen([sys.executable, "-c", code, url], cwd=ROOT, stderr=subprocess.PIPE)
            for _ in range(3)
        ]
        for run in runs:
            _, stderr = run.communicate(timeout=60)
            assert run.returncode == 0, stderr.decode()
        with psycopg.connect(url) as conn:
            versions = conn.execute("SELECT version_num FROM alembic_version").fetchall()
            tables = conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1"
            ).fetchall()
        assert versions == [(ScriptDirectory.from_config(alembic_config(url)).get_current_head(),)]
        assert [t for (t,) in tables] == [
            "account_feed",
            "account_names",
            "account_seats",
            "account_tokens",
            "accounts",
            "alembic_version",
            "challenges",
            "events",
            "game_secrets",
            "game_signatures",
            "games",
            "idempotency_keys",
            "invitations",
            "key_ids",
            "private_games",
            "quick_games",
            "rated_games",
            "rating_changes",
            "ratings",
            "readiness_probe",
            "rematch_seats",
            "rematches",
            "request_records",
            "seats",
            "turn_deadlines",
            "webhook_deliveries",
            "webhook_endpoints",
        ]
    finally:
        drop_database(database_url, name)


def test_events_recorded_before_the_hash_chain_get_their_hashes(database_url: str) -> None:
    """Migration 0002 hashes the events already in the log, in version order."""
    from alembic import command

    from domain.chain import first_break
    from service.store.db import alembic_config

    name = f"cardroom_migrate_{uuid.uuid4().hex[:8]}"
    url = ensure_database(database_url, name)
    try:
        command.upgrade(alembic_config(url), "0001")
        game = uuid.uuid4()
        with psycopg.connect(url) as conn:
            conn.execute("INSERT INTO games (id, game) VALUES (%s, 'sushi-go')", (game,))
            for version in (1, 2, 3):
                conn.execute(
                    "INSERT INTO events (game_id, version, type, schema_version, data)"
                    " VALUES (%s, %s, 'e', 1, %s::jsonb)",
                    (game, version, f'{{"n": {version}}}'),
                )
        command.upgrade(alembic_config(url), "head")
        with psycopg.connect(url) as conn:
            rows = conn.execute(
                "SELECT version, type, schema_version, data, hash FROM events"
                " WHERE game_id = %s ORDER BY version",
                (game,),
            ).fetchall()
        lines = [
            {
                "game_id": str(game),
                "version": v,
                "type": t,
                "schema_version": s,
                "data": d,
                "hash": h,
            }
            for v, t, s, d, h in rows
        ]
        assert len(lines) == 3 and first_break(lines) is None
    finally:
        drop_database(database_url, name)


def test_colocation_by_game_goes_down_and_up_again(database_url: str) -> None:
    """Migration 0015 (every key of a game's rows includes its id) undone and redone on a
    database with rows: the old keys come back, and the new ones hold what they must."""
    from alembic import command

    from service.store.db import alembic_config

    name = f"cardroom_migrate_{uuid.uuid4().hex[:8]}"
    url = ensure_database(database_url, name)
    try:
        config = alembic_config(url)
        command.upgrade(config, "head")
        game = uuid.uuid4()
        with psycopg.connect(url) as conn:
            conn.execute("INSERT INTO games (id, game) VALUES (%s, 'sushi-go')", (game,))
            conn.execute(
                "INSERT INTO seats (game_id, seat, token_hash) VALUES (%s, 0, %s)",
                (game, b"t" * 32),
            )
        command.downgrade(config, "0011")
        command.upgrade(config, "head")
        with psycopg.connect(url) as conn:
            keys = conn.execute(
                "SELECT conname FROM pg_constraint WHERE conname IN"
                " ('idempotency_keys_pkey', 'seats_game_token_hash_key', 'events_position_key')"
                " ORDER BY 1"
            ).fetchall()
            assert keys == [("idempotency_keys_pkey",), ("seats_game_token_hash_key",)]
            columns = conn.execute(
                "SELECT a.attname FROM pg_index i JOIN pg_attribute a"
                " ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)"
                " WHERE i.indexrelid = 'idempotency_keys_pkey'::regclass ORDER BY 1"
            ).fetchall()
            assert [c for (c,) in columns] == ["game_id", "key", "scope"]
            # A token is unique within its game.
            try:
                conn.execute(
                    "INSERT INTO seats (game_id, seat, token_hash) VALUES (%s, 1, %s)",
                    (game, b"t" * 32),
                )
            except psycopg.errors.UniqueViolation as exc:
                assert exc.diag.constraint_name == "seats_game_token_hash_key"
            else:
                raise AssertionError("a token taken twice in one game was accepted")
    finally:
        drop_database(database_url, name)


def test_each_migration_names_itself_in_one_line() -> None:
    """Alembic logs "Running upgrade a -> b, <doc>" with the docstring's first paragraph: a
    paragraph of two lines broke every migrating command's output, the benches' too (issue 39,
    item 13)."""
    scripts = ScriptDirectory.from_config(alembic_config("postgresql://unused"))
    for script in scripts.walk_revisions():
        assert script.doc and "\n" not in script.doc, (script.revision, script.doc)


def test_keys_reused_after_expiry_do_not_stop_the_unique_index(database_url: str) -> None:
    """Migration 0024 makes (scope, key) unique. A key reused after its record expired and
    before the purge took that record had two rows under the advisory lock's rule: the expired
    one goes, the live one stays, and the index is built."""
    from alembic import command

    name = f"cardroom_migrate_{uuid.uuid4().hex[:8]}"
    url = ensure_database(database_url, name)
    try:
        config = alembic_config(url)
        command.upgrade(config, "0023")
        games = [uuid.uuid4(), uuid.uuid4()]
        with psycopg.connect(url) as conn:
            for game, expires in zip(
                games, ("now() - interval '1 hour'", "now() + interval '1 day'"), strict=True
            ):
                conn.execute("INSERT INTO games (id, game) VALUES (%s, 'sushi-go')", (game,))
                conn.execute(
                    "INSERT INTO idempotency_keys (scope, key, request_hash, game_id, version,"
                    f" expires_at) VALUES ('anonymous', %s, %s, %s, 1, {expires})",
                    ("k" * 64, b"h" * 32, game),
                )
        command.upgrade(config, "head")
        with psycopg.connect(url) as conn:
            kept = conn.execute("SELECT game_id FROM idempotency_keys").fetchall()
        assert kept == [(games[1],)]
    finally:
        drop_database(database_url, name)
