"""Docs that run (issue 38, item 6): every code block of docs/client-guide.md and
clients/python/README.md runs against a real ``cardroom serve`` started here, or is marked as
output or data, or says why it does not run. How a block says so is tests/doc_blocks.py's
docstring (and the guide's "How the examples run").

- The Python fragments of each page run in document order in one namespace, in a process of
  their own (one per page: the pages run in parallel under xdist).
- A program marked ``tested-by=TEST`` is run by that test of tests/test_client_guide.py, which
  must exist and read the block by its marker.
- Shell blocks run with bash against the server; JSON and YAML blocks are parsed.
- The guide names every error class the client exports (its table), every option of
  ``Client``/``AsyncClient`` and of the environments, and what their action encodings add up
  to, so that a new option or error fails here until it is documented."""

from __future__ import annotations

import inspect
import json
import os
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import cardroom_client
import pytest
import yaml
from cardroom_client import AsyncClient, BotSeat, CardroomError, Client
from doc_blocks import DEFAULT_URL, Block, blocks, indented_code
from pytest_httpserver import HTTPServer
from serve_support import Served, cardroom_serve
from webhook_support import SETTINGS, Receiver, receiving

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "docs" / "client-guide.md"
PAGES = [GUIDE, ROOT / "clients" / "python" / "README.md"]
GUIDE_TESTS = (ROOT / "tests" / "test_client_guide.py").read_text()
OUTPUT = {"text", "console"}  # shown, not run
DATA = {"json", "yaml"}  # parsed
RUN = 240  # seconds: the most one page's fragments or one shell block may take

RUNNER = """
import json, sys
namespace = {"__name__": "__main__"}
for path, line, text in json.load(open(sys.argv[1])):
    # The block's first line keeps its line in the page: a traceback names the page's line.
    exec(compile("\\n" * line + text, path, "exec"), namespace)
"""


def every_block() -> list[Block]:
    return [block for page in PAGES for block in blocks(page)]


def live(text: str, served: Served) -> str:
    return text.replace(DEFAULT_URL, served.url)


@pytest.fixture(scope="module")
def hooks_server() -> Iterator[HTTPServer]:
    yield from receiving()


@pytest.fixture(scope="module")
def served(database_url: str) -> Iterator[Served]:
    """The service the blocks run against: webhooks to loopback allowed (the shell blocks
    register one), no rate limits (the pages' fragments create games and accounts freely)."""
    with cardroom_serve(database_url, env={**SETTINGS, "CARDROOM_RATE_LIMITS": "off"}) as server:
        yield server


# --- every block says how it runs ---------------------------------------------------------------


def test_every_block_is_fenced_and_says_how_it_runs() -> None:
    unmarked = []
    for block in every_block():
        runs = block.mode == "" and block.lang in {"python", "sh", *OUTPUT, *DATA}
        tested = block.mode == "tested-by" and block.lang == "python"
        reasoned = block.mode == "no-run" and len(block.argument) > 10
        if not (runs or tested or reasoned):
            unmarked.append(f"{block.where} ```{block.lang} {block.mode} {block.argument}")
    indented = [f"{page.name}:{line}" for page in PAGES for line in indented_code(page)]
    assert unmarked == [], "blocks that neither run nor say why (tests/doc_blocks.py)"
    assert indented == [], "indented code blocks: fence them and say how they run"
    assert len(every_block()) >= 20  # the parser found the pages' blocks


def test_the_parser_finds_what_says_nothing(tmp_path: Path) -> None:
    """What the check above refuses: a fence with no language or an unknown mode, a no-run
    without its reason, an indented block; a ``tested-by`` names its test and marker."""
    page = tmp_path / "page.md"
    page.write_text(
        "Text\n\n    indented code\n\n- item\n    continued\n\n"
        "```\nbare\n```\n\n```python run-me\nx = 1\n```\n\n```sh no-run\nls\n```\n\n"
        "<!-- bot:start -->\n````python tested-by=test_bot\n```\n````\n<!-- bot:end -->\n"
    )
    found = [(b.lang, b.mode, b.argument, b.marker, b.text) for b in blocks(page)]
    assert found == [
        ("", "", "", None, "bare\n"),
        ("python", "run-me", "", None, "x = 1\n"),
        ("sh", "no-run", "", None, "ls\n"),
        ("python", "tested-by", "test_bot", "bot", "```\n"),
    ]
    assert indented_code(page) == [3]


def test_every_tested_by_block_is_read_by_its_test() -> None:
    tested = [block for block in every_block() if block.mode == "tested-by"]
    assert tested, "no block is run by tests/test_client_guide.py"
    for block in tested:
        assert block.marker, f"{block.where}: no <!-- NAME:start --> line before the fence"
        found = re.search(rf"\ndef {block.argument}\(.*?(?=\ndef |\Z)", GUIDE_TESTS, re.S)
        assert found, f"{block.where}: no test {block.argument} in tests/test_client_guide.py"
        assert f'block("{block.marker}"' in found.group(0), f"{block.where}: not read by its test"


