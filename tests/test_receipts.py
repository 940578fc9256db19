"""Receipts: every accepted command's answer carries the service's signature on the game's last
event, and the players' receipts catch a rewrite of the database that the audit alone passes.

The rewrite is the careful one: as the database owner, triggers lifted, the game is re-played
from its start with other picks by the rules engine itself and the hash chain recomputed, so
the chain, the seed (S18), the deals and the scores all check out.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import random
import uuid
from pathlib import Path
from typing import Any

import nacl.exceptions
import nacl.signing
import psycopg
import pytest
from api_client import ApiClient, Player, Table, play_to_end
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

from domain.audit import audit_export
from domain.chain import event_hash
from domain.decider import Event, MakeMove
from domain.receipts import public_keys
from domain.sushigo import SUSHI_GO
from domain.sushigo.randomplay import random_pick
from service import keys as service_keys
from service.cli.main import main
from service.http.app import create_app
from service.store import signatures
from service.store.events import EventStore

pytest_plugins = ["api_fixtures"]


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def verify_with_pynacl(receipt: dict[str, Any], jwks: dict[str, Any]) -> None:
    """The README's recipe with an independent library (libsodium) and the standard json
    module's sorted, compact output, which is RFC 8785 for these members."""
    key = next(k for k in jwks["keys"] if k["kid"] == receipt["kid"])
    signed = {m: receipt[m] for m in ("format", "game_id", "version", "commitment", "kid")}
    message = json.dumps(signed, sort_keys=True, separators=(",", ":")).encode()
    nacl.signing.VerifyKey(unb64(key["x"])).verify(message, unb64(receipt["signature"]))


class Kept:
    """What the players keep: every receipt the service gave them."""

    def __init__(self) -> None:
        self.receipts: list[dict[str, Any]] = []

    def keep(self, answer: dict[str, Any]) -> None:
        self.receipts.append(answer["receipt"])


def play_keeping_receipts(api: ApiClient, seed: int) -> tuple[Table, Kept]:
    kept = Kept()
    created = api.post("/games", {"game": "sushi-go", "players": 3})
    kept.keep(created.json())
    table = Table(api, created.json()["game_id"], created.json()["rules"])
    for seat in range(3):
        granted = api.join(table.game_id, f"keeper {seat}")
        kept.keep(granted)
        client = api.clone(token=granted["token"])
        table.players.append(Player(seat, granted["name"], granted["token"], client))
    play_to_end(table, random.Random(seed), lambda t, p, body, view: kept.keep(view))
    return table, kept


def test_every_accepted_command_answers_with_a_receipt_anyone_can_verify(api: ApiClient) -> None:
    jwks = api.get("/.well-known/cardroom-keys").json()
    created = api.post("/games", {"game": "sushi-go", "players": 2})
    game = created.json()["game_id"]
    joined = api.post(f"/games/{game}/players", {"name": "Ada"})
    for response in (created, joined):
        receipt = response.json()["receipt"]
        assert receipt["game_id"] == game and receipt["format"] == "cardroom-receipt/1"
        header = json.loads(unb64(response.headers["Cardroom-Receipt"]))
        assert header == receipt
        verify_with_pynacl(receipt, jwks)
    assert created.json()["receipt"]["version"] == 1
    assert joined.json()["receipt"]["version"] == 2
    forged = {**joined.json()["receipt"], "version": 3}
    with pytest.raises(nacl.exceptions.BadSignatureError):
        verify_with_pynacl(forged, jwks)


def test_a_receipt_hides_the_hash_until_the_seed_is_revealed(
    api: ApiClient, store: EventStore
) -> None:
    """Two hashes of the unkeyed chain would let a seat test guesses of the hidden events between
    them (Sequence: the card another seat drew); a receipt commits to the hash under the seed."""
    game = api.create_game(2, game="sequence")["game_id"]
    receipts = [api.join(game, name)["receipt"] for name in ("Ann", "Ben")]
    recorded = {r.hash for r in store.load_records(uuid.UUID(game), 0, 1000)}
    for receipt in receipts:
        assert set(receipt) == {"format", "game_id", "version", "commitment", "kid", "signature"}
        assert not any(digest in json.dumps(receipt) for digest in recorded)


def test_a_retry_gets_the_same_receipt(api: ApiClient) -> None:
    game = api.create_game(2)["game_id"]
    headers = {"Idempotency-Key": str(uuid.uuid4())}
    first = api.post(f"/games/{game}/players", {"name": "Bo"}, headers=headers)
    again = api.post(f"/games/{game}/players", {"name": "Bo"}, headers=headers)
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json()["receipt"] == first.json()["receipt"]
    assert again.headers["Cardroom-Receipt"] == first.headers["Cardroom-Receipt"]


