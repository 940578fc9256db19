"""A game recorded in the older event format, stored as it was in PostgreSQL, is still served,
replayed, audited and exported (README, "Events"; domain/sushigo/upcast.py).

``round_scored`` v1 and ``game_ended`` v1 listed the seats by their position; v2 names each seat.
The log is append-only, so old rows stay v1: reads upcast them (``/events``, ``/scores``, the
audit, ``cardroom replay``), while the export gives them as stored, since the hash chain and the
service's signature cover that form. New games store v2.
"""

from __future__ import annotations

import json
import random
import uuid
from pathlib import Path
from typing import Any

import psycopg
import pytest
from api_client import ApiClient, Table, play_to_end
from psycopg.types.json import Jsonb

from domain.audit import parse_export
from domain.chain import GENESIS, event_hash
from service.cli.main import main

pytest_plugins = ["api_fixtures"]

V1_GAME = Path(__file__).parent / "fixtures" / "sushi-go-v1-game.jsonl"


def store_v1_game(conn: psycopg.Connection[Any]) -> tuple[str, list[dict[str, Any]]]:
    """The v1 fixture's events stored verbatim as a game of their own (a fresh id, so its hash
    chain is recomputed for that id, as the service did when it recorded them)."""
    records = parse_export(V1_GAME.read_text())
    game_id = str(uuid.uuid4())
    seed = bytes.fromhex(records[-1]["data"]["seed"])
    previous, stored = GENESIS, []
    with conn.transaction():
        conn.execute("INSERT INTO games (id, game) VALUES (%s, 'sushi-go')", (game_id,))
        conn.execute(
            "INSERT INTO game_secrets (game_id, seed, key_id) VALUES (%s, %s, NULL)",
            (game_id, seed),
        )
        for r in records:
            kind, version, data = r["type"], r["version"], r["data"]
            previous = event_hash(previous, game_id, version, kind, r["schema_version"], data)
            conn.execute(
                "INSERT INTO events (game_id, version, type, schema_version, data, hash)"
                " VALUES (%s, %s, %s, %s, %s, %s)",
                (game_id, version, kind, r["schema_version"], Jsonb(data), previous),
            )
            stored.append({**r, "game_id": game_id, "hash": previous})
    return game_id, stored


def test_a_stored_v1_game_is_read_upcast_and_exported_verbatim(
    api: ApiClient,
    owner_connection: psycopg.Connection[Any],
    tmp_path: Path,
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    game_id, stored = store_v1_game(owner_connection)
    ended_v1 = stored[-1]["data"]
    assert [r["schema_version"] for r in stored if r["type"] == "round_scored"] == [1, 1, 1]

    # /events: one shape for clients, every seat named (v2)
    events = api.get(f"/games/{game_id}/events", params={"limit": 500}).json()["events"]
    scored = [e for e in events if e["type"] == "round_scored"]
    assert [e["schema_version"] for e in scored] == [2, 2, 2]
    assert all([s["seat"] for s in e["data"]["scores"]] == [0, 1, 2, 3] for e in scored)
    ended = events[-1]
    assert ended["type"] == "game_ended" and ended["schema_version"] == 2
    assert ended["data"]["totals"] == [
        {"seat": seat, "total": total} for seat, total in enumerate(ended_v1["totals"])
    ]
    scores = api.get(f"/games/{game_id}/scores").json()
    assert [t["total"] for t in scores["totals"]] == ended_v1["totals"]
    assert scores["winners"] == ended_v1["winners"]

    # Finished before signatures were kept (migration 0014): no checkpoint until the operator
    # signs such games once.
    unsigned = api.get(f"/games/{game_id}/export").text
    assert json.loads(unsigned.splitlines()[-1]) == {"checkpoint": None}
    monkeypatch.setenv("DATABASE_URL", database_url)
    assert main(["sign-finished"]) == 0

    # the export: the stored bytes, so that the chain and the signature verify
    export = api.get(f"/games/{game_id}/export").text
    lines = [json.loads(line) for line in export.splitlines()]
    checkpoint = lines.pop()["checkpoint"]
    assert [(r["schema_version"], r["data"], r["hash"]) for r in lines] == [
        (r["schema_version"], r["data"], r["hash"]) for r in stored
    ]
    assert checkpoint["version"] == len(stored)
    (tmp_path / "game.jsonl").write_text(export)
    keys = api.get("/.well-known/cardroom-keys").json()
    (tmp_path / "keys.json").write_text(json.dumps(keys))
    assert main(["audit", str(tmp_path / "game.jsonl"), "--keys", str(tmp_path / "keys.json")]) == 0
    assert main(["replay", str(tmp_path / "game.jsonl")]) == 0

    # the service's own audit reads it upcast: totals name their seats
    report = api.get(f"/games/{game_id}/audit").json()
    assert report["ok"] is True and report["chain"]["ok"] is True
    assert report["recorded_totals"] == report["totals"] == ended["data"]["totals"]


def test_new_games_store_the_seats_named(
    api: ApiClient, owner_connection: psycopg.Connection[Any]
) -> None:
    table = Table.open(api, 3)
    play_to_end(table, random.Random(16))
    rows = owner_connection.execute(
        "SELECT type, schema_version, data FROM events WHERE game_id = %s"
        " AND type IN ('round_scored', 'game_ended') ORDER BY version",
        (table.game_id,),
    ).fetchall()
    table.close()
    assert [(t, v) for t, v, _ in rows] == [("round_scored", 2)] * 3 + [("game_ended", 2)]
    for _, _, data in rows[:3]:
        assert [s["seat"] for s in data["scores"]] == [0, 1, 2]
    end = rows[-1][2]
    assert [p["seat"] for p in end["puddings"]] == [t["seat"] for t in end["totals"]] == [0, 1, 2]