@pytest.mark.parametrize(
    "block", [b for b in every_block() if b.lang in DATA], ids=lambda block: block.where
)
def test_data_blocks_parse(block: Block) -> None:
    data = json.loads(block.text) if block.lang == "json" else yaml.safe_load(block.text)
    assert isinstance(data, dict) and data, block.where


# --- the blocks run ---------------------------------------------------------------------------


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_the_python_fragments_run_in_order(page: Path, served: Served, tmp_path: Path) -> None:
    fragments = [b for b in blocks(page) if b.lang == "python" and b.mode == ""]
    assert fragments, f"{page.name} has no fragment to run"
    script = tmp_path / "fragments.json"
    script.write_text(json.dumps([[str(b.path), b.line, live(b.text, served)] for b in fragments]))
    run = subprocess.run(
        [sys.executable, "-c", RUNNER, str(script)],
        capture_output=True,
        text=True,
        timeout=RUN,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr + run.stdout


@pytest.fixture
def shell_env(served: Served, hooks_server: HTTPServer) -> dict[str, str]:
    """What the shell blocks name: an account sitting in a game with the greedy bot."""
    with Client(served.url) as client:
        account = client.create_account(f"Shell{uuid.uuid4().hex[:12]}")
        game = client.create_game("sushi-go", 2, bots=[BotSeat(1, "greedy")])
        account.join(game)
    hook = Receiver(hooks_server)
    return {
        **os.environ,
        "BASE": served.url,
        "GAME": game.id,
        "TOKEN": account.token,
        "ACCOUNT": account.id,
        "HOOK": hook.url,
    }


@pytest.mark.parametrize(
    "block",
    [b for b in every_block() if b.lang == "sh" and b.mode == ""],
    ids=lambda block: block.where,
)
def test_the_shell_blocks_run(block: Block, served: Served, shell_env: dict[str, str]) -> None:
    assert set(re.findall(r"^\s*(\w+)", block.text, re.M)) == {"curl"}, "only curl runs here"
    run = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", live(block.text, served)],
        capture_output=True,
        text=True,
        timeout=RUN,
        env=shell_env,
    )
    assert run.returncode == 0, f"{block.where}: {run.stderr}"


# --- what the guide must name --------------------------------------------------------------------


def test_the_guide_names_every_error_class() -> None:
    """Each in the errors table: a row of its own (issue 38, items 2 and 6)."""
    errors = {
        name
        for name in cardroom_client.__all__
        if inspect.isclass(value := getattr(cardroom_client, name))
        and issubclass(value, CardroomError)
    }
    assert {"CardroomError", "Refused", "Unavailable", "ReceiptError"} <= errors
    rows = set(re.findall(r"^\| `(\w+)`", GUIDE.read_text(), re.M))
    assert errors - {"CardroomError"} <= rows, errors - rows
    assert "`CardroomError`" in GUIDE.read_text()


def documented(section: str, names: list[str]) -> list[str]:
    """The names not in ``section`` as code (``name``, or ``name=``)."""
    return [n for n in names if not re.search(rf"`[^`]*\b{n}\b[^`]*`", section)]


def section(heading: str) -> str:
    text = GUIDE.read_text()
    start = text.index(heading)
    end = text.find("\n### ", start + len(heading))
    return text[start : end if end > 0 else len(text)]


def parameters(function: object) -> list[str]:
    names = inspect.signature(function).parameters  # type: ignore[arg-type]
    return [name for name in names if name != "self"]


def test_the_guide_names_every_option_of_the_clients() -> None:
    options = section("### Options of `Client`")
    assert documented(options, parameters(Client.__init__)) == []
    assert documented(options, parameters(AsyncClient.__init__)) == []


def test_the_guide_names_every_option_of_the_environments() -> None:
    from cardroom_client import env
    from cardroom_client.env import aec, sequence, sushigo

    offline = section("### Offline: the same rules in a PettingZoo environment")
    making = (aec.sushi_go_env, aec.sequence_env, aec.CardroomEnv.__init__)
    for function in (*making, aec.CardroomEnv.reset):
        assert documented(offline, parameters(function)) == [], function
    assert documented(offline, list(env.__all__)) == []
    helpers = ["deal_seed", "encode_pick", "encode_move", "decode", "to_move", "legal_actions"]
    assert documented(offline, helpers) == []
    # The encodings' sizes, as the guide states them (a change of encoding changes them).
    for number in (sushigo.ACTIONS, sequence.ACTIONS, sequence.PLAYS, sequence.PASS):
        assert f"{number:,}" in offline or str(number) in offline, number
    order = ", ".join(f"`{kind}`" for kind in sushigo.KINDS)
    assert order in " ".join(offline.split()), "the guide lists Sushi Go!'s cards in KINDS order"