def test_a_finished_game_s_export_ends_with_a_signed_checkpoint(
    api: ApiClient, tmp_path: Path
) -> None:
    table, kept = play_keeping_receipts(api, 3)
    export = api.get(f"{table.path}/export").text
    (tmp_path / "game.jsonl").write_text(export)
    assert main(["replay", str(tmp_path / "game.jsonl")]) == 0  # reads past the checkpoint
    lines = export.splitlines()
    last_event = json.loads(lines[-2])
    checkpoint = json.loads(lines[-1])["checkpoint"]
    assert checkpoint["version"] == last_event["version"]
    # The commitment opens with the seed the last event reveals (README, with openssl).
    message = b"cardroom-receipt-v1\0" + bytes.fromhex(last_event["hash"])
    seed = bytes.fromhex(last_event["data"]["seed"])
    assert checkpoint["commitment"] == hmac.new(seed, message, hashlib.sha256).hexdigest()
    verify_with_pynacl(checkpoint, api.get("/.well-known/cardroom-keys").json())
    # Every receipt kept along the way agrees with the export: the audit checks them all.
    report = api.post(f"{table.path}/audit", {"receipts": kept.receipts}).json()
    assert report["ok"] is True
    assert report["signature"]["ok"] is True
    assert report["receipts"]["ok"] is True
    assert report["receipts"]["checked"] == len(kept.receipts)
    table.close()


# --- the rewrite -----------------------------------------------------------------------------


def rewrite_from_first_pick(conn: psycopg.Connection[Any], game: str) -> int:
    """Replace every event from the first pick on by another game the rules engine plays from
    the same state and seed, with the chain recomputed; the first version rewritten."""
    rows = conn.execute(
        "SELECT version, type, schema_version, data FROM events WHERE game_id = %s"
        " ORDER BY version",
        (game,),
    ).fetchall()
    seed = bytes.fromhex(rows[-1][3]["seed"])
    first = next(v for v, t, _, _ in rows if t == "card_picked")
    first_picker = rows[first - 1][3]["seat"]
    state = SUSHI_GO.initial_state()
    for _, type_, schema_version, data in rows[: first - 1]:
        state = SUSHI_GO.evolve(state, Event(type_, data, schema_version))
    events, rng = [], random.Random(99)
    order = [(first_picker + 1 + s) % 3 for s in range(3)]  # another seat picks first
    while not state.over:
        for seat in order:
            if not state.over and state.picks[seat] is None:
                produced, state = SUSHI_GO.execute(
                    state, MakeMove(seat, random_pick(state, seat, rng), seed)
                )
                events.extend(produced)
    previous = conn.execute(
        "SELECT hash FROM events WHERE game_id = %s AND version = %s", (game, first - 1)
    ).fetchone()[0]
    with conn.transaction():
        conn.execute("ALTER TABLE events DISABLE TRIGGER USER")
        conn.execute("DELETE FROM events WHERE game_id = %s AND version >= %s", (game, first))
        for version, event in enumerate(events, start=first):
            data = dict(event.data)
            previous = event_hash(previous, game, version, event.type, event.schema_version, data)
            conn.execute(
                "INSERT INTO events (game_id, version, type, schema_version, data, hash)"
                " VALUES (%s, %s, %s, %s, %s, %s)",
                (game, version, event.type, event.schema_version, Jsonb(data), previous),
            )
        conn.execute("ALTER TABLE events ENABLE TRIGGER USER")
    return first


