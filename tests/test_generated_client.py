"""A client generated from openapi.yaml by openapi-python-client (a tool none of us wrote) plays
a complete game, following the SSE stream: the contract is enough to build a client from."""

from __future__ import annotations

import importlib
import inspect
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from api_client import LiveServer
from patience import ANSWER

pytest_plugins = ["api_fixtures"]

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "generated_client"  # not cardroom_client: that is our own package (clients/python)


# Responses the generator has no code for, as it says on stderr: files that are not JSON (the
# export is JSON Lines; the contract is YAML). Any other warning is a piece of the contract lost.
KNOWN_WARNINGS = {
    ("GET /games/{game_id}/export", "Unsupported content_type application/x-ndjson"),
    ("GET /openapi.yaml", "Unsupported content_type application/yaml"),
}


def generator_warnings(stderr: str) -> set[tuple[str, str]]:
    """(operation, reason) of each ``WARNING parsing <operation> within <tag>.`` on stderr."""
    found = set()
    for block in stderr.split("WARNING parsing ")[1:]:
        operation = block.split(" within ")[0]
        reason = re.search(r"\(([^()]*)\)", block)
        found.add((operation, reason[1] if reason else block.strip().splitlines()[-1]))
    return found


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    out = tmp_path_factory.mktemp("generated")
    config = out / "config.yaml"
    # The generator reads only JSON, octet-stream and text/* bodies: read the export (JSON Lines)
    # as bytes and this document as text, as a client developer would tell it to.
    config.write_text(
        "content_type_overrides:\n"
        "  application/x-ndjson: application/octet-stream\n"
        "  application/yaml: text/plain\n"
        "post_hooks: []\n"  # no formatter run on the generated code
    )
    tool = shutil.which("openapi-python-client", path=str(Path(sys.executable).parent))
    assert tool, "openapi-python-client is a test dependency (pyproject.toml)"
    result = subprocess.run(
        [
            tool,
            "generate",
            "--path",
            str(ROOT / "openapi.yaml"),
            "--meta",
            "none",
            "--config",
            str(config),
            "--output-path",
            str(out / PACKAGE),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    # Every schema and every response generated: no warning on either stream.
    assert "Unable to process schema" not in result.stdout, result.stdout
    assert "warning" not in (result.stdout + result.stderr).lower(), result.stdout + result.stderr
    assert generator_warnings(result.stderr) <= KNOWN_WARNINGS, result.stderr
    sys.path.insert(0, str(out))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(out))
        for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
            del sys.modules[name]


def module(name: str) -> Any:
    return importlib.import_module(f"{PACKAGE}.{name}")


def sse_events(response: Any) -> Iterator[tuple[str, str]]:
    """(id, event type) of each message of a text/event-stream response (httpx)."""
    event_id, kind = "", ""
    for line in response.iter_lines():
        if line.startswith("id:"):
            event_id = line[3:].strip()
        elif line.startswith("event:"):
            kind = line[6:].strip()
        elif line == "" and kind:
            yield event_id, kind
            kind = ""


def test_every_game_has_a_typed_move(generated: ModuleType) -> None:
    """The move body is a union of one model per game (Sequence's three shapes of a move), so a
    client builds a move from typed fields."""
    make_move = module("api.play.make_move")
    models = module("models")
    body = inspect.signature(make_move.sync).parameters["body"].annotation
    for name in ("SushiGoMove", "SequencePlay", "SequenceDiscard", "SequencePass"):
        assert name in str(body), body
        assert hasattr(models, name), name
    play = models.SequencePlay(turn=1, card=models.SequencePlayCard("7H"), cell=[4, 8])
    assert play.to_dict() == {"turn": 1, "card": "7H", "cell": [4, 8]}


def test_a_generated_client_plays_a_whole_game(
    generated: ModuleType, live_server: LiveServer
) -> None:
    models = module("models")
    create_game = module("api.games.create_game")
    get_game = module("api.games.get_game")
    join_game = module("api.play.join_game")
    make_move = module("api.play.make_move")

    anonymous = generated.Client(base_url=live_server.url)
    view = create_game.sync(
        client=anonymous, body=models.SushiGoCreateGameRequest(game="sushi-go", players=2)
    )
    assert isinstance(view, models.SushiGoView), view
    seats = []
    for name in ("gen-a", "gen-b"):
        granted = join_game.sync(view.game_id, client=anonymous, body=models.JoinRequest(name=name))
        assert isinstance(granted, models.SeatGranted), granted
        seats.append(generated.AuthenticatedClient(base_url=live_server.url, token=granted.token))

    def play_turn() -> str:
        status = ""
        for seat in seats:
            mine = get_game.sync(view.game_id, client=seat)
            status = str(mine.status.value if hasattr(mine.status, "value") else mine.status)
            if status != "playing" or mine.you.pick is not None or not mine.you.hand:
                continue
            card = mine.you.hand[0]
            move = models.SushiGoMove(round_=mine.round_, turn=mine.turn, cards=[card])
            assert isinstance(
                make_move.sync(view.game_id, client=seat, body=move), models.SushiGoView
            )
        return status

    last_id = ""
    status = play_turn()
    for _connection in range(50):  # a stream lives 60 s at most; a game needs far fewer
        if status == "over":
            break
        httpx_client = seats[0].get_httpx_client()
        headers = {"Last-Event-ID": last_id} if last_id else {}
        with httpx_client.stream(
            "GET", f"/games/{view.game_id}/stream", headers=headers, timeout=ANSWER
        ) as response:
            assert response.status_code == 200
            for event_id, kind in sse_events(response):
                last_id = event_id  # to resume from, if the stream ends first
                if kind in ("round_dealt", "turn_revealed"):
                    status = play_turn()
                if kind == "game_ended":
                    status = "over"
                    break
    final = get_game.sync(view.game_id, client=anonymous)
    assert str(final.status.value if hasattr(final.status, "value") else final.status) == "over"
    assert final.winners
