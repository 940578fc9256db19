"""The service's keys (service/keys.py): outside the database, rotated without invalidating old
receipts or sealed seeds; receipts that prove nothing refused with the reason; seeds at rest
sealed so that the database's owner reads none."""

from __future__ import annotations

import json
import stat
import uuid
from pathlib import Path
from typing import Any

import psycopg
import pytest
from api_client import ApiClient
from cryptography.exceptions import InvalidTag

from domain import receipts
from service import keys
from service.cli.main import main

pytest_plugins = ["api_fixtures"]

GAME = str(uuid.uuid4())
RECORDS = [{"game_id": GAME, "version": v, "hash": f"{v:064x}"} for v in range(1, 6)]
SEED = bytes(range(32))


@pytest.fixture
def no_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "keys" / "keys.json"
    monkeypatch.setenv(keys.ENV_FILE, str(path))
    monkeypatch.delenv(keys.ENV_KEYS, raising=False)
    return path


@pytest.fixture
def keys_file(no_keys: Path) -> Path:
    assert main(["keys", "init"]) == 0
    return no_keys


def ring() -> keys.Keyring:
    return keys.Keyring.from_jwks(keys.read_document())


def test_keys_are_made_by_init_only_readable_by_their_owner(no_keys: Path) -> None:
    with pytest.raises(keys.KeysMissing, match=str(no_keys)):
        ring()
    assert main(["keys"]) == 2  # showing them creates nothing either
    assert not no_keys.exists()
    assert main(["keys", "init"]) == 0
    first = ring()
    assert stat.S_IMODE(no_keys.stat().st_mode) == 0o600
    assert main(["keys", "init"]) == 2  # keys in use are never replaced
    assert ring().active_signing == first.active_signing
    assert first.active_signing == receipts.key_id(first.public[first.active_signing])


def test_rotation_keeps_old_receipts_verifiable_and_old_seeds_readable(keys_file: Path) -> None:
    old = ring()
    game = uuid.uuid4()
    signed_before = old.receipt(game, 3, "ab" * 32, SEED)
    sealed_before = old.seal_seed(game, b"s" * 32)

    assert main(["keys", "rotate"]) == 0
    new = ring()
    assert new.active_signing != old.active_signing and new.active_seed != old.active_seed
    signed_after = new.receipt(game, 4, "cd" * 32, SEED)
    assert signed_after["kid"] == new.active_signing
    published = receipts.public_keys(new.jwks())
    assert set(published) == {old.active_signing, new.active_signing}
    for receipt in (signed_before, signed_after):
        assert receipts.verify(receipt, published) == receipt
    assert new.open_seed(game, *sealed_before) == b"s" * 32
    assert new.seal_seed(game, b"t" * 32)[1] == new.active_seed

    # Retired for good: the private part dropped, the public key still published.
    document = keys.read_document()
    for jwk in document["keys"]:
        if jwk.get("kid") == old.active_signing:
            del jwk["d"]
    keys_file.write_text(json.dumps(document))
    assert receipts.verify(signed_before, receipts.public_keys(ring().jwks())) == signed_before


