"""The client package's accounts (issue 35, point 6) against a real ``cardroom serve``: an account
is created and its tokens minted, listed and revoked; it joins games; a bot plays two games at
once from the account's one stream to their end, and so does ``python -m cardroom_client.play
--account``; the stream resumes where it was when the connection is cut, every item once."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from cardroom_client import (
    Account,
    BotSeat,
    CardroomError,
    Client,
    FirstMoveBot,
    Item,
    Seat,
    SushiGoPick,
    SushiGoView,
    View,
)
from patience import ANSWER, scaled
from serve_support import Served, cardroom_serve
from tcp_proxy import tcp_proxy

# Streams that end every second or two: the client resumes many times in one game.
STREAM_SECONDS = "2"
WAIT = scaled(120.0)  # seconds: the most a bot may take to play its games


@pytest.fixture(scope="module")
def served(database_url: str) -> Iterator[Served]:
    env = {"CARDROOM_RATE_LIMITS": "off", "CARDROOM_STREAM_SECONDS": STREAM_SECONDS}
    with cardroom_serve(database_url, env=env) as server:
        yield server


def unique(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:10]}"


def a_game_with_a_bot(client: Client, kind: str = "sushi-go") -> str:
    return client.create_game(kind, 2, bots=[BotSeat(1, "greedy")]).id


def in_thread(target: Any) -> tuple[threading.Thread, list[Any], list[BaseException]]:
    results: list[Any] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            results.append(target())
        except BaseException as exc:  # reported in the test's thread
            errors.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, results, errors


def test_an_account_its_tokens_and_a_revoked_one(served: Served) -> None:
    with Client(served.url) as client:
        name = unique("Ada")
        account = client.create_account(name)
        assert account.token.startswith("cardroom_pat_")
        me = account.me()
        assert me.name == name and me.bot is None and me.token is not None
        assert set(me.token.scopes) == {"play", "history:read", "webhooks:write", "tokens:write"}
        assert client.account_info(account.id).name == name

        minted = account.mint_token(["play"], label="my bot")
        assert minted.token.startswith("cardroom_pat_") and minted.scopes == ("play",)
        bot = client.account(minted.token)
        assert bot.me().account_id == account.id
        listed = {t.token_id: t for t in account.tokens()}
        assert set(listed) == {me.token.token_id, minted.token_id}
        assert listed[minted.token_id].label == "my bot"
        assert "token" not in listed[minted.token_id].raw  # never the secret again
        with pytest.raises(CardroomError) as narrow:
            bot.mint_token(["play"])
        assert (narrow.value.status, narrow.value.code) == (403, "insufficient_scope")

        account.revoke(minted)
        assert {t.token_id for t in account.tokens() if t.revoked_at} == {minted.token_id}
        with pytest.raises(CardroomError) as revoked:
            bot.me()
        assert revoked.value.status == 401


def test_an_account_joins_and_acts_for_its_seat(served: Served) -> None:
    with Client(served.url) as client:
        account = client.create_account(unique("Bea"))
        game = client.create_game("sushi-go", 3, bots=[BotSeat(2, "random")])
        seat = account.join(game)
        assert seat.name == account.name and seat.token == account.token
        with pytest.raises(CardroomError) as twice:
            account.join(game.id)
        assert (twice.value.status, twice.value.code) == (409, "already_seated")
        game.join(unique("Anon"))  # the last seat: the game starts
        view = seat.view()
        assert view.you is not None and view.you.seat == seat.seat and view.my_move
        assert view.seats[seat.seat].raw.get("name") == account.name
        assert account.seat(game.id).seat == seat.seat  # found from the view
        assert isinstance(view.you.hand, tuple)
        card = view.you.hand[0]
        after = seat.move(SushiGoPick(view.round, view.turn, (card,)))  # type: ignore[union-attr]
        assert after.version > view.version
        assert len(client.receipts(game)) == 4  # the creation's, two joins', the pick's


def test_a_bot_plays_two_games_at_once_from_the_account_stream(served: Served) -> None:
    """One game joined before the stream opens (the new stream's first ``your_turn``), one
    after: the bot plays both to their end holding one stream plus its moves."""
    with Client(served.url) as client:
        account = client.create_account(unique("Cy"))
        first = a_game_with_a_bot(client)
        account.join(first)
        bot = FirstMoveBot()
        thread, results, errors = in_thread(lambda: bot.play_account(account, games=2))
        second = a_game_with_a_bot(client, "sequence")
        account.join(second)
        thread.join(WAIT)
        assert not thread.is_alive(), "the bot did not finish its two games"
        assert not errors, errors
        finals: dict[str, View] = results[0]
        assert set(finals) == {first, second}
        for gid, final in finals.items():
            view = client.game(gid).view()
            assert final.status == view.status == "over"
            assert view.seats[0].name == account.name
        assert client.audit(first)["ok"] is True


BOT_MODULE = """
from cardroom_client import FirstMoveBot


class MyBot(FirstMoveBot):
    pass
"""


def test_the_play_command_plays_as_an_account(served: Served, tmp_path: Path) -> None:
    (tmp_path / "mybot.py").write_text(BOT_MODULE)
    with Client(served.url) as client:
        account = client.create_account(unique("Di"))
        token = account.mint_token(["play"], label="play command").token
        gid = a_game_with_a_bot(client)
        account.join(gid)
        command = [sys.executable, "-m", "cardroom_client.play", "--account", token]
        command += ["--bot", "mybot:MyBot", "--games", "1", served.url]
        run = subprocess.run(command, capture_output=True, text=True, timeout=WAIT, cwd=tmp_path)
        assert run.returncode == 0, run.stderr
        lines = [json.loads(line) for line in run.stdout.strip().splitlines()]
        assert lines[0]["game_id"] == gid and lines[0]["status"] == "over"
        assert lines[-1]["account_id"] == account.id
        assert [g["game_id"] for g in lines[-1]["games"]] == [gid]
        final = client.game(gid).view()
        assert final.status == "over" and list(final.totals) == lines[0]["totals"]


def pick_first(seat: Seat, item: Item) -> None:
    """The first card of the hand, for the turn ``item`` opens (S4)."""
    view = seat.view()
    assert isinstance(view, SushiGoView) and view.you is not None
    assert (view.round, view.turn) == (item.round, item.turn) and view.my_move
    seat.move(SushiGoPick(view.round, view.turn, (view.you.hand[0],)))


def feed_ids(database_url: str, account_id: str) -> list[int]:
    with psycopg.connect(database_url) as conn:
        rows = conn.execute(
            "SELECT id FROM account_feed WHERE account_id = %s ORDER BY id", (account_id,)
        ).fetchall()
    return [row[0] for row in rows]


def test_the_stream_resumes_after_the_connection_is_cut(served: Served, database_url: str) -> None:
    """The account's stream goes through a TCP proxy that cuts every open connection twice
    during a game: the client opens it again with the last message's id, and gets every item
    the account's feed holds exactly once (no gap, no repeat), up to the game's end."""
    host, port = "127.0.0.1", served.port
    with tcp_proxy(host, port) as proxy:
        resumed: list[str] = []

        def note(request: httpx.Request) -> None:
            if request.url.path == "/accounts/me/stream":
                resumed.append(request.headers.get("Last-Event-ID", ""))

        through = f"http://{host}:{proxy.port}"
        http = httpx.Client(base_url=through, event_hooks={"request": [note]}, timeout=ANSWER)
        with Client(served.url) as client, Client(through, http=http) as cut:
            account = client.create_account(unique("Eve"))
            listening = Account(cut, account.token)
            gid = a_game_with_a_bot(client)
            seat = account.join(gid)
            items: list[Item] = []
            cuts, before = 0, None
            for item in listening.stream():
                items.append(item)
                if before is None:  # nothing is written before the first pick: the stream's
                    before = set(feed_ids(database_url, account.id))  # start is here
                if item.type == "your_turn":  # one pick per item: the turn it names
                    pick_first(seat, item)
                    if cuts < 2 and len(items) > 3 * (cuts + 1):
                        proxy.restore()  # every open connection through the proxy is cut
                        cuts += 1
                if item.type == "game_finished":
                    break
        http.close()
    assert cuts == 2
    assert len([r for r in resumed if r]) >= 2, resumed  # reopened with Last-Event-ID
    numbered = [i.id for i in items if i.id is not None]
    assert len(numbered) == len(set(numbered))  # nothing twice
    assert items[0].id is None  # the turn waiting when the stream opened
    written = [i for i in feed_ids(database_url, account.id) if i not in (before or ())]
    assert numbered == written  # nothing missed, in order
    assert items[-1].game_id == gid and items[-1].data["status"] == "over"


# --- history, challenges, quick match ---------------------------------------------------------


def test_the_history_walks_every_page_and_the_export_agrees(served: Served) -> None:
    """Three games of the account (one finished against the greedy bot, two waiting), read two
    a page: each once, oldest first; the filters and the export say the same."""
    with Client(served.url) as client:
        account = client.create_account(unique("Hy"))
        finished = client.create_game("sushi-go", 2, bots=[BotSeat(1, "greedy")])
        final = FirstMoveBot().play(account.join(finished))
        waiting = [client.create_game("sushi-go", 3) for _ in "ab"]
        for game in waiting:
            account.join(game)
        ids = [finished.id, *(g.id for g in waiting)]
        walked = list(account.games(limit=2))
        assert [g.game_id for g in walked] == ids
        first, page_after = account.games_page(limit=2)
        assert len(first) == 2 and page_after is not None
        over = list(account.games(status="over"))
        assert [g.game_id for g in over] == [finished.id]
        assert over[0].result == ("win" if 0 in final.winners else "loss")
        assert [t["total"] for t in over[0].totals or ()] == [t["total"] for t in final.totals]
        assert over[0].seats[1].account_id == "bot:greedy" and over[0].seat == 0
        assert [g.game_id for g in account.games(vs="bot:greedy")] == [finished.id]
        newest = [g.game_id for g in account.games(order="newest")]
        assert newest == ids[::-1]
        assert [g.game_id for g in account.export()] == ids
        assert {g.status for g in walked[1:]} == {"waiting"}


def test_a_challenge_accepted_by_a_bot_is_played_by_both_accounts(served: Served) -> None:
    """A bot account accepts the challenge from its stream; both accounts' bots play the game
    it creates to its end. A challenge declined, and one cancelled, end as they should."""
    with Client(served.url) as client:
        ada, bot = client.create_account(unique("Ada")), client.create_account(unique("Bot"))
        offered = ada.challenge(bot.id, "sushi-go", 2)
        assert (offered.status, offered.to_account, offered.from_account) == (
            "offered",
            bot.id,
            ada.id,
        )
        assert [c.challenge_id for c in bot.challenges().incoming] == [offered.challenge_id]
        assert [c.challenge_id for c in ada.challenges().outgoing] == [offered.challenge_id]
        players = [
            in_thread(lambda: FirstMoveBot().play_account(bot, games=1)),
            in_thread(lambda: FirstMoveBot().play_account(ada, games=1)),
        ]
        for thread, _, _ in players:
            thread.join(WAIT)
        assert all(not t.is_alive() and not errors for t, _, errors in players), players
        (gid,) = players[0][1][0]
        assert ada.get_challenge(offered).game_id == gid
        assert list(players[1][1][0]) == [gid]
        view = client.game(gid).view()
        assert view.status == "over"
        assert [s.name for s in view.seats] == [ada.name, bot.name]

        declined = bot.decline(ada.challenge(bot.id, "sequence", 2))
        assert declined.status == "declined"
        cancelled = ada.cancel(ada.challenge(bot.id, "sequence", 2))
        assert cancelled.status == "cancelled"
        with pytest.raises(CardroomError) as late:
            bot.accept(cancelled)
        assert late.value.status == 409


def test_quick_match_seats_accounts_together_then_opens_the_next_game(served: Served) -> None:
    with Client(served.url) as client:
        clock = random.randrange(1000, 3600)  # rules no other test quick-matches at once
        first, second, third = (client.create_account(unique(n)) for n in ("Qa", "Qb", "Qc"))
        a, b, c = (who.quick("sushi-go", 2, turn_seconds=clock) for who in (first, second, third))
        assert a.id == b.id != c.id and {a.seat, b.seat} == {0, 1}
        assert b.created is False and c.created is True
        assert a.view().status == "playing" and c.view().status == "waiting"
        assert a.token == first.token  # the account's token acts for its seat


def test_rated_challenges_and_quick_match(served: Served) -> None:
    """``rated=True`` (issue 37): a rated challenge says so; rated quick match seats accounts
    that asked for a rated game only."""
    with Client(served.url) as client:
        ada, bob = client.create_account(unique("Ra")), client.create_account(unique("Rb"))
        assert ada.challenge(bob.id, "sushi-go", 2).rated is False
        offered = ada.challenge(bob.id, "sushi-go", 2, rated=True)
        assert offered.rated is True and offered.raw["rated"] is True
        clock = random.randrange(1000, 3600)  # rules no other test quick-matches at once
        rated = ada.quick("sushi-go", 2, turn_seconds=clock, rated=True)
        unrated = bob.quick("sushi-go", 2, turn_seconds=clock)
        assert rated.created and unrated.created and rated.id != unrated.id
        paired = client.create_account(unique("Rc")).quick(
            "sushi-go", 2, turn_seconds=clock, rated=True
        )
        assert paired.id == rated.id and paired.created is False
        assert client.request("GET", f"/games/{rated.id}").json()["rated"] is True
