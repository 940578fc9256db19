"""Least privilege (migration 0006): the service's role, ``cardroom_app``, may SELECT and INSERT
on the tables the app uses and nothing else; a whole game works through an app running as it.
(The other tests keep connecting as the owner, who migrates.)"""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from api_client import ApiClient, Table, expect_status, play_to_end, serve
from psycopg import errors

from service.http.app import create_app
from service.store import db

# Each table the app uses, with one of its columns.
APP_TABLES = {
    "events": "data",
    "games": "created_at",
    "seats": "game_id",
    "game_secrets": "game_id",
    "idempotency_keys": "secret",
    "private_games": "creator_hash",
    "invitations": "token_hash",
    "turn_deadlines": "deadline",
    "game_signatures": "receipt",  # 0014: a finished game's signature, made once
    "key_ids": "retired_at",  # 0012: hosts record their keys; only the owner retires one
    "rematches": "rematch_id",
    "rematch_seats": "new_seat",
    "accounts": "name",  # 0018
    "account_names": "account_id",
    "account_tokens": "token_hash",  # only last_used_at and revoked_at are ever updated
    "account_seats": "account_id",
    "account_feed": "data",
    "challenges": "request",  # 0020: only status, answered_at and game_id are ever updated
    "quick_games": "key",  # only game_id and updated_at are ever updated
    "request_records": "body",  # 0021: a cache the service purges (DELETE), as idempotency_keys
    "rated_games": "finished_at",  # 0022: a rated game, rated once
    "rating_changes": "mu",
    # each account's latest rating per pool: only its rating columns are ever updated (the
    # leaderboard's index needs each account once; rating_changes is the history)
    "ratings": "account_id",
    # 0023: an endpoint's checkpoint and retry state are updated, never its secret; owners
    # delete endpoints, the deliverers purge the delivery log
    "webhook_endpoints": "secret",
    "webhook_deliveries": "payload",
}
# Rows the service deletes itself: expired caches, webhook endpoints and their old attempts.
PURGED = ("idempotency_keys", "request_records", "webhook_endpoints", "webhook_deliveries")
TEST_PASSWORD = "cardroom-test"  # only where the test server wants passwords (testcontainers)


@pytest.fixture(scope="module")
def app_role_url(database_url: str) -> str:
    url = db.with_user(database_url, db.APP_ROLE)
    try:
        psycopg.connect(url, connect_timeout=5).close()
    except psycopg.OperationalError as exc:
        if "password" not in str(exc):
            raise
        with psycopg.connect(database_url, autocommit=True) as owner:
            owner.execute(f"ALTER ROLE {db.APP_ROLE} PASSWORD '{TEST_PASSWORD}'")
        url = psycopg.conninfo.make_conninfo(url, password=TEST_PASSWORD)
    return url


@pytest.fixture
def app_conn(app_role_url: str) -> Iterator[psycopg.Connection[Any]]:
    with psycopg.connect(app_role_url, autocommit=True) as conn:
        yield conn


def _refused(conn: psycopg.Connection[Any], statement: str) -> str:
    with pytest.raises(errors.InsufficientPrivilege) as refused:
        conn.execute(statement)
    return str(refused.value)


def test_the_app_role_is_not_the_owner(app_conn: psycopg.Connection[Any]) -> None:
    user, superuser = app_conn.execute(
        "SELECT current_user, rolsuper FROM pg_roles WHERE rolname = current_user"
    ).fetchone()
    assert (user, superuser) == (db.APP_ROLE, False)


@pytest.mark.parametrize(("table", "column"), APP_TABLES.items())
def test_the_app_role_reads_and_appends_only(
    app_conn: psycopg.Connection[Any], table: str, column: str
) -> None:
    app_conn.execute(f"SELECT count(*) FROM {table}")  # allowed
    # "permission denied", not the append-only triggers (which would say "append-only"): the
    # role lacks the privilege itself.
    # Migration 0007: idempotency keys are a cache the service purges itself (DELETE only).
    deletes = () if table in PURGED else (f"DELETE FROM {table}",)
    for statement in (
        f"UPDATE {table} SET {column} = {column}",
        *deletes,
        f"TRUNCATE {table}",
        f"ALTER TABLE {table} DISABLE TRIGGER ALL",
        f"DROP TABLE {table}",
    ):
        message = _refused(app_conn, statement)
        assert "permission denied" in message or "must be owner" in message, message


def test_the_app_role_has_nothing_beyond_its_grants(app_conn: psycopg.Connection[Any]) -> None:
    statements = (
        "SELECT * FROM alembic_version",
        "CREATE TABLE intruder (x int)",
        "CREATE FUNCTION f() RETURNS int LANGUAGE sql AS 'SELECT 1'",
        "DROP FUNCTION refuse_change()",
        "CREATE ROLE intruder",
        "SELECT setval(pg_get_serial_sequence('events', 'position'), 1)",
        f"ALTER ROLE {db.APP_ROLE} SUPERUSER",
    )
    refusals = [_refused(app_conn, statement) for statement in statements]
    assert all("denied" in refusal or "must be" in refusal for refusal in refusals), refusals


def test_migrating_twice_keeps_the_role(database_url: str) -> None:
    """The role is cluster-wide: a second database's migration finds it and only grants."""
    name = f"cardroom_role_{uuid.uuid4().hex[:8]}"
    url = db.ensure_database(database_url, name)
    try:
        db.migrate(url)
        with psycopg.connect(url) as conn:
            grants = conn.execute(
                "SELECT table_name, string_agg(privilege_type, ',' ORDER BY privilege_type)"
                " FROM information_schema.role_table_grants WHERE grantee = %s"
                " GROUP BY table_name ORDER BY 1",
                (db.APP_ROLE,),
            ).fetchall()
        special = {  # 0007: a cache the service purges; 0011: /readyz's scratch row
            "idempotency_keys": "DELETE,INSERT,SELECT",
            "request_records": "DELETE,INSERT,SELECT",
            "webhook_endpoints": "DELETE,INSERT,SELECT",  # and UPDATE of some columns
            "webhook_deliveries": "DELETE,INSERT,SELECT",
            "readiness_probe": "INSERT,SELECT,TRUNCATE",
        }
        assert grants == [
            (t, special.get(t, "INSERT,SELECT")) for t in sorted([*APP_TABLES, "readiness_probe"])
        ]
    finally:
        db.drop_database(database_url, name)


def test_a_whole_game_as_the_app_role(app_role_url: str) -> None:
    with (
        db.make_pool(app_role_url, max_size=4) as pool,
        serve(create_app(pool=pool)) as url,
        ApiClient(url) as api,
    ):
        table = Table.open(api, 2)
        try:
            assert play_to_end(table, random.Random(3)) > 0
            assert api.game(table.game_id)["status"] == "over"
            expect_status(api.get(f"{table.path}/audit"), 200)
        finally:
            table.close()
        # Bots, a turn clock (turn_deadlines) and an idempotent retry (idempotency_keys).
        body = {"game": "sushi-go", "players": 2, "turn_seconds": 30}
        body["bots"] = [{"seat": 1, "kind": "greedy"}]
        key = {"Idempotency-Key": str(uuid.uuid4())}
        first = api.post("/games", body, headers=key)
        expect_status(first, 201)
        again = api.post("/games", body, headers=key)
        assert again.headers["Idempotent-Replayed"] == "true"
        assert again.json()["game_id"] == first.json()["game_id"]
        granted = api.join(first.json()["game_id"], "Ada")
        view = api.game(first.json()["game_id"], token=granted["token"])
        assert view["status"] == "playing" and "turn_deadline" in view
