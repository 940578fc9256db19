"""docs/client-guide.md's examples work as written, each in its own process, against a real
``cardroom serve``: the raw HTTP bot (only ``requests``) plays whole games, two copies against
each other and one of each kind against the service's bot, and survives a stream answered
``429 too_many_streams``; the cardroom-client bot and the PettingZoo policy example play to the
end, the former through a refused stream too; the receipt check verifies real receipts and
refuses a forged one; the chat bot's webhook receiver answers the endpoint check, says "your
turn" once per delivery id and refuses a forged delivery. The README's "Clients" bot is the
guide's. Each block run here names its test in its fence (```python tested-by=TEST), which
tests/test_docs_run.py holds; the guide's other blocks run there."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from cardroom_client import BotSeat, Client
from client_support import STREAMS_PER_ADDRESS
from patience import ANSWER, scaled
from pytest_httpserver import HTTPServer
from serve_support import Served

from service import keys as service_keys
from service.webhooks import messages, sign

pytest_plugins = ["client_fixtures"]

ROOT = Path(__file__).resolve().parent.parent
GUIDE = (ROOT / "docs" / "client-guide.md").read_text()
README = (ROOT / "README.md").read_text()
WAIT = scaled(60.0)  # seconds: the most a refused stream may take to be counted by the server


def block(name: str, text: str = GUIDE) -> str:
    # The fence's info string may say which test runs it (tests/doc_blocks.py).
    pattern = rf"<!-- {name}:start -->\s*```python[^\n]*\n(.*?)```\s*<!-- {name}:end -->"
    match = re.search(pattern, text, re.S)
    assert match, f"no {name} block"
    return match.group(1)


def run_example(path: Path, *args: str) -> dict[str, Any] | str:
    run = subprocess.run(
        [sys.executable, str(path), *args], capture_output=True, text=True, timeout=180
    )
    assert run.returncode == 0, run.stderr
    last = run.stdout.strip().splitlines()[-1]
    return json.loads(last) if last.startswith("{") else last


# --- the raw HTTP bot ------------------------------------------------------------------------


def test_two_raw_bots_play_a_game_to_the_end(served: Served, tmp_path: Path) -> None:
    bot = tmp_path / "bot.py"
    bot.write_text(block("client-bot"))
    with Client(served.url) as client:
        game = client.create_game("sushi-go", 2)
        bots = [
            subprocess.Popen(
                [sys.executable, str(bot), game.url, name],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            for name in ("Ada", "Bea")
        ]
        results = []
        for process in bots:
            out, err = process.communicate(timeout=120)
            assert process.returncode == 0, err.decode()
            results.append(json.loads(out.decode().strip().splitlines()[-1]))
        final = game.view()
    assert final.status == "over"
    assert sorted(r["seat"] for r in results) == [0, 1]
    assert all(r["totals"] == list(final.totals) for r in results)
    assert all(r["audit_ok"] is True and r["receipts"] > 10 for r in results)


@pytest.mark.parametrize("kind", ["sushi-go", "sequence"])
def test_the_raw_bot_creates_and_plays_each_game(served: Served, tmp_path: Path, kind: str) -> None:
    bot = tmp_path / "bot.py"
    bot.write_text(block("client-bot"))
    result = run_example(bot, served.url, "Ada", "--new", kind)
    assert isinstance(result, dict) and result["seat"] == 0 and result["audit_ok"] is True
    with Client(served.url) as client:
        final = client.game(result["game_id"]).view()
    assert final.game == kind and final.status == "over"
    assert result["totals"] == list(final.totals)
    assert final.seats[0].name == "Ada"


# --- a stream refused: 429 too_many_streams ----------------------------------------------------


def refused_streams(served: Served) -> int:
    """How many stream requests the server has answered 429 so far (its /metrics)."""
    text = httpx.get(f"{served.url}/metrics", timeout=ANSWER).text
    pattern = (
        r'cardroom_http_request_duration_seconds_count\{[^}]*route="[^"]*stream"'
        r'[^}]*status="429"[^}]*\} (\S+)'
    )
    return int(sum(float(n) for n in re.findall(pattern, text)))


@contextmanager
def streams_held(served: Served) -> Iterator[ExitStack]:
    """Every stream one address may open, held open on a game nobody plays; closing the stack
    releases them."""
    with Client(served.url) as client, httpx.Client(base_url=served.url, timeout=ANSWER) as http:
        waiting = client.create_game("sushi-go", 3)
        with ExitStack() as held:
            for _ in range(STREAMS_PER_ADDRESS):
                stream = held.enter_context(http.stream("GET", f"{waiting.path}/stream"))
                assert stream.status_code == 200
            yield held


def play_through_a_refused_stream(served: Served, command: list[str]) -> str:
    """Run ``command`` while the streams are all held, until the server has refused it a
    stream; then release them. Its output, once it has finished."""
    with streams_held(served) as held:
        before = refused_streams(served)
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + WAIT
        while refused_streams(served) == before:
            assert time.monotonic() < deadline, "the example never asked for a stream"
            with suppress(subprocess.TimeoutExpired):
                process.wait(0.2)  # paces the checks; an example that ends early fails below
            if process.returncode is not None:
                break
        held.close()
    out, err = process.communicate(timeout=180)
    assert process.returncode == 0, err.decode()
    return out.decode()


def test_the_raw_bot_survives_a_refused_stream(served: Served, tmp_path: Path) -> None:
    """The guide's old bot crashed here (``TypeError: startswith first arg must be bytes``):
    it read the 429's problem+json as the event stream."""
    bot = tmp_path / "bot.py"
    bot.write_text(block("client-bot"))
    out = play_through_a_refused_stream(
        served, [sys.executable, str(bot), served.url, "Ada", "--new", "sushi-go"]
    )
    result = json.loads(out.strip().splitlines()[-1])
    with Client(served.url) as client:
        assert client.game(result["game_id"]).view().status == "over"
    assert result["audit_ok"] is True


