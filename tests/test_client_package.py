"""The client package (clients/python, ``cardroom_client``) against a real ``cardroom serve``:
bots play whole games following the stream, every receipt is verified and audited, a POST
keeps its Idempotency-Key across retries, a busy answer is retried after its Retry-After, a
forged receipt is refused (and a kept one altered fails the audit), a refused stream falls back
to the long poll, and ``python -m cardroom_client.play`` plays a bot module to the end."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import uuid
import zipfile
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest
from cardroom_client import (
    BotSeat,
    CardroomError,
    Client,
    FirstMoveBot,
    ReceiptError,
    Seat,
    SushiGoPick,
    SushiGoView,
    View,
)
from cardroom_client.receipts import unb64url
from client_support import STREAMS_PER_ADDRESS, Fault, Faulty
from patience import ANSWER
from serve_support import Served, cardroom_serve

pytest_plugins = ["client_fixtures"]


def faulty_client(served: Served, fault: Fault, sleeps: list[float]) -> tuple[Client, Faulty]:
    transport = Faulty(fault)
    http = httpx.Client(base_url=served.url, transport=transport, timeout=ANSWER)
    return Client(served.url, http=http, sleep=sleeps.append), transport


def play_in_threads(seats: list[Seat]) -> list[View]:
    """Each seat played by a FirstMoveBot in its own thread; their final views."""
    finals: list[Any] = [None] * len(seats)
    errors: list[BaseException] = []

    def run(index: int) -> None:
        try:
            finals[index] = FirstMoveBot().play(seats[index])
        except BaseException as exc:  # reported below, in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(seats))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not errors, errors
    assert all(not t.is_alive() for t in threads), "a bot did not finish in 2 minutes"
    return finals


def test_two_bots_play_sushi_go_and_their_receipts_pass_the_audit(served: Served) -> None:
    with Client(served.url) as client:
        game = client.create_game("sushi-go", 2)
        seats = [game.join("Ada"), game.join("Bea")]
        finals = play_in_threads(seats)
        assert {f.status for f in finals} == {"over"}
        assert finals[0].totals == finals[1].totals and finals[0].winners
        receipts = client.receipts(game)
        # one per command: the creation, two joins, each seat's picks (S5: not the last card)
        assert len(receipts) >= 3 + 2 * 10
        assert len({r["version"] for r in receipts}) == len(receipts)
        report = client.audit(game)
        assert report["ok"] is True
        assert report["receipts"]["checked"] == len(receipts) and not report["receipts"]["refused"]


def test_the_audit_is_not_ok_when_a_kept_receipt_was_altered(served: Served) -> None:
    """Issue 38 point 3: a kept receipt with one byte changed is refused, and the verdict says
    so (``ok`` false, the receipt named), where it used to stay ``ok``."""
    with Client(served.url) as client:
        game = client.create_game("sushi-go", 2, bots=[BotSeat(0, "random"), BotSeat(1, "greedy")])
        assert client.audit(game)["ok"] is True  # over at once, its creation's receipt kept
        kept = client.receipts(game)[0]  # the kept receipt itself, altered where it is stored
        kept["commitment"] = ("1" if kept["commitment"][0] == "0" else "0") + kept["commitment"][1:]
        report = client.audit(game)
        assert report["ok"] is False and report["receipts"]["ok"] is False
        assert [r["receipt"] for r in report["receipts"]["refused"]] == [1]
        assert "forged or altered" in report["receipts"]["detail"]


def test_typed_moves_and_a_refused_move(served: Served) -> None:
    with Client(served.url) as client:
        game = client.create_game("sushi-go", 2, bots=[BotSeat(1, "random")])
        seat = game.join("Cy")
        view = seat.view()
        assert isinstance(view, SushiGoView) and view.my_move and view.you is not None
        card = view.you.hand[0]
        with pytest.raises(CardroomError) as stale:
            seat.move(SushiGoPick(view.round, view.turn + 1, (card,)))
        assert stale.value.status == 409 and stale.value.code == "stale_move"
        after = seat.move(SushiGoPick(view.round, view.turn, (card,)))
        assert after.version > view.version and after.turn == view.turn + 1


def test_a_lost_answer_is_retried_with_the_same_key(served: Served) -> None:
    """The first pick's answer is lost after the server took it: the retry carries the same
    Idempotency-Key and gets the first answer again; the pick is recorded once."""
    lost: list[httpx.Request] = []

    def fault(request: httpx.Request) -> str | None:
        if request.method == "POST" and request.url.path.endswith("/moves") and not lost:
            lost.append(request)
            return "lose"
        return None

    sleeps: list[float] = []
    client, transport = faulty_client(served, fault, sleeps)
    with client:
        game = client.create_game("sushi-go", 2, bots=[BotSeat(1, "greedy")])
        seat = game.join("Di")
        view = seat.view()
        assert isinstance(view, SushiGoView) and view.you is not None
        seat.move(SushiGoPick(view.round, view.turn, (view.you.hand[0],)))
        moves = [r for r in transport.sent if r.url.path.endswith("/moves")]
        assert len(moves) == 2 and sleeps  # sent, lost, sent again after a pause
        keys = {r.headers["Idempotency-Key"] for r in moves}
        assert len(keys) == 1
        replayed = [a for a in transport.answers if a.request.url.path.endswith("/moves")]
        assert replayed[-1].headers.get("Idempotent-Replayed") == "true"
        events = client.request("GET", f"{game.path}/events").json()["events"]
        mine = [e for e in events if e["type"] == "card_picked" and e["data"]["seat"] == 0]
        assert len(mine) == 1
        receipts = client.receipts(game)
        assert len({r["version"] for r in receipts}) == len(receipts)


def test_a_busy_answer_is_retried_after_its_retry_after(served: Served) -> None:
    busy: list[str] = []

    def fault(request: httpx.Request) -> str | None:
        if request.method == "POST" and len(busy) < 2:
            busy.append(request.headers["Idempotency-Key"])
            return "busy"
        return None

    sleeps: list[float] = []
    client, transport = faulty_client(served, fault, sleeps)
    with client:
        game = client.create_game("sequence", 2)
        assert sleeps[:2] == [0.0, 0.0]  # Retry-After: 0, twice
        creations = [r for r in transport.sent if r.method == "POST"]
        assert len(creations) == 3
        assert {r.headers["Idempotency-Key"] for r in creations} == {busy[0]}
        assert game.view().status == "waiting"


def test_a_503_that_outlasts_the_retries_says_its_cause(served: Served) -> None:
    sleeps: list[float] = []
    client, transport = faulty_client(
        served, lambda r: "busy" if r.method == "POST" else None, sleeps
    )
    client.retries = 2
    with client, pytest.raises(CardroomError) as refused:
        client.create_game("sushi-go", 2)
    assert len(transport.sent) == 2 and sleeps == [0.0]
    error = refused.value
    assert (error.status, error.code, error.cause) == (503, "database_unavailable", "down")
    assert "(cause: down)" in str(error)


@pytest.mark.parametrize("fault", ["forge", "mismatch"])
def test_a_receipt_that_does_not_verify_is_refused(served: Served, fault: str) -> None:
    def inject(request: httpx.Request) -> str | None:
        return fault if request.url.path.endswith("/players") else None

    client, _ = faulty_client(served, inject, [])
    with client:
        game = client.create_game("sushi-go", 3)
        with pytest.raises(ReceiptError):
            game.join("Ed")
        assert len(client.receipts(game)) == 1  # the creation's; not the refused one


def test_the_receipt_header_is_unpadded_base64url_of_the_receipt(served: Served) -> None:
    with httpx.Client(base_url=served.url) as http:
        answer = http.post(
            "/games",
            json={"game": "sushi-go", "players": 2},
            headers={"Idempotency-Key": str(uuid.uuid4())},
        )
        header = answer.headers["Cardroom-Receipt"]
        assert "=" not in header
        assert json.loads(unb64url(header)) == answer.json()["receipt"]


def test_a_refused_stream_falls_back_to_the_long_poll(served: Served) -> None:
    """With every stream this address may hold taken, following a game still gets every
    event, once and in order: the stream's 429 is answered by the long poll, and the stream
    is not asked again before its Retry-After."""
    with Client(served.url) as client:
        game = client.create_game("sushi-go", 2, bots=[BotSeat(0, "random"), BotSeat(1, "random")])
        waiting = client.create_game("sushi-go", 3)  # its streams stay open
        with ExitStack() as held, httpx.Client(base_url=served.url, timeout=ANSWER) as http:
            for _ in range(STREAMS_PER_ADDRESS):
                stream = held.enter_context(http.stream("GET", f"{waiting.path}/stream"))
                assert stream.status_code == 200
            opened: list[int] = []
            sleeps: list[float] = []
            hooks = {"response": [lambda r: opened.append(r.status_code)]}
            follower = Client(served.url, http=httpx.Client(base_url=served.url, event_hooks=hooks))
            follower.sleep = sleeps.append
            versions = [event.version for event in follower.game(game.id).events()]
            follower.close()
        final = game.view()
        assert versions == list(range(1, final.version + 1))
        assert opened[0] == 429  # the stream, refused; the rest came by the long poll
        assert opened.count(429) >= 1 and 200 in opened


BOT_MODULE = '''
from cardroom_client import Bot, SequencePass, SequencePlay, SushiGoPick


class MyBot(Bot):
    """The last card of the hand; in Sequence the last cell of the last playable card."""

    def choose(self, view):
        you = view.you
        if view.game == "sushi-go":
            dummy = you.hand[0] if you.controls_dummy else None
            return SushiGoPick(view.round, view.turn, (you.hand[-1],), dummy_card=dummy)
        playable = [p for p in you.plays if p.cells]
        if playable:
            return SequencePlay(view.turn, playable[-1].card, playable[-1].cells[-1])
        return SequencePass(view.turn)
'''


@pytest.mark.parametrize(
    ("kind", "extra"),
    [("sushi-go", ["--rules", '{"dummy": true}']), ("sequence", ["--players", "4"])],
)
def test_the_play_command_plays_a_bot_module_to_the_end(
    served: Served, tmp_path: Path, kind: str, extra: list[str]
) -> None:
    (tmp_path / "mybot.py").write_text(BOT_MODULE)
    command = [sys.executable, "-m", "cardroom_client.play", "--game", kind]
    command += ["--bot", "mybot:MyBot", "--name", "Mo", *extra, served.url]
    run = subprocess.run(command, capture_output=True, text=True, timeout=180, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert result["game"] == kind and result["status"] == "over" and result["audit_ok"] is True
    with Client(served.url) as client:
        final = client.game(result["game_id"]).view()
        assert final.status == "over" and list(final.totals) == result["totals"]
        assert final.seats[0].name == "Mo"


def test_the_client_stands_alone(tmp_path: Path) -> None:
    """Importing the client, its bots, its play command and the policy adapter loads nothing of
    the service (nor its engine, nor Flask): it works where only the package is installed."""
    code = (
        "import sys\n"
        "import cardroom_client, cardroom_client.play\n"
        "from cardroom_client.env import policy_bot\n"
        "loaded = sorted({m.split('.')[0] for m in sys.modules} & {'domain', 'service', 'flask',"
        " 'psycopg', 'pettingzoo'})\n"
        "assert not loaded, loaded\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert run.returncode == 0, run.stderr


def test_the_package_builds_a_typed_wheel(tmp_path: Path) -> None:
    package = Path(__file__).resolve().parent.parent / "clients" / "python"
    build = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation"]
    run = subprocess.run(
        [*build, "-w", str(tmp_path), str(package)], capture_output=True, text=True, timeout=180
    )
    assert run.returncode == 0, run.stdout + run.stderr
    (wheel,) = tmp_path.glob("cardroom_client-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"cardroom_client/py.typed", "cardroom_client/env/aec.py"} <= names
    metadata = next(n for n in names if n.endswith("METADATA"))
    text = zipfile.ZipFile(wheel).read(metadata).decode()
    assert "Requires-Dist: httpx" in text and 'extra == "env"' in text


@pytest.fixture(scope="module")
def short_streams(database_url: str) -> Iterator[Served]:
    """A server whose streams end after a second (CARDROOM_STREAM_SECONDS): clients reconnect
    many times in one game."""
    env = {"CARDROOM_RATE_LIMITS": "off", "CARDROOM_STREAM_SECONDS": "1"}
    with cardroom_serve(database_url, env=env) as server:
        yield server


def test_events_resume_where_each_stream_ended(short_streams: Served) -> None:
    """Streams that end every second: the bots finish the game, and a spectator following it
    gets every event once, in order, over many connections (Last-Event-ID)."""
    with Client(short_streams.url) as client:
        game = client.create_game("sushi-go", 2)
        seats = [game.join("Fy"), game.join("Gus")]
        opened: list[str] = []
        hooks = {"request": [lambda r: opened.append(r.headers.get("Last-Event-ID", ""))]}
        http = httpx.Client(base_url=short_streams.url, event_hooks=hooks)
        versions: list[int] = []
        with Client(short_streams.url, http=http) as spectator:
            follower = threading.Thread(
                target=lambda: versions.extend(e.version for e in spectator.game(game.id).events())
            )
            follower.start()
            # Bots may play a whole game within one stream's second: let the spectator resume
            # twice first (bounded), so resuming is exercised however fast the machine is.
            deadline = time.monotonic() + 30
            while len([a for a in opened if a]) < 2 and time.monotonic() < deadline:
                time.sleep(0.05)
            play_in_threads(seats)
            follower.join(60)
        assert not follower.is_alive()
        final = game.view()
    assert versions == list(range(1, final.version + 1))
    resumed = [after for after in opened if after]
    assert len(resumed) >= 2 and resumed == sorted(resumed, key=int)


@pytest.mark.parametrize("with_secret", [True, False])
def test_a_lost_join_is_replayed_with_its_token_from_another_network(
    served: Served, with_secret: bool
) -> None:
    """The join's answer (its seat token) is lost, and its retry comes from another address
    (127.0.0.2): the client's Idempotency-Secret gets it the first answer, token included.
    Without the secret the service binds the token to the first address, and refuses it."""
    joins: list[str] = []

    def fault(request: httpx.Request) -> str | None:
        if request.method == "POST" and request.url.path.endswith("/players"):
            joins.append(request.headers["Idempotency-Key"])
            return "lose" if len(joins) == 1 else "move"
        return None

    client, transport = faulty_client(served, fault, [])
    if not with_secret:
        client.idempotency_secret = None
    with client:
        game = client.create_game("sushi-go", 2)
        if not with_secret:
            with pytest.raises(CardroomError) as refused:
                game.join("Hal")
            assert refused.value.status == 422 and refused.value.code == "idempotency_key_reused"
            return
        seat = game.join("Hal")
        assert len(joins) == 2 and len(set(joins)) == 1
        sent = [r for r in transport.sent if r.url.path.endswith("/players")]
        assert {r.headers["Idempotency-Secret"] for r in sent} == {client.idempotency_secret}
        assert transport.answers[-1].headers.get("Idempotent-Replayed") == "true"
        assert [s.name for s in seat.view().seats if s.taken] == ["Hal"]
        seat.leave()  # the replayed token is the seat's: it gives the seat up
        assert not any(s.taken for s in game.view().seats)


def test_a_finished_games_rematch_is_followed_and_taken(served: Served) -> None:
    """A game played to the end, then: a follower waiting for the rematch (follow_rematch) gets
    it as soon as the player asks for one; the stream resumed after the game's last event
    sends only the rematch's message (id ``<version>r``), read without fault; the player's
    seat in the rematch is a working seat of the new game, under the same name."""
    with Client(served.url) as client:
        game = client.create_game("sushi-go", 2, bots=[BotSeat(1, "greedy")])
        seat = game.join("Ivy")
        with pytest.raises(CardroomError) as early:
            seat.rematch()
        assert early.value.status == 409 and early.value.code == "game_not_over"
        (final,) = play_in_threads([seat])
        assert final.status == "over"
        waited: list[Any] = []
        ended = threading.Event()

        def wait_for_the_rematch() -> None:
            for event in game.events(after=final.version - 1, follow_rematch=True):
                waited.append(event)
                ended.set()

        follower = threading.Thread(target=wait_for_the_rematch)
        follower.start()
        assert ended.wait(30) and waited[0].type == "game_ended"
        again = seat.rematch()
        follower.join(30)
        assert not follower.is_alive()
        assert [e.type for e in waited] == ["game_ended", "rematch"]
        announced = waited[-1]
        assert announced.data["game_id"] == again.id and announced.data["proposed_by"] == 0
        assert announced.version == final.version
        # Resumed after the end: the rematch is all there is, then the iterator ends.
        after_end = list(client.game(game.id).events(after=final.version))
        assert [(e.type, e.data["game_id"]) for e in after_end] == [("rematch", again.id)]
        # The same while every stream this address may open is taken: by the long poll's view.
        waiting = client.create_game("sushi-go", 3)
        with ExitStack() as held, httpx.Client(base_url=served.url, timeout=ANSWER) as http:
            for _ in range(STREAMS_PER_ADDRESS):
                stream = held.enter_context(http.stream("GET", f"{waiting.path}/stream"))
                assert stream.status_code == 200
            opened: list[int] = []
            hooks = {"response": [lambda r: opened.append(r.status_code)]}
            polled = httpx.Client(base_url=served.url, event_hooks=hooks)
            with Client(served.url, http=polled) as follower:
                by_poll = list(follower.game(game.id).events(after=final.version))
            assert opened[:2] == [429, 429]  # the stream, then the long poll: refused
            assert [(e.type, e.data["game_id"]) for e in by_poll] == [("rematch", again.id)]
        # Without follow_rematch, reading from the start stops at the game's end.
        assert list(game.events())[-1].type == "game_ended"
        assert game.view().raw["rematch"]["game_id"] == again.id
        view = again.view()
        assert again.id != game.id and view.status == "playing"
        assert view.seats[again.seat].name == "Ivy" and view.seats[1].bot == "greedy"
        assert view.you is not None and view.you.seat == again.seat
