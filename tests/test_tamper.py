"""Tampering with a finished game's rows in PostgreSQL is detected by the audit.

Each test plays a game to its end through the service, then changes its rows directly as the
database owner — lifting the append-only guard inside its own transaction — and checks that
``GET /games/{id}/audit`` names the first bad version. A naive attacker leaves the hash chain
broken; a careful one recomputes every hash afterwards, and is caught by the seed commitment or
by re-deciding the game from its picks.

The module runs on a database of its own (``own_database``): a tampered game no longer
folds, and other tests' lobby listings must not meet it.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from typing import Any

import own_database
import psycopg
import pytest
from api_client import ApiClient, Table, play_to_end, serving
from psycopg.types.json import Jsonb

from domain.chain import GENESIS, event_hash

pytest_plugins = ["api_fixtures"]

# A database of the module's own (see the docstring and own_database.py).
database_url = own_database.database_url
pool = own_database.pool
live_server = own_database.live_server


@pytest.fixture
def finished(api: ApiClient) -> Iterator[Table]:
    table = Table.open(api, 3)
    play_to_end(table, random.Random(11))
    yield table
    table.close()


def rows(conn: psycopg.Connection[Any], game: str) -> list[tuple[Any, ...]]:
    return conn.execute(
        "SELECT version, type, schema_version, data FROM events WHERE game_id = %s"
        " ORDER BY version",
        (game,),
    ).fetchall()


def version_of(conn: psycopg.Connection[Any], game: str, type_: str, nth: int = 0) -> int:
    versions = [v for v, t, _, _ in rows(conn, game) if t == type_]
    return versions[nth]


def tamper(conn: psycopg.Connection[Any], *statements: tuple[str, tuple[Any, ...]]) -> None:
    """Run ``statements`` with the append-only guard lifted for this transaction only (the
    ALTER TABLE lock keeps every other session from seeing it down)."""
    with conn.transaction():
        conn.execute("ALTER TABLE events DISABLE TRIGGER USER")
        for sql, params in statements:
            conn.execute(sql, params)
        conn.execute("ALTER TABLE events ENABLE TRIGGER USER")


def rechain(conn: psycopg.Connection[Any], game: str) -> None:
    """What a careful attacker does next: recompute every hash so the chain holds again."""
    previous, updates = GENESIS, []
    for version, type_, schema_version, data in rows(conn, game):
        previous = event_hash(previous, game, version, type_, schema_version, data)
        updates.append(
            (
                "UPDATE events SET hash = %s WHERE game_id = %s AND version = %s",
                (previous, game, version),
            )
        )
    tamper(conn, *updates)


def report(table: Table) -> dict[str, Any]:
    response = table.api.get(f"{table.path}/audit")
    assert response.status_code == 200
    return response.json()


def test_an_untouched_game_passes(finished: Table) -> None:
    audited = report(finished)
    assert audited["ok"] is True
    assert audited["chain"]["first_bad_version"] is None


def test_a_changed_payload_breaks_the_chain_there(finished: Table, owner_connection) -> None:
    game = finished.game_id
    picked = version_of(owner_connection, game, "card_picked", 5)
    tamper(
        owner_connection,
        (
            'UPDATE events SET data = data || \'{"cards": ["squid_nigiri", "tempura"]}\''
            " WHERE game_id = %s AND version = %s",
            (game, picked),
        ),
    )
    audited = report(finished)
    assert audited["ok"] is False
    assert audited["chain"]["first_bad_version"] == picked


def test_a_deleted_event_breaks_the_chain_there(finished: Table, owner_connection) -> None:
    game = finished.game_id
    gone = version_of(owner_connection, game, "turn_revealed", 2)
    tamper(
        owner_connection,
        ("DELETE FROM events WHERE game_id = %s AND version = %s", (game, gone)),
    )
    assert report(finished)["chain"]["first_bad_version"] == gone


def test_two_swapped_events_break_the_chain_at_the_first(finished: Table, owner_connection) -> None:
    game = finished.game_id
    first = version_of(owner_connection, game, "card_picked", 7)
    tamper(
        owner_connection,
        ("UPDATE events SET version = 99999 WHERE game_id = %s AND version = %s", (game, first)),
        (
            "UPDATE events SET version = %s WHERE game_id = %s AND version = %s",
            (first, game, first + 1),
        ),
        (
            "UPDATE events SET version = %s WHERE game_id = %s AND version = 99999",
            (first + 1, game),
        ),
    )
    audited = report(finished)
    assert audited["ok"] is False
    assert audited["chain"]["first_bad_version"] == first


def test_an_inserted_event_breaks_the_chain_there(finished: Table, owner_connection) -> None:
    game = finished.game_id
    after = version_of(owner_connection, game, "turn_revealed", 3)
    fake = {
        "seat": 0,
        "round": 1,
        "turn": 4,
        "cards": ["squid_nigiri"],
        "chopsticks": False,
        "auto": False,
    }
    tamper(
        owner_connection,
        # make room: move every later event one version up (through a high range, since the
        # primary key is checked row by row)
        (
            "UPDATE events SET version = version + 100001 WHERE game_id = %s AND version > %s",
            (game, after),
        ),
        (
            "UPDATE events SET version = version - 100000 WHERE game_id = %s AND version > 100000",
            (game,),
        ),
        (
            "INSERT INTO events (game_id, version, type, schema_version, data, hash)"
            " VALUES (%s, %s, 'card_picked', 1, %s, %s)",
            (game, after + 1, Jsonb(fake), "0" * 64),
        ),
    )
    assert report(finished)["chain"]["first_bad_version"] == after + 1


def test_a_replaced_seed_is_caught_even_with_the_hashes_recomputed(
    finished: Table, owner_connection
) -> None:
    game = finished.game_id
    ended = version_of(owner_connection, game, "game_ended")
    forged = uuid.uuid4().hex * 2
    tamper(
        owner_connection,
        (
            "UPDATE events SET data = jsonb_set(data, '{seed}', %s)"
            " WHERE game_id = %s AND version = %s",
            (Jsonb(forged), game, ended),
        ),
    )
    assert report(finished)["chain"]["first_bad_version"] == ended
    rechain(owner_connection, game)
    audited = report(finished)
    assert audited["chain"]["ok"] is True
    assert audited["seed"]["matches_commitment"] is False
    assert audited["ok"] is False


def test_a_changed_pick_with_the_hashes_recomputed_fails_the_replay(
    finished: Table, owner_connection
) -> None:
    """Re-deciding the game from its picks, the rules engine refuses or disagrees at once."""
    game = finished.game_id
    picked = version_of(owner_connection, game, "card_picked", 4)
    (was,) = owner_connection.execute(
        "SELECT data->'cards' FROM events WHERE game_id = %s AND version = %s", (game, picked)
    ).fetchone()
    forged = "egg_nigiri" if was == ["squid_nigiri"] else "squid_nigiri"  # a change, always
    tamper(
        owner_connection,
        (
            "UPDATE events SET data = jsonb_set(data, '{cards}', jsonb_build_array(%s::text))"
            " WHERE game_id = %s AND version = %s",
            (forged, game, picked),
        ),
    )
    rechain(owner_connection, game)
    audited = report(finished)
    assert audited["chain"]["ok"] is True
    assert audited["ok"] is False
    # the forged pick is refused if the hand never held the card; if it did, the pick itself
    # is consistent and the reveal of that turn is the first event the rules disagree with
    reveal = next(
        v for v, t, _, _ in rows(owner_connection, game) if t == "turn_revealed" and v > picked
    )
    assert picked <= audited["replay"]["first_bad_version"] <= reveal


def test_a_changed_score_with_the_hashes_recomputed_fails_the_replay(
    finished: Table, owner_connection
) -> None:
    """The rules engine, re-deciding the game from its picks, disagrees with the forged log."""
    game = finished.game_id
    revealed = version_of(owner_connection, game, "round_scored", 0)
    tamper(
        owner_connection,
        (
            "UPDATE events SET data = jsonb_set(data, '{scores,0,total}', '99')"
            " WHERE game_id = %s AND version = %s",
            (game, revealed),
        ),
    )
    rechain(owner_connection, game)
    audited = report(finished)
    assert audited["chain"]["ok"] is True
    assert audited["ok"] is False
    assert audited["scores"]["first_bad_version"] == revealed


def test_the_audit_waits_for_the_end(api: ApiClient) -> None:
    table = Table.open(api, 2)
    try:
        response = api.get(f"{table.path}/audit")
        assert response.status_code == 409
        assert response.json()["code"] == "game_not_over"
    finally:
        table.close()


def corrupt(conn: psycopg.Connection[Any], game: str, version: int, data: str) -> None:
    tamper(
        conn,
        (
            "UPDATE events SET data = %s::jsonb WHERE game_id = %s AND version = %s",
            (data, game, version),
        ),
    )


def test_event_data_that_is_no_object_is_a_named_problem(finished: Table, owner_connection) -> None:
    """Issue 39, item 12: an event whose stored data is no JSON object (a disk fault, a hand in
    the database) makes the events and the export answer a 500 that says so and names the
    event, never the unnamed internal_error; the audit answers, and reports it."""
    game = finished.game_id
    picked = version_of(owner_connection, game, "card_picked", 2)
    corrupt(owner_connection, game, picked, '"not an object"')
    for path in ("/events", "/export"):
        response = finished.api.get(f"{finished.path}{path}")
        assert response.status_code == 500, (path, response.text)
        problem = response.json()
        assert problem["code"] == "corrupt_event"
        assert problem["errors"] == {"version": picked}
        assert f"event {picked} of game {game}" in problem["detail"]
    audited = report(finished)
    assert audited["ok"] is False
    assert audited["error"] and f"{picked}" in audited["error"]


def test_event_data_a_fold_cannot_take_is_a_named_problem(
    finished: Table, owner_connection, pool
) -> None:
    """The same for data that is an object but not what its type holds: a server that folds
    the game from its first event (a fresh process) meets it and names it."""
    game = finished.game_id
    picked = version_of(owner_connection, game, "card_picked", 2)
    corrupt(owner_connection, game, picked, "{}")
    with serving(pool) as fresh, ApiClient(fresh.url) as api:
        for path in ("", "/events", "/export"):
            response = api.get(f"{finished.path}{path}")
            assert response.status_code == 500, (path, response.text)
            assert response.json()["code"] == "corrupt_event"
            assert response.json()["errors"] == {"version": picked}
    assert report(finished)["ok"] is False
