"""One stream for all an account's games (issue 35, point 4): ``GET /accounts/me/stream``.

A bot holding only this connection (and its moves) plays whole games; a resumed stream misses
nothing, even a row whose transaction committed after a later one; a game without accounts
writes nothing to any feed; nothing on the stream shows a hand or a pick."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
import pytest
import requests
from api_client import ApiClient, expect_problem, expect_status
from patience import scaled

from service.cli.main import main
from service.http.hangup import Hangup
from service.http.routes.account_stream import _Feed
from service.http.routes.stream import StreamSettings
from service.live.hub import Hub, account_key
from service.play import GameService
from service.store import account_feed
from service.store.events import EventStore

pytest_plugins = ["api_fixtures"]

WAIT = scaled(20.0)  # seconds between two chunks: a heartbeat comes every 15 s


@dataclass
class Item:
    id: str
    event: str
    data: dict[str, Any]


@dataclass
class AccountStream:
    response: requests.Response
    items: list[Item] = field(default_factory=list)

    def __iter__(self) -> Iterator[Item]:
        fields: dict[str, str] = {}
        buffer = b""
        for chunk in self.response.iter_content(chunk_size=None):
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                text = line.decode()
                if text.startswith(":"):
                    continue
                if text:
                    name, _, value = text.partition(":")
                    fields[name] = value.removeprefix(" ")
                elif "event" in fields:
                    item = Item(fields["id"], fields["event"], json.loads(fields["data"]))
                    self.items.append(item)
                    yield item
                    fields = {}
                else:
                    fields = {}


@contextmanager
def account_stream(base: str, token: str, last_id: str | None = None) -> Iterator[AccountStream]:
    headers = {"Accept": "text/event-stream", "Authorization": f"Bearer {token}"}
    if last_id is not None:
        headers["Last-Event-ID"] = last_id
    with requests.Session() as session:
        response = session.get(
            f"{base}/accounts/me/stream", headers=headers, stream=True, timeout=WAIT
        )
        try:
            yield AccountStream(response)
        finally:
            response.close()


def new_account(api: ApiClient) -> dict[str, Any]:
    response = api.post("/accounts", {"name": f"bot{uuid.uuid4().hex[:12]}"}, token=None)
    expect_status(response, 201)
    return response.json()


def game_with_a_bot(api: ApiClient, token: str) -> str:
    body = {"game": "sushi-go", "players": 2, "bots": [{"seat": 1, "kind": "greedy"}]}
    created = api.post("/games", body, token=None)
    expect_status(created, 201)
    gid = created.json()["game_id"]
    expect_status(api.post(f"/games/{gid}/players", {}, token=token), 201)
    return gid


def pick_first(api: ApiClient, gid: str, token: str, turn: dict[str, Any]) -> None:
    view = api.game(gid, token=token)
    body = {"round": turn["round"], "turn": turn["turn"], "cards": view["you"]["hand"][:1]}
    expect_status(api.post(f"/games/{gid}/moves", body, token=token, name_turn=False), 200)


def test_a_bot_plays_whole_games_from_its_account_stream(api: ApiClient, live_server: Any) -> None:
    """Two games at once, every pick made on a ``your_turn`` from the one stream."""
    account = new_account(api)
    token = account["token"]
    with account_stream(live_server.url, token) as stream:
        expect_status(stream.response, 200)
        games = {game_with_a_bot(api, token), game_with_a_bot(api, token)}
        finished: set[str] = set()
        started: set[str] = set()
        for item in stream:
            data = item.data
            assert item.event == data["type"]
            gid = data["game_id"]
            assert gid in games
            if item.event == "game_started":
                started.add(gid)
            elif item.event == "your_turn":
                assert data["seat"] == 0 and data["game"] == "sushi-go"
                pick_first(api, gid, token, data)
            elif item.event == "game_finished":
                assert data["status"] == "over"
                finished.add(gid)
                if finished == games:
                    break
        assert started == games
    for gid in games:
        assert api.game(gid)["status"] == "over"
    assert not any("hand" in json.dumps(item.data) for item in stream.items)


def test_a_resumed_stream_misses_nothing_and_a_new_one_tells_the_turns_waiting(
    api: ApiClient, live_server: Any
) -> None:
    account = new_account(api)
    token = account["token"]
    with account_stream(live_server.url, token) as stream:
        gid = game_with_a_bot(api, token)
        items = iter(stream)
        first = next(items)
        assert first.event == "game_started"
    # Picks made while nobody listens: the resumed stream gets their turns, in order.
    turn = api.game(gid, token=token)
    pick_first(api, gid, token, turn)
    pick_first(api, gid, token, api.game(gid, token=token))
    with account_stream(live_server.url, token, last_id=first.id) as resumed:
        got = []
        for item in resumed:
            if item.data["id"] == first.data["id"]:
                continue  # sent again: at least once (its row was above the watermark then)
            got.append((item.event, item.data.get("turn")))
            if len(got) == 3:
                break
    assert got == [("your_turn", 1), ("your_turn", 2), ("your_turn", 3)]
    with account_stream(live_server.url, token) as fresh:
        waiting = next(iter(fresh))
    assert (waiting.event, waiting.data["id"], waiting.data["game_id"]) == ("your_turn", None, gid)
    assert waiting.data["turn"] == 3


def test_a_row_committed_late_is_not_skipped(
    api: ApiClient, live_server: Any, database_url: str
) -> None:
    """A transaction that took its id first but commits last: the stream sends its row, and a
    stream resumed from any id sent before it still gets it."""
    account = new_account(api)
    aid, token = account["account_id"], account["token"]
    insert = (
        "INSERT INTO account_feed (account_id, type, game_id, data)"
        " VALUES (%s, 'challenge', NULL, %s)"
    )
    with (
        psycopg.connect(database_url) as early,
        psycopg.connect(database_url) as late,
        account_stream(live_server.url, token) as stream,
    ):
        items = iter(stream)
        early.execute(insert, (aid, json.dumps({"n": 1})))  # holds its xid, uncommitted
        late.execute(insert, (aid, json.dumps({"n": 2})))
        late.commit()
        second = next(items)
        assert second.data["n"] == 2
        early.commit()
        first = next(items)
        assert first.data["n"] == 1
    with account_stream(live_server.url, token, last_id=second.id) as resumed:
        again = [next(iter(resumed)).data["n"]]
    assert again == [1]  # the id sent with n=2 did not move past n=1's uncommitted row


def test_a_new_stream_tells_a_waiting_turn_once_while_another_transaction_runs(
    api: ApiClient, live_server: Any, database_url: str
) -> None:
    """A stream opened while some transaction runs starts below its rows (they may still commit
    before it): the turn its opening tells must not come again as the row that opened it. A bot
    would pick twice for it (the client test met this: a ``your_turn`` for a turn already
    answered)."""
    account = new_account(api)
    token = account["token"]
    with psycopg.connect(database_url) as running:
        running.execute("SELECT pg_current_xact_id()")  # holds xmin below what follows
        gid = game_with_a_bot(api, token)  # its start writes the your_turn row of turn 1
        with account_stream(live_server.url, token) as stream:
            items = iter(stream)
            opened = next(items)
            assert (opened.event, opened.data["id"], opened.data["turn"]) == ("your_turn", None, 1)
            pick_first(api, gid, token, opened.data)
            after = next(items)
        running.rollback()
    assert (after.event, after.data.get("round"), after.data.get("turn")) == ("your_turn", 1, 2)


def test_games_without_accounts_write_no_feed(api: ApiClient, database_url: str) -> None:
    game = api.create_game(2)
    for name in ("ann", "bob"):
        api.join(game["game_id"], f"{name}{uuid.uuid4().hex[:8]}")
    with psycopg.connect(database_url) as conn:
        rows = conn.execute(
            "SELECT count(*) FROM account_feed WHERE game_id = %s", (game["game_id"],)
        ).fetchone()
    assert rows == (0,)


def test_the_stream_needs_an_account_token_with_play(api: ApiClient) -> None:
    missing = api.get("/accounts/me/stream", token=None, request_valid=False)
    expect_problem(missing, 401, "missing_token")
    token = new_account(api)["token"]
    narrow = api.post("/accounts/me/tokens", {"scopes": ["history:read"]}, token=token).json()
    expect_problem(api.get("/accounts/me/stream", token=narrow["token"]), 403, "insufficient_scope")
    bad = api.get(
        "/accounts/me/stream",
        token=token,
        headers={"Last-Event-ID": "12"},
        request_valid=False,
    )
    expect_problem(bad, 400, "invalid_request")


def test_an_account_game_exports_its_accounts_and_audits_offline(
    api: ApiClient, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The seat's event names the account (never a token); ``cardroom audit`` re-decides the
    join with it and verifies the export offline, as for any game (issue 35, point 2)."""
    account = new_account(api)
    token = account["token"]
    gid = game_with_a_bot(api, token)
    while (view := api.game(gid, token=token))["status"] != "over":
        pick_first(api, gid, token, view)
    export = api.get(f"/games/{gid}/export", token=None)
    expect_status(export, 200)
    assert token not in export.text and token[len("cardroom_pat_") :] not in export.text
    lines = [json.loads(line) for line in export.text.splitlines()]
    seats = [line["data"] for line in lines if line.get("type") == "seat_taken"]
    assert seats[0]["account"] == account["account_id"]
    path = tmp_path / "game.jsonl"
    path.write_text(export.text)
    assert main(["audit", str(path)]) == 0
    assert "verified" in capsys.readouterr().out


