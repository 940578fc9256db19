"""An account's history (issue 35, point 3): ``GET /accounts/{account_id}/games`` with its
filters, keyset pages that neither repeat nor skip a game while games are created and finished,
private games shown only to their players, results from each game's winners (Sushi Go! S16,
Sequence Q8/Q10), and the JSON Lines export. Over HTTP, against the real app and PostgreSQL.

Finished games are made fast: the account plays against bots and resigns, and the greedy bot
plays its seat to the end in the same append (``POST /games/{id}/resign``)."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import requests
from api_client import ApiClient, LiveServer, expect_problem, expect_status
from patience import ANSWER

from service.store.account_games import HistoryQuery, page
from service.store.events import EventStore

pytest_plugins = ["api_fixtures"]

NDJSON = "application/x-ndjson"


def new_account(api: ApiClient) -> dict[str, Any]:
    response = api.post("/accounts", {"name": f"hist{uuid.uuid4().hex[:12]}"}, token=None)
    expect_status(response, 201)
    return response.json()


def scoped_token(api: ApiClient, account: dict[str, Any], scopes: list[str]) -> str:
    response = api.post(
        "/accounts/me/tokens", {"scopes": scopes, "label": "t"}, token=account["token"]
    )
    expect_status(response, 201)
    return response.json()["token"]


def create(api: ApiClient, game: str = "sushi-go", players: int = 2, **extra: Any) -> dict:
    bots = [{"seat": s, "kind": "greedy"} for s in range(1, players)]
    body = {"game": game, "players": players, "bots": extra.pop("bots", bots), **extra}
    response = api.post("/games", body, token=None)
    expect_status(response, 201)
    return response.json()


def sit(api: ApiClient, game_id: str, token: str, invitation: str | None = None) -> int:
    body = {} if invitation is None else {"invitation": invitation}
    response = api.post(f"/games/{game_id}/players", body, token=token)
    expect_status(response, 201)
    return int(response.json()["seat"])


def resign(api: ApiClient, game_id: str, token: str) -> dict[str, Any]:
    response = api.post(f"/games/{game_id}/resign", {}, token=token)
    expect_status(response, 200)
    return response.json()


def finished(api: ApiClient, token: str, game: str = "sushi-go", **extra: Any) -> str:
    """A game the account sat in against greedy bots, played to its end."""
    created = create(api, game, **extra)
    gid = created["game_id"]
    invitation = created.get("invitation", {}).get("token")
    sit(api, gid, token, invitation)
    assert resign(api, gid, token)["status"] == "over"
    return gid


def history(
    api: ApiClient, account_id: str, token: str | None = None, **params: Any
) -> dict[str, Any]:
    response = api.get(f"/accounts/{account_id}/games", params=params, token=token)
    expect_status(response, 200)
    return response.json()


def every_page(
    api: ApiClient, account_id: str, token: str | None = None, **params: Any
) -> Iterator[dict[str, Any]]:
    after = None
    while True:
        extra = {} if after is None else {"after": after}
        body = history(api, account_id, token, **params, **extra)
        yield from body["games"]
        after = body["next_after"]
        if after is None:
            return


def ids(items: list[dict[str, Any]]) -> list[str]:
    return [item["game_id"] for item in items]


# --- one item, and the filters --------------------------------------------------------------


def test_an_item_holds_the_game_its_seats_times_totals_and_result(api: ApiClient) -> None:
    ada = new_account(api)
    gid = finished(api, ada["token"])
    (item,) = history(api, ada["account_id"])["games"]
    scores = api.scores(gid)
    assert item["game_id"] == gid and item["game"] == "sushi-go"
    assert item["status"] == "over" and item["seat"] == 0 and item["visibility"] == "public"
    assert item["rules"]["players"] == 2 and item["url"] == f"/games/{gid}"
    assert item["seats"] == [
        {"seat": 0, "name": ada["name"], "bot": None, "account_id": ada["account_id"]},
        {"seat": 1, "name": "greedy bot 1", "bot": "greedy", "account_id": "bot:greedy"},
    ]
    assert item["created_at"] <= item["started_at"] <= item["finished_at"]
    assert item["winners"] == scores["winners"]
    totals = {t["seat"]: t["total"] for t in item["totals"]}
    sheet = {t["seat"]: t["total"] for t in scores["totals"]}
    assert totals == sheet
    assert item["result"] == ("win" if 0 in scores["winners"] else "loss")  # S16
    # The bot's history holds the same game, from its seat's side.
    bot_side = history(api, "bot:greedy", vs=ada["account_id"])["games"]
    assert ids(bot_side) == [gid]
    assert bot_side[0]["seat"] == 1
    assert bot_side[0]["result"] == ("win" if 1 in scores["winners"] else "loss")


def test_each_filter(api: ApiClient) -> None:
    ada, bob = new_account(api), new_account(api)
    sushi = finished(api, ada["token"])
    seq = finished(api, ada["token"], game="sequence")
    filled = create(api, players=3)["game_id"]  # its bots sit once seat 0 is taken: it starts
    sit(api, filled, ada["token"])
    open_ = create(api, players=3, bots=[])["game_id"]
    sit(api, open_, ada["token"])
    duel = create(api, players=2, bots=[])["game_id"]
    sit(api, duel, ada["token"])
    sit(api, duel, bob["token"])
    aid = ada["account_id"]
    everything = ids(history(api, aid)["games"])
    assert everything == [sushi, seq, filled, open_, duel]  # oldest first
    assert ids(history(api, aid, order="newest")["games"]) == everything[::-1]
    assert ids(history(api, aid, game="sequence")["games"]) == [seq]
    assert ids(history(api, aid, game="sushi-go")["games"]) == [sushi, filled, open_, duel]
    assert ids(history(api, aid, status="over")["games"]) == [sushi, seq]
    assert ids(history(api, aid, status="playing")["games"]) == [filled, duel]
    assert ids(history(api, aid, status="waiting")["games"]) == [open_]
    assert ids(history(api, aid, status="cancelled")["games"]) == []
    assert ids(history(api, aid, vs=bob["account_id"])["games"]) == [duel]
    assert ids(history(api, aid, vs="bot:random")["games"]) == []
    items = {g["game_id"]: g for g in history(api, aid)["games"]}
    assert items[open_]["seats"][1:] == [
        {"seat": n, "name": None, "bot": None, "account_id": None} for n in (1, 2)
    ]
    assert items[open_]["started_at"] is None and items[open_]["totals"] is None
    assert all(items[g]["result"] is None for g in (filled, open_, duel))
    for result in ("win", "loss", "draw"):
        expected = [g for g in (sushi, seq) if items[g]["result"] == result]
        assert ids(history(api, aid, result=result)["games"]) == expected
    created = {g: items[g]["created_at"] for g in items}
    assert ids(history(api, aid, since=created[seq])["games"]) == [seq, filled, open_, duel]
    assert ids(history(api, aid, until=created[seq])["games"]) == [sushi]
    assert ids(history(api, aid, since=created[seq], until=created[open_])["games"]) == [
        seq,
        filled,
    ]
    bob_side = history(api, bob["account_id"])["games"]
    assert ids(bob_side) == [duel] and bob_side[0]["seat"] == 1


def test_a_seat_left_before_the_start_is_not_the_accounts_game(api: ApiClient) -> None:
    ada = new_account(api)
    gid = create(api, players=3, bots=[{"seat": 2, "kind": "random"}])["game_id"]
    sit(api, gid, ada["token"])
    assert ids(history(api, ada["account_id"])["games"]) == [gid]
    expect_status(api.post(f"/games/{gid}/leave", {}, token=ada["token"]), 200)
    assert history(api, ada["account_id"])["games"] == []
    sit(api, gid, ada["token"])  # back, in the seat left free
    (item,) = history(api, ada["account_id"])["games"]
    assert item["game_id"] == gid and item["status"] == "waiting"
    assert [s["account_id"] for s in item["seats"]] == [ada["account_id"], None, None]
    assert [s["bot"] for s in item["seats"]] == [None, None, "random"]  # kept for its bot


def test_bad_queries_and_unknown_accounts(api: ApiClient) -> None:
    ada = new_account(api)
    path = f"/accounts/{ada['account_id']}/games"
    for params in (
        {"limit": 0},
        {"limit": 101},
        {"status": "won"},
        {"result": "tie"},
        {"game": "chess"},
        {"order": "random"},
        {"since": "yesterday"},
        {"since": "2026-01-01T00:00:00"},  # no offset
        {"colour": "white"},
    ):
        valid = None if "colour" in params else False  # the contract lists known ones only
        refused = api.get(path, params=params, request_valid=valid)
        expect_problem(refused, 400, "invalid_request")
    expect_problem(api.get(path, params={"after": "not-a-cursor"}), 400, "invalid_cursor")
    expect_problem(api.get("/accounts/nobody-at-all/games"), 404, "account_not_found")


# --- private games ----------------------------------------------------------------------------


def test_private_games_are_listed_only_to_their_players_with_history_read(api: ApiClient) -> None:
    ada, bob, eve = new_account(api), new_account(api), new_account(api)
    public = finished(api, ada["token"])
    created = create(api, players=3, bots=[{"seat": 2, "kind": "greedy"}], visibility="private")
    private = created["game_id"]
    invitation = created["invitation"]["token"]
    sit(api, private, ada["token"], invitation)
    sit(api, private, bob["token"], invitation)
    aid = ada["account_id"]
    assert ids(history(api, aid)["games"]) == [public]  # anonymous
    assert ids(history(api, aid, eve["token"])["games"]) == [public]  # not a player
    both = [public, private]
    assert ids(history(api, aid, ada["token"])["games"]) == both
    assert ids(history(api, aid, bob["token"])["games"]) == both  # sat in it too
    mine = list(every_page(api, aid, ada["token"], limit=1))
    assert ids(mine) == both and mine[1]["visibility"] == "private"
    play_only = scoped_token(api, ada, ["play"])
    refused = api.get(f"/accounts/{aid}/games", token=play_only)
    expect_problem(refused, 403, "insufficient_scope")
    reader = scoped_token(api, ada, ["history:read"])
    assert ids(history(api, aid, reader)["games"]) == both
    unknown = "cardroom_pat_" + "x" * 43
    expect_problem(api.get(f"/accounts/{aid}/games", token=unknown), 401, "invalid_token")
    export = export_lines(api, aid, eve["token"])
    assert ids(export) == [public]
    assert ids(export_lines(api, aid, ada["token"])) == both


# --- results ----------------------------------------------------------------------------------


def test_results_follow_each_games_winners(api: ApiClient) -> None:
    """Sushi Go! (S16: the winners of game_ended, pudding tie-break and shared wins included)
    and Sequence (Q10: the winning team's seats) from both seats' sides."""
    ada, bob = new_account(api), new_account(api)
    for game in ("sushi-go", "sequence"):
        gid = create(api, game, players=3, bots=[{"seat": 2, "kind": "greedy"}])["game_id"]
        sit(api, gid, ada["token"])
        sit(api, gid, bob["token"])
        resign(api, gid, ada["token"])
        resign(api, gid, bob["token"])
        view = api.game(gid)
        winners, draw = view["winners"], view.get("result") == "draw"  # Q8, rarely
        assert view["status"] == "over" and (winners or draw)
        for seat, account in enumerate((ada, bob)):
            (item,) = history(api, account["account_id"], game=game)["games"]
            assert item["seat"] == seat and item["winners"] == winners
            expected = "draw" if draw else "win" if seat in winners else "loss"
            assert item["result"] == expected


def test_a_sequence_draw_is_a_draw_for_every_seat(api: ApiClient) -> None:
    """Q8: when every seat passes in a row the game ends in a draw, with no winners. Three
    greedy seats reach it in about one game in eight: games are played until one does."""
    ada = new_account(api)
    played = []
    for _ in range(80):  # no draw in 80 such games: about 1 chance in 100,000
        gid = create(api, "sequence", players=3)["game_id"]
        sit(api, gid, ada["token"])
        played.append((gid, resign(api, gid, ada["token"]).get("result")))
        if played[-1][1] == "draw":
            break
    draws = [gid for gid, result in played if result == "draw"]
    assert draws, "no game of three greedy seats ended in a draw"
    (item,) = history(api, ada["account_id"], result="draw")["games"]
    assert item["game_id"] == draws[0] and item["winners"] == [] and item["result"] == "draw"
    assert [t["total"] for t in item["totals"]] == [0, 0, 0]  # Q8: nobody completed one
    won_or_lost = history(api, ada["account_id"], status="over", limit=100)["games"]
    assert {g["result"] for g in won_or_lost if g["game_id"] != draws[0]} <= {"win", "loss"}
    bot = history(api, "bot:greedy", vs=ada["account_id"], result="draw")["games"]
    assert ids(bot) == draws


# --- keyset pages while games start and finish -----------------------------------------------


def test_a_walk_neither_repeats_nor_skips_while_games_are_created_and_finished(
    api: ApiClient,
) -> None:
    ada = new_account(api)
    existing = [finished(api, ada["token"]) for _ in range(3)]
    for _ in range(4):  # left playing: they finish during the walk
        gid = create(api, players=2)["game_id"]
        sit(api, gid, ada["token"])
        existing.append(gid)
    playing = existing[3:]
    stop = threading.Event()
    made: list[str] = []
    failures: list[BaseException] = []

    def churn() -> None:
        with api.clone(token=None) as other:
            try:
                for gid in playing:  # finish the games the walk has not reached yet
                    resign(other, gid, ada["token"])
                    made.append(finished(other, ada["token"]))
                while not stop.is_set() and len(made) < 12:
                    made.append(finished(other, ada["token"]))
            except BaseException as exc:  # reported by the test's thread
                failures.append(exc)

    churner = threading.Thread(target=churn)
    seen: list[str] = []
    churner.start()
    try:
        for item in every_page(api, ada["account_id"], limit=2):
            seen.append(item["game_id"])
    finally:
        stop.set()
        churner.join()
    assert not failures, failures
    assert len(seen) == len(set(seen)), "a game came twice"
    assert [g for g in seen if g in existing] == existing, "a game was skipped or moved"
    walked_newest = list(every_page(api, ada["account_id"], limit=3, order="newest"))
    assert ids(walked_newest) == list(reversed(existing + made))


# --- the export ---------------------------------------------------------------------------------


def export_lines(
    api: ApiClient, account_id: str, token: str | None = None, **params: Any
) -> list[dict[str, Any]]:
    response = api.get(
        f"/accounts/{account_id}/games", params=params, token=token, headers={"Accept": NDJSON}
    )
    expect_status(response, 200)
    assert response.headers["Content-Type"] == NDJSON
    assert response.text == "" or response.text.endswith("\n")
    return [json.loads(line) for line in response.text.splitlines()]


def test_the_export_streams_one_game_a_line_up_to_its_cap(
    api: ApiClient, live_server: LiveServer
) -> None:
    ada = new_account(api)
    games = [finished(api, ada["token"]) for _ in range(5)]
    lines = export_lines(api, ada["account_id"])
    assert ids(lines) == games
    page_items = history(api, ada["account_id"])["games"]
    assert lines == page_items  # the same items as the pages
    assert all(line["totals"] and line["result"] in ("win", "loss") for line in lines)
    assert ids(export_lines(api, ada["account_id"], order="newest", limit=1)) == games[::-1]
    config = live_server.app.config
    config["CARDROOM_HISTORY_EXPORT_CAP"] = 3
    try:
        assert ids(export_lines(api, ada["account_id"])) == games[:3]
        # Streamed as it is read: chunked, with no length known in advance.
        url = f"{live_server.url}/accounts/{ada['account_id']}/games"
        with requests.get(url, headers={"Accept": NDJSON}, stream=True, timeout=ANSWER) as raw:
            assert raw.headers.get("Transfer-Encoding") == "chunked"
            assert "Content-Length" not in raw.headers
            got = [json.loads(line) for line in raw.iter_lines() if line]
        assert ids(got) == games[:3]
    finally:
        config.pop("CARDROOM_HISTORY_EXPORT_CAP")


def test_the_store_reads_pages_by_keyset(store: EventStore, api: ApiClient) -> None:
    """The store's page alone: the filters the route passes, and a cursor past the end."""
    ada = new_account(api)
    gid = finished(api, ada["token"])
    rows = page(store, HistoryQuery(ada["account_id"]), 10)
    assert [str(r.game_id) for r in rows] == [gid]
    later = datetime.now(UTC) + timedelta(days=1)
    assert page(store, HistoryQuery(ada["account_id"], since=later), 10) == []
    assert page(store, HistoryQuery(ada["account_id"], after=rows[0].cursor), 10) == []
    with pytest.raises(ValueError):
        page(store, HistoryQuery(ada["account_id"], result="tie"), 10)
