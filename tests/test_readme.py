"""The README's promises, kept: its curl game runs as written, and its rules copy is current."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import requests
from api_client import LiveServer
from patience import ANSWER

pytest_plugins = ["api_fixtures"]

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def readme_block(name: str) -> str:
    match = re.search(
        rf"<!-- {name}:start -->\s*```sh\n(.*?)```\s*<!-- {name}:end -->", README, re.S
    )
    assert match, f"README.md has no {name} block"
    return match.group(1)


def test_the_readme_curl_game_plays_a_whole_game(live_server: LiveServer) -> None:
    script = "set -euo pipefail\n" + readme_block("curl-game")
    result = subprocess.run(
        ["bash", "-c", script],
        env={"BASE": live_server.url, "PATH": "/usr/bin:/bin:/usr/local/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert lines[0].startswith(f"game: {live_server.url}/games/")
    assert "winners:" in lines[-2]
    assert lines[-1].endswith("events")
    # 2 players: 3 rounds x 10 turns; every event of the game is in the log
    assert int(lines[-1].split()[0]) > 3 * 10 * 3


def test_the_rules_in_docs_are_the_projects_rulings() -> None:
    docs = (ROOT / "docs" / "rules" / "sushi-go.md").read_text()
    for number in range(1, 19):
        assert f"S{number}." in docs
    shared = ROOT.parent / "shared" / "rules" / "sushi-go.md"
    if shared.exists():  # beside a checkout of the project, as in CI
        assert docs == shared.read_text(), "docs/rules/sushi-go.md is out of date: copy it again"


def test_the_readme_verifies_a_receipt_with_openssl(
    live_server: LiveServer, tmp_path: Path
) -> None:
    """The receipt format is documented well enough to verify with tools that share no code
    with the service: jq for the canonical JSON, openssl for Ed25519."""
    created = requests.post(
        f"{live_server.url}/games", json={"game": "sushi-go", "players": 2}, timeout=ANSWER
    )
    receipt = created.json()["receipt"]
    keys = requests.get(f"{live_server.url}/.well-known/cardroom-keys", timeout=ANSWER).json()
    (tmp_path / "keys.json").write_text(json.dumps(keys))

    def verify(given: dict) -> subprocess.CompletedProcess[str]:
        (tmp_path / "receipt.json").write_text(json.dumps(given))
        script = "set -euo pipefail\n" + readme_block("verify-receipt")
        return subprocess.run(
            ["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=30
        )

    verified = verify(receipt)
    assert verified.returncode == 0, verified.stderr
    assert "Signature Verified Successfully" in verified.stdout
    assert verify({**receipt, "version": receipt["version"] + 1}).returncode != 0


def test_the_readme_opens_a_receipt_s_commitment_against_the_export(
    live_server: LiveServer, tmp_path: Path
) -> None:
    bots = [{"seat": 0, "kind": "greedy"}, {"seat": 1, "kind": "greedy"}]
    body = {"game": "sushi-go", "players": 2, "bots": bots}
    created = requests.post(f"{live_server.url}/games", json=body, timeout=ANSWER).json()
    export = requests.get(
        f"{live_server.url}/games/{created['game_id']}/export", timeout=ANSWER
    ).text
    (tmp_path / "game.jsonl").write_text(export)

    def opened(receipt: dict) -> list[str]:
        (tmp_path / "receipt.json").write_text(json.dumps(receipt))
        script = "set -euo pipefail\n" + readme_block("open-receipt")
        result = subprocess.run(
            ["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=30
        )
        assert result.returncode == 0, result.stderr
        return result.stdout.split()

    recomputed, signed = opened(created["receipt"])
    assert recomputed == signed
    recomputed, signed = opened({**created["receipt"], "version": 2})  # another event's hash
    assert recomputed != signed
