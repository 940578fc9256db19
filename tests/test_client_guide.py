"""The client guide's bot (docs/client-guide.md) works as written: two copies of it, each in its
own process with only ``requests``, play a whole game against each other over the SSE stream."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

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
    url = f"{live_server.url}/games/{game['id']}"
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
    final = api.game(game["id"])
    assert final["status"] == "over"
    assert sorted(r["seat"] for r in results) == [0, 1]
    assert all(r["totals"] == final["totals"] for r in results)