def test_cardroom_keys_prints_the_public_keys(
    keys_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["keys"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == ring().jwks()
    assert all("d" not in jwk for jwk in printed["keys"])
    assert [jwk["kty"] for jwk in printed["keys"]] == ["OKP"]  # no seed key leaves the file


def test_keys_from_the_environment_are_used_and_not_rotated_in_place(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    document = {"keys": keys.new_pair()}
    monkeypatch.setenv(keys.ENV_KEYS, json.dumps(document))
    monkeypatch.setenv(keys.ENV_FILE, str(tmp_path / "unused.json"))
    assert ring().active_signing == document["keys"][0]["kid"]
    assert main(["keys", "--rotate"]) == 2
    assert not (tmp_path / "unused.json").exists()


def test_a_keys_document_without_a_signing_key_is_refused() -> None:
    with pytest.raises(keys.KeysError, match="signing key"):
        keys.Keyring.from_jwks({"keys": [keys.new_pair()[1]]})


# --- receipts that prove nothing ---------------------------------------------------------------


def test_unknown_key_forged_signature_and_another_game_are_refused_with_reasons(
    keys_file: Path,
) -> None:
    service = ring()
    published = receipts.public_keys(service.jwks())
    stranger = keys.Keyring.from_jwks({"keys": keys.new_pair()})
    good = service.receipt(uuid.UUID(GAME), 2, RECORDS[1]["hash"], SEED)
    given = [
        stranger.receipt(uuid.UUID(GAME), 3, RECORDS[2]["hash"], SEED),  # unknown key
        {**service.receipt(uuid.UUID(GAME), 4, RECORDS[3]["hash"], SEED), "version": 5},  # forged
        service.receipt(uuid.uuid4(), 4, RECORDS[3]["hash"], SEED),  # another game
        {"format": "something else"},
        good,
    ]
    result = receipts.check_receipts(given, RECORDS, published, SEED)
    reasons = {r["receipt"]: r["reason"] for r in result["refused"]}
    assert f"signed by key {stranger.active_signing!r}" in reasons[1]
    assert "not one of the given public keys" in reasons[1]
    assert "does not verify" in reasons[2] and "forged or altered" in reasons[2]
    assert f"not {GAME}" in reasons[3]
    assert "format" in reasons[4]
    assert 5 not in reasons
    assert (result["ok"], result["checked"]) == (False, 1)  # issue 38: refused is not "ok"
    assert result["detail"].startswith("receipts 1, 2, 3, 4 are refused")


def test_the_http_audit_refuses_receipts_that_prove_nothing(api: ApiClient) -> None:
    bots = [{"seat": 0, "kind": "greedy"}, {"seat": 1, "kind": "greedy"}]
    created = api.post("/games", {"game": "sushi-go", "players": 2, "bots": bots}).json()
    assert created["status"] == "over"  # played to its end by its bots
    game, good = created["game_id"], created["receipt"]
    stranger = keys.Keyring.from_jwks({"keys": keys.new_pair()})
    given = [
        {**good, "kid": stranger.active_signing},  # signed, it says, by a key not published
        {**good, "commitment": "0" * 64},
        api.create_game(2)["receipt"],
        good,
    ]
    report = api.post(f"/games/{game}/audit", {"receipts": given}).json()
    # Nothing contradicts the rows, but the evidence given is refused: not "ok" (issue 38).
    assert report["ok"] is False and report["receipts"]["first_bad_version"] is None
    assert report["receipts"]["checked"] == 1
    reasons = [r["reason"] for r in report["receipts"]["refused"]]
    assert "not one of the given public keys" in reasons[0]
    assert "forged or altered" in reasons[1]
    assert f"not {game}" in reasons[2]
    assert len(reasons) == 3


def test_the_audit_with_receipts_refuses_a_body_that_is_not_a_list(api: ApiClient) -> None:
    bots = [{"seat": 0, "kind": "greedy"}, {"seat": 1, "kind": "greedy"}]
    game = api.post("/games", {"game": "sushi-go", "players": 2, "bots": bots}).json()["game_id"]
    response = api.post(f"/games/{game}/audit", {"receipts": "all"}, request_valid=False)
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_request"


def seal_round_trip(service: keys.Keyring) -> tuple[uuid.UUID, bytes, str]:
    game = uuid.uuid4()
    return (game, *service.seal_seed(game, b"\x07" * 32))


def test_a_sealed_seed_opens_only_with_its_key_and_its_game(keys_file: Path) -> None:
    service = ring()
    game, sealed, key_id = seal_round_trip(service)
    assert service.open_seed(game, sealed, key_id) == b"\x07" * 32
    with pytest.raises(InvalidTag):
        service.open_seed(uuid.uuid4(), sealed, key_id)  # moved to another game's row
    stranger = keys.Keyring.from_jwks({"keys": keys.new_pair()})
    with pytest.raises(keys.KeysError, match="unknown key"):
        stranger.open_seed(game, sealed, key_id)


def test_the_database_owner_reads_no_seed(
    api: ApiClient, owner_connection: psycopg.Connection[Any]
) -> None:
    bots = [{"seat": 0, "kind": "greedy"}, {"seat": 1, "kind": "random"}]
    view = api.post("/games", {"game": "sushi-go", "players": 2, "bots": bots}).json()
    assert view["status"] == "over"  # played by its bots: the seed is revealed
    seed = bytes.fromhex(view["seed"])
    stored, key_id = owner_connection.execute(
        "SELECT seed, key_id FROM game_secrets WHERE game_id = %s", (view["game_id"],)
    ).fetchone()
    assert key_id is not None
    assert seed not in bytes(stored)
    assert len(stored) == 12 + 32 + 16  # nonce, sealed seed, tag