# --- the cardroom-client examples ------------------------------------------------------------


@pytest.mark.parametrize("kind", ["sushi-go", "sequence"])
def test_the_client_bot_example_plays_each_game(served: Served, tmp_path: Path, kind: str) -> None:
    bot = tmp_path / "bot.py"
    bot.write_text(block("client-example"))
    line = run_example(bot, served.url, kind)
    assert isinstance(line, str) and line.startswith("over [") and line.endswith("] True")


def test_the_play_command_seats_the_client_bot_example(served: Served, tmp_path: Path) -> None:
    (tmp_path / "bot.py").write_text(block("client-example"))
    command = [sys.executable, "-m", "cardroom_client.play", "--game", "sequence"]
    command += ["--bot", "bot:FirstCardBot", served.url]
    run = subprocess.run(command, capture_output=True, text=True, timeout=180, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert result["status"] == "over" and result["audit_ok"] is True


def test_the_client_bot_example_survives_a_refused_stream(served: Served, tmp_path: Path) -> None:
    bot = tmp_path / "bot.py"
    bot.write_text(block("client-example"))
    out = play_through_a_refused_stream(served, [sys.executable, str(bot), served.url, "sushi-go"])
    assert out.strip().splitlines()[-1].startswith("over [")


def test_the_account_bot_example_plays_its_accounts_games(served: Served, tmp_path: Path) -> None:
    """The guide's bot that plays as an account: two games joined as the account, one before
    it starts and one while it runs, both played to their end from the account's stream."""
    bot = tmp_path / "account_bot.py"
    bot.write_text(block("client-account-bot"))
    with Client(served.url) as client:
        account = client.create_account(f"Acc{uuid.uuid4().hex[:8]}")
        token = account.mint_token(["play"], label="guide example").token
        games = [client.create_game("sushi-go", 2, bots=[BotSeat(1, "greedy")]) for _ in "ab"]
        account.join(games[0])
        process = subprocess.Popen(
            [sys.executable, str(bot), served.url, token, "2"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert process.stdout is not None
        assert process.stdout.readline().strip() == f"playing as {account.name}"
        account.join(games[1])
        out, err = process.communicate(timeout=180)
        assert process.returncode == 0, err
        lines = out.strip().splitlines()
        assert sorted(line.split()[0] for line in lines) == sorted(g.id for g in games)
        for game in games:
            assert game.view().status == "over"
        assert all(line.split()[1] == "over" for line in lines)


def test_the_unavailable_example_plays_to_the_end(served: Served, tmp_path: Path) -> None:
    """The guide's ``Unavailable`` example (issue 38, item 2): with the service up it plays its
    seat to the end (a down service past the budget: tests/test_client_outage.py)."""
    bot = tmp_path / "bot.py"
    bot.write_text(block("client-unavailable"))
    with Client(served.url) as client:
        game = client.create_game("sushi-go", 2, bots=[BotSeat(1, "greedy")])
        assert run_example(bot, served.url, game.id) == "over"
        assert game.view().status == "over"


def test_the_offline_audit_example_verifies_its_game(served: Served, tmp_path: Path) -> None:
    """The guide's ``audit_export`` example (issue 38, item 4): a game played, its export
    checked offline with the published keys and every receipt kept."""
    example = tmp_path / "audit.py"
    example.write_text(block("client-audit-export"))
    line = run_example(example, served.url)
    assert isinstance(line, str) and line.split()[0] == "True" and int(line.split()[1]) > 10


def test_the_async_example_plays_three_seats_at_once(served: Served, tmp_path: Path) -> None:
    """The guide's ``AsyncClient`` example (issue 38, item 5)."""
    example = tmp_path / "async_bots.py"
    example.write_text(block("client-async"))
    assert run_example(example, served.url) == "over True"


def test_the_readme_bot_is_the_guides() -> None:
    assert block("client-example", README) == block("client-example")


def test_the_policy_example_plays_offline_then_online(served: Served, tmp_path: Path) -> None:
    example = tmp_path / "policy.py"
    example.write_text(block("client-policy"))
    assert run_example(example, served.url) == "over"


def test_the_receipt_check_verifies_and_refuses(served: Served) -> None:
    from nacl.exceptions import BadSignatureError

    namespace: dict[str, Any] = {}
    exec(block("verify-receipt-python"), namespace)
    with httpx.Client(base_url=served.url) as http:
        keys = http.get("/.well-known/cardroom-keys").json()
        answer = http.post(
            "/games",
            json={"game": "sequence", "players": 2},
            headers={"Idempotency-Key": str(uuid.uuid4())},
        )
        receipt = answer.json()["receipt"]
        namespace["verify"](receipt, keys)
        from_header = json.loads(namespace["unb64url"](answer.headers["Cardroom-Receipt"]))
        namespace["verify"](from_header, keys)
        with pytest.raises(BadSignatureError):
            namespace["verify"]({**receipt, "version": receipt["version"] + 1}, keys)


# --- the webhook receiver -----------------------------------------------------------------------


def test_the_webhook_receiver_verifies_and_says_your_turn(
    served: Served, tmp_path: Path, httpserver_ipv4: HTTPServer
) -> None:
    """Deliveries signed as the service signs them (its own keys: the served process reads the
    same keys file) to the guide's receiver, which checks them against the served service's
    published keys and posts to a chat webhook (a receiver on loopback)."""
    chat = httpserver_ipv4
    chat.expect_request("/chat", method="POST").respond_with_data("ok")
    receiver = tmp_path / "receiver.py"
    receiver.write_text(block("client-webhook-receiver"))
    chat_url = f"http://127.0.0.1:{chat.port}/chat"
    command = [sys.executable, str(receiver), served.url, chat_url, "0"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        port = int(process.stdout.readline().split()[-1])
        keyring = service_keys.load()

        def deliver(event: dict[str, Any], msg_id: str, forge: bool = False) -> httpx.Response:
            body = json.dumps(event).encode()
            headers = sign.headers(msg_id, int(time.time()), body, sign.new_secret(), keyring)
            if forge:
                body = body.replace(b'"version": 4', b'"version": 5')
            return httpx.post(f"http://127.0.0.1:{port}/", content=body, headers=headers)

        def event(type_: str, **data: Any) -> dict[str, Any]:  # as the service builds them
            return json.loads(messages.body(type_, datetime.now(UTC), data))

        check = deliver(event("webhook.verify", challenge="c-123"), "msg_v")
        assert check.status_code == 200 and check.json() == {"challenge": "c-123"}
        link = f"{served.url}/games/g-1"
        turn = event("game.turn", game_id="g-1", version=4, seat=0, links=messages.links("g-1"))
        others = event("game.turn", game_id="g-1", version=5, seats=[1], links={})
        assert deliver(others, "msg_o").status_code == 200  # a creator's: nobody to tell
        assert deliver(turn, "msg_t").status_code == 200
        assert deliver(turn, "msg_t").status_code == 200  # the same delivery again
        forged = deliver(turn, "msg_f", forge=True)
        assert forged.status_code == 401 and "signature" in forged.json()["error"]
        said = [json.loads(request.get_data()) for request, _ in chat.log]
        assert said == [{"text": f"Your turn! {link}", "content": f"Your turn! {link}"}]
    finally:
        process.terminate()
        process.communicate(timeout=30)
