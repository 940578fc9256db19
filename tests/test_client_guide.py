"""The client guide's bot (docs/client-guide.md) works as written, each copy in its own process
with only ``requests``: two play a whole Sushi Go! game against each other over the SSE stream,
and one creates and plays a whole game of each kind against the service's bot."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from api_client import ApiClient, LiveServer

pytest_plugins = ["api_fixtures"]

GUIDE = (Path(__file__).resolve().parent.parent / "docs" / "client-guide.md").read_text()


def guide_bot() -> str:
    pattern = r"<!-- client-bot:start -->\s*```python\n(.*?)```\s*<!-- client-bot:end -->"
    match = re.search(pattern, GUIDE, re.S)
    assert match, "docs/client-guide.md has no client-bot block"
    return match.group(1)


def test_two_guide_bots_play_a_game_to_the_end(
    live_server: LiveServer, api: ApiClient, tmp_path: Path
) -> None:
    bot = tmp_path / "bot.py"
    bot.write_text(guide_bot())
    game = api.create_game(2)
    url = f"{live_server.url}/games/{game['game_id']}"
    bots = [
        subprocess.Popen(
            [sys.executable, str(bot), url, name], stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        for name in ("Ada", "Bea")
    ]
    results = []
    for process in bots:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err.decode()
        results.append(json.loads(out.decode().strip().splitlines()[-1]))
    final = api.game(game["game_id"])
    assert final["status"] == "over"
    assert sorted(r["seat"] for r in results) == [0, 1]
    assert all(r["totals"] == final["totals"] for r in results)


@pytest.mark.parametrize("kind", ["sushi-go", "sequence"])
def test_the_guide_bot_creates_and_plays_each_game(
    live_server: LiveServer, api: ApiClient, tmp_path: Path, kind: str
) -> None:
    bot = tmp_path / "bot.py"
    bot.write_text(guide_bot())
    command = [sys.executable, str(bot), live_server.url, "Ada", "--new", kind]
    run = subprocess.run(command, capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert result["seat"] == 0
    final = api.game(result["game_id"])
    assert final["game"] == kind and final["status"] == "over"
    assert result["totals"] == final["totals"]
    assert final["seats"][0]["name"] == "Ada"
