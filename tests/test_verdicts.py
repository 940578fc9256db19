"""Issue 38 point 3: a verdict says what it found. A receipt given to the audit that is refused
(one byte changed, another game's, signed by a key the service never published) makes the
audit's ``ok`` false, over the API and in ``cardroom audit --receipts`` (exit 1), naming it;
a report with only receipts that agree is still ``ok``."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from api_client import ApiClient

from service import keys
from service.cli.main import main

pytest_plugins = ["api_fixtures"]

Tamper = Callable[[ApiClient, str, dict[str, Any]], dict[str, Any]]


def finished_game(api: ApiClient) -> tuple[str, dict[str, Any]]:
    """A game its bots played to the end, and the receipt its creation was answered with."""
    bots = [{"seat": 0, "kind": "greedy"}, {"seat": 1, "kind": "random"}]
    created = api.post("/games", {"game": "sushi-go", "players": 2, "bots": bots}).json()
    assert created["status"] == "over"
    return created["game_id"], created["receipt"]


def one_byte_changed(api: ApiClient, game: str, good: dict[str, Any]) -> dict[str, Any]:
    commitment = good["commitment"]
    return {**good, "commitment": ("1" if commitment[0] == "0" else "0") + commitment[1:]}


def another_game(api: ApiClient, game: str, good: dict[str, Any]) -> dict[str, Any]:
    return finished_game(api)[1]  # a true receipt, of a different game


def unknown_key(api: ApiClient, game: str, good: dict[str, Any]) -> dict[str, Any]:
    """A well-formed receipt for this game's first event, signed by a key never published."""
    records = [json.loads(line) for line in api.get(f"/games/{game}/export").text.splitlines()]
    events = [r for r in records if "checkpoint" not in r]
    seed = bytes.fromhex(events[-1]["data"]["seed"])  # game_ended reveals it (S18)
    stranger = keys.Keyring.from_jwks({"keys": keys.new_pair()})
    return stranger.receipt(uuid.UUID(game), 1, events[0]["hash"], seed)


TAMPERINGS: dict[str, tuple[Tamper, str]] = {
    "a byte changed": (one_byte_changed, "forged or altered"),
    "another game's": (another_game, "it is for game"),
    "an unknown key": (unknown_key, "not one of the given public keys"),
}


@pytest.mark.parametrize("kind", TAMPERINGS)
def test_the_http_audit_is_not_ok_over_a_refused_receipt(api: ApiClient, kind: str) -> None:
    tamper, reason = TAMPERINGS[kind]
    game, good = finished_game(api)
    honest = api.post(f"/games/{game}/audit", {"receipts": [good]}).json()
    assert honest["ok"] is True and honest["receipts"]["ok"] is True

    report = api.post(f"/games/{game}/audit", {"receipts": [good, tamper(api, game, good)]})
    verdict = report.json()
    assert verdict["ok"] is False
    assert verdict["receipts"]["ok"] is False and verdict["receipts"]["checked"] == 1
    assert [r["receipt"] for r in verdict["receipts"]["refused"]] == [2]
    assert reason in verdict["receipts"]["refused"][0]["reason"]
    assert verdict["receipts"]["detail"].startswith("receipt 2 is refused: ")
    assert "1 receipt agrees" in verdict["receipts"]["detail"]
    # the rows themselves are sound: only the evidence is refused
    assert [verdict[c]["ok"] for c in ("chain", "deals", "scores", "replay", "signature")] == [
        True
    ] * 5


@pytest.mark.parametrize("kind", TAMPERINGS)
def test_cardroom_audit_exits_1_over_a_refused_receipt(
    api: ApiClient,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    kind: str,
) -> None:
    monkeypatch.setenv("COLUMNS", "300")  # no line of the report wraps
    tamper, reason = TAMPERINGS[kind]
    game, good = finished_game(api)
    export, keys_file = tmp_path / "game.jsonl", tmp_path / "keys.json"
    export.write_text(api.get(f"/games/{game}/export").text)
    keys_file.write_text(json.dumps(api.get("/.well-known/cardroom-keys").json()))
    audit = ["audit", str(export), "--keys", str(keys_file), "--receipts"]
    honest, tampered = tmp_path / "honest.json", tmp_path / "tampered.json"
    honest.write_text(json.dumps([good]))
    tampered.write_text(json.dumps([tamper(api, game, good), good]))

    assert main([*audit, str(honest)]) == 0
    capsys.readouterr()
    assert main([*audit, str(tampered)]) == 1
    out = capsys.readouterr().out
    assert "✗ failed" in out and "receipt 1 refused:" in out and reason in out
    assert main([*audit, str(tampered), "--json"]) == 1
    printed = json.loads(capsys.readouterr().out)
    assert printed["ok"] is False and printed["receipts"]["refused"][0]["receipt"] == 1