def test_a_new_stream_starts_with_the_challenges_still_open(
    api: ApiClient, live_server: Any
) -> None:
    """A challenge offered before the challenged account's stream opened is on it (a bot that
    starts later still hears of it), as is the one it offered, to the challenger's."""
    ada, bob = new_account(api), new_account(api)
    offered = api.post(
        f"/accounts/{bob['account_id']}/challenges",
        {"game": "sushi-go", "players": 2},
        token=ada["token"],
    )
    expect_status(offered, 201)
    cid = offered.json()["challenge_id"]
    for account in (bob, ada):
        with account_stream(live_server.url, account["token"]) as stream:
            first = next(iter(stream))
        assert (first.event, first.data["challenge_id"], first.data["id"]) == (
            "challenge",
            cid,
            None,
        )
        assert first.data["status"] == "offered"


class _CountedFeed(_Feed):
    """The stream's own feed, counting its reads of the store."""

    reads = 0

    def _read(self) -> tuple[str, bool]:
        self.reads += 1
        return super()._read()


def test_an_idle_stream_reads_the_store_only_when_woken(
    api: ApiClient, pool: Any, database_url: str
) -> None:
    """Heartbeats with the hub listening all along read nothing (as a game's stream:
    bench/account_streams.py measured 1,000 idle account streams each reading at every heartbeat,
    67 reads a second); a row for the account still wakes the stream, which reads and sends it."""
    aid = new_account(api)["account_id"]
    hub = Hub(lambda: database_url, name="cardroom-live-idle-test")
    service = GameService(EventStore(pool))
    try:
        assert hub.start()
        ticket = hub.ticket(account_key(aid))
        with service.store.connection() as conn:
            feed = _CountedFeed(service, hub, aid, account_feed.head(conn), ticket)
        frames = feed.frames([], StreamSettings(30.0, 0.05, 250), Hangup(None))
        heartbeats = 0
        for frame in frames:
            heartbeats += frame == ": heartbeat\n\n"
            if heartbeats == 5:
                break
        assert feed.reads == 1  # the first read only
        with psycopg.connect(database_url, autocommit=True) as conn:
            conn.execute(
                "INSERT INTO account_feed (account_id, type, game_id, data)"
                " VALUES (%s, 'challenge', NULL, '{\"n\": 1}')",
                (aid,),
            )
        sent = next(frame for frame in frames if frame.startswith("id: "))
        assert "event: challenge" in sent and feed.reads >= 2
        frames.close()
    finally:
        hub.stop()