def test_a_rewritten_game_fails_the_keys_alone_and_the_players_receipts(
    api: ApiClient,
    owner_connection: psycopg.Connection[Any],
    pool: ConnectionPool,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Issue 31 point 2: the owner's rewrite (triggers lifted, chain recomputed) passes the
    audit that signs the export anew (what the service did before) and fails the one that
    checks the signature stored when the game finished: the keys alone catch it."""
    table, kept = play_keeping_receipts(api, 5)
    game = table.game_id
    honest = api.get(f"{table.path}/export").text
    first = rewrite_from_first_pick(owner_connection, game)
    # The service, restarted on the rewritten rows, serves them with the stored signature.
    restarted = create_app(pool=pool).test_client()
    export = restarted.get(f"/games/{game}/export").get_data(as_text=True)
    keys = restarted.get("/.well-known/cardroom-keys").get_json()
    assert export.splitlines()[-1] == honest.splitlines()[-1]  # signed once: the same line

    today = audit_export(export)  # the chain, seed, deals, scores: all consistent
    assert today["ok"] is True, today
    # What the service did before: sign the export anew, here the forged history. It passes.
    last = json.loads(export.splitlines()[-2])
    resigned = service_keys.load().receipt(
        uuid.UUID(game), last["version"], last["hash"], bytes.fromhex(last["data"]["seed"])
    )
    signed_anew = "\n".join([*export.splitlines()[:-1], json.dumps({"checkpoint": resigned})])
    assert audit_export(signed_anew, public_keys(keys))["ok"] is True
    # The stored signature, over the true history, does not open on the forged one.
    with_keys = audit_export(export, public_keys(keys))
    assert with_keys["ok"] is False and with_keys["signature"]["ok"] is False
    assert "not this export's last event" in with_keys["signature"]["detail"]
    served = restarted.get(f"/games/{game}/audit").get_json()
    assert served["ok"] is False and served["signature"]["ok"] is False
    assert [served[c]["ok"] for c in ("chain", "deals", "scores", "replay")] == [True] * 4

    report = restarted.post(f"/games/{game}/audit", json={"receipts": kept.receipts}).get_json()
    assert report["ok"] is False
    expected = min(r["version"] for r in kept.receipts if r["version"] >= first)
    assert report["receipts"]["first_bad_version"] == expected
    assert (
        f"the service signed a different history at version {expected}"
        in (report["receipts"]["detail"])
    )

    # The same offline, from files: the export and the keys, then the receipts too.
    (tmp_path / "game.jsonl").write_text(export)
    (tmp_path / "keys.json").write_text(json.dumps(keys))
    (tmp_path / "receipts.json").write_text(json.dumps(kept.receipts))
    assert main(["audit", str(tmp_path / "game.jsonl")]) == 0  # without keys: consistent
    files = [str(tmp_path / "game.jsonl"), "--keys", str(tmp_path / "keys.json")]
    assert main(["audit", *files]) == 1  # the keys alone: the signature does not match
    capsys.readouterr()
    status = main(["audit", *files, "--receipts", str(tmp_path / "receipts.json"), "--json"])
    assert status == 1
    printed = json.loads(capsys.readouterr().out)
    assert printed["receipts"]["first_bad_version"] == expected
    table.close()


def test_a_finished_game_is_signed_once_and_a_removed_signature_is_reported(
    api: ApiClient,
    owner_connection: psycopg.Connection[Any],
    pool: ConnectionPool,
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    table, _ = play_keeping_receipts(api, 8)
    game = table.game_id
    stored = owner_connection.execute(
        "SELECT version, kid, receipt FROM game_signatures WHERE game_id = %s", (game,)
    ).fetchall()
    (version, kid, receipt), last_version = stored[0], api.game(game)["version"]
    assert len(stored) == 1 and version == last_version and receipt["kid"] == kid
    keys = api.get("/.well-known/cardroom-keys").json()
    assert kid == keys["keys"][-1]["kid"]  # the key active when the game finished
    exports = [api.get(f"{table.path}/export").text for _ in range(2)]
    assert exports[0] == exports[1]
    assert json.loads(exports[0].splitlines()[-1]) == {"checkpoint": receipt}
    with pytest.raises(psycopg.errors.InsufficientPrivilege):  # append-only, like the events
        owner_connection.execute("DELETE FROM game_signatures WHERE game_id = %s", (game,))
    # The owner lifts the guard and removes it: the service does not sign again.
    with owner_connection.transaction():
        owner_connection.execute("ALTER TABLE game_signatures DISABLE TRIGGER USER")
        owner_connection.execute("DELETE FROM game_signatures WHERE game_id = %s", (game,))
        owner_connection.execute("ALTER TABLE game_signatures ENABLE TRIGGER USER")
    export = api.get(f"{table.path}/export").text
    assert json.loads(export.splitlines()[-1]) == {"checkpoint": None}
    served = api.get(f"{table.path}/audit").json()
    assert served["ok"] is False and "no signature of its end" in served["signature"]["detail"]
    # The operator's one-off for games finished before 0014 signs it again, as it is now.
    assert signatures.unsigned(EventStore(pool)).count(uuid.UUID(game)) == 1
    monkeypatch.setenv("DATABASE_URL", database_url)
    assert main(["sign-finished"]) == 0
    assert api.get(f"{table.path}/audit").json()["ok"] is True
    table.close()
