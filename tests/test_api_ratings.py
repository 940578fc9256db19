"""Ratings over HTTP (issue 37), against the real app and PostgreSQL (a database of this module's
own: the rebuild must see every rated game there is): ``rated: true`` at creation and who may
sit in a rated game; a finished rated game's view and account stream items; the account's
ratings, history and the leaderboard with keyset pages; and the rebuild from the exports alone,
equal to the stored ratings bit for bit."""

from __future__ import annotations

import json
import random
import struct
import uuid
from datetime import datetime
from typing import Any

import own_database
import pytest
import requests
from api_client import ApiClient, Player, Table, expect_problem, expect_status, play_to_end
from patience import ANSWER
from psycopg_pool import ConnectionPool

from domain import ratings
from domain.audit import parse_export

pytest_plugins = ["api_fixtures"]

database_url = own_database.database_url
pool = own_database.pool
live_server = own_database.live_server

POOL = "sushi-go-gamewright"


def new_account(api: ApiClient) -> dict[str, Any]:
    response = api.post("/accounts", {"name": f"r{uuid.uuid4().hex[:12]}"}, token=None)
    expect_status(response, 201)
    return response.json()


def rated_game(api: ApiClient, players: int, bots: list[dict[str, Any]], **extra: Any) -> dict:
    body = {"game": "sushi-go", "players": players, "bots": bots, "rated": True, **extra}
    response = api.post("/games", body, token=None)
    expect_status(response, 201)
    return response.json()


def seated(api: ApiClient, game_id: str, accounts: list[dict[str, Any]]) -> Table:
    """The accounts seated in order (the account token acts for its seat)."""
    table = Table(api, game_id, {})
    for account in accounts:
        response = api.post(f"/games/{game_id}/players", {}, token=account["token"])
        expect_status(response, 201)
        seat = response.json()["seat"]
        client = api.clone(token=account["token"])
        table.players.append(Player(seat, account["name"], account["token"], client))
    return table


def play_rated(api: ApiClient, accounts: list[dict[str, Any]], rng: random.Random) -> str:
    """A rated game of ``accounts`` and a greedy and a random bot, played to its end."""
    bots = [
        {"seat": len(accounts), "kind": "greedy"},
        {"seat": len(accounts) + 1, "kind": "random"},
    ]
    created = rated_game(api, len(accounts) + 2, bots)
    assert created["rated"] is True
    table = seated(api, created["game_id"], accounts)
    play_to_end(table, rng)
    table.close()
    return str(created["game_id"])


def same(a: float, b: float) -> bool:
    return struct.pack("<d", a) == struct.pack("<d", b)


@pytest.fixture(scope="module")
def league(live_server: Any) -> dict[str, Any]:
    """Three accounts, four rated games among them (two and three at a time)."""
    rng = random.Random(37)
    with ApiClient(live_server.url) as api:
        accounts = [new_account(api) for _ in range(3)]
        played = [
            play_rated(api, accounts[:2], rng),
            play_rated(api, accounts, rng),
            play_rated(api, accounts[1:], rng),
            play_rated(api, [accounts[2], accounts[0]], rng),
        ]
    return {"accounts": accounts, "games": played}


def test_a_finished_rated_game_shows_each_seats_change(
    api: ApiClient, league: dict[str, Any]
) -> None:
    first = league["games"][0]
    view = api.game(first)
    assert view["status"] == "over" and view["rated"] is True
    changes = view["rating_changes"]
    people = [a["account_id"] for a in league["accounts"][:2]]
    assert [c["account_id"] for c in changes] == people  # the bots' fixed ratings never move
    for change in changes:
        assert change["pool"] == POOL
        assert change["before"] == {
            "mu": 25.0,
            "sigma": 25.0 / 3.0,
            "ordinal": 0.0,
            "games": 0,
            "provisional": True,
        }
        assert change["after"]["games"] == 1 and change["after"]["sigma"] < 25.0 / 3.0
    # Ranks follow the score sheet (S16): the higher total, then the more puddings.
    totals = {t["seat"]: t["total"] for t in view["totals"]}
    by_rank = sorted(changes, key=lambda c: c["rank"])
    assert totals[by_rank[0]["seat"]] >= totals[by_rank[-1]["seat"]]


def test_an_unrated_game_view_is_what_it_was(api: ApiClient) -> None:
    view = api.create_game(2)
    assert "rated" not in view and "rating_changes" not in view


def test_account_ratings_and_history(api: ApiClient, league: dict[str, Any]) -> None:
    middle = league["accounts"][1]  # in the first three games
    response = api.get(f"/accounts/{middle['account_id']}/ratings")
    expect_status(response, 200)
    (held,) = response.json()["ratings"]
    assert held["pool"] == POOL and held["games"] == 3 and held["provisional"] is True
    assert held["anchor"] is False and held["ordinal"] == held["mu"] - 3 * held["sigma"]

    pages, after = [], None
    while True:
        params = {"pool": POOL, "limit": 2, **({} if after is None else {"after": after})}
        response = api.get(f"/accounts/{middle['account_id']}/ratings/history", params=params)
        expect_status(response, 200)
        page = response.json()
        pages.append(page["changes"])
        after = page["next_after"]
        if after is None:
            break
        assert 'rel="next"' in response.headers["Link"]
    changes = [c for p in pages for c in p]
    assert [c["game_id"] for c in changes] == league["games"][2::-1]  # newest first
    for newer, older in zip(changes, changes[1:], strict=False):
        assert newer["before"]["mu"] == older["after"]["mu"]  # each game starts where one ended
        assert newer["finished_at"] > older["finished_at"]


def test_a_bot_shows_its_anchor_in_every_pool(api: ApiClient) -> None:
    response = api.get("/accounts/bot:greedy/ratings")
    expect_status(response, 200)
    held = response.json()["ratings"]
    assert {r["pool"] for r in held} == set(ratings.POOLS)
    assert all(r["anchor"] and r["mu"] == ratings.ANCHORS["bot:greedy"].mu for r in held)


def test_the_account_stream_announces_the_change(
    pool: ConnectionPool, league: dict[str, Any]
) -> None:
    account = league["accounts"][0]["account_id"]
    with pool.connection() as conn:
        rows = conn.execute(
            "SELECT game_id::text, data FROM account_feed WHERE account_id = %s"
            " AND type = 'rating_changed' ORDER BY tx, id",
            (account,),
        ).fetchall()
        stored = conn.execute(
            "SELECT game_id::text, mu, sigma FROM rating_changes WHERE account_id = %s"
            " ORDER BY games",
            (account,),
        ).fetchall()
    assert [r[0] for r in rows] == [s[0] for s in stored]
    assert [(r[1]["after"]["mu"], r[1]["after"]["sigma"]) for r in rows] == [
        (s[1], s[2]) for s in stored
    ]


def test_a_person_without_an_account_cannot_sit(api: ApiClient) -> None:
    created = rated_game(api, 2, [{"seat": 1, "kind": "greedy"}])
    response = api.post(f"/games/{created['game_id']}/players", {"name": "anon"}, token=None)
    expect_problem(response, 403, "account_required")


@pytest.mark.parametrize(
    "extra",
    [
        {"visibility": "private", "bots": [{"seat": 1, "kind": "greedy"}]},
        {"bots": [{"seat": 0, "kind": "greedy"}, {"seat": 1, "kind": "random"}]},
    ],
    ids=["private", "bots-only"],
)
def test_a_rated_game_is_public_and_has_a_person(api: ApiClient, extra: dict[str, Any]) -> None:
    body = {"game": "sushi-go", "players": 2, "rated": True, **extra}
    expect_problem(api.post("/games", body, token=None), 422, "invalid_rated")


def test_the_leaderboard_pages_non_provisional_ratings(
    api: ApiClient, pool: ConnectionPool, league: dict[str, Any]
) -> None:
    expect_problem(api.get("/leaderboards/chess"), 404, "pool_not_found")
    # Standings of accounts with enough games, written as the service writes them: paging is
    # what is tested here, the fold is tested above and in tests/test_ratings.py.
    accounts = [new_account(api)["account_id"] for _ in range(5)]
    ordinals = [3.5, 7.25, 3.5, -1.0, 10.0]
    with pool.connection() as conn:
        for account, ordinal in zip(accounts, ordinals, strict=True):
            conn.execute(
                "INSERT INTO ratings VALUES (%s, 'sushi-go-zoch', %s, 1.0, %s, 12, false,"
                " gen_random_uuid(), now())",
                (account, ordinal + 3.0, ordinal),
            )
    seen, after = [], None
    while True:
        params = {"limit": 2, **({} if after is None else {"after": after})}
        response = api.get("/leaderboards/sushi-go-zoch", params=params)
        expect_status(response, 200)
        page = response.json()
        seen += [(p["ordinal"], p["account_id"]) for p in page["players"]]
        after = page["next_after"]
        if after is None:
            break
    assert seen == sorted(zip(ordinals, accounts, strict=True), reverse=True)
    expect_problem(api.get("/leaderboards/sushi-go-zoch?after=nonsense"), 400, "invalid_cursor")
    # the league's ratings are provisional (3 games or fewer): not on the board
    response = api.get(f"/leaderboards/{POOL}")
    assert response.json()["players"] == []


def test_the_rebuild_from_exports_is_the_stored_ratings_bit_for_bit(
    api: ApiClient, pool: ConnectionPool, league: dict[str, Any]
) -> None:
    exports = []
    for game_id in league["games"]:
        response = api.get(f"/games/{game_id}/export")
        expect_status(response, 200)
        exports.append(parse_export(response.text))
    random.Random(1).shuffle(exports)  # the rebuild orders them itself
    ledger = ratings.rebuild(exports)
    with pool.connection() as conn:
        stored = conn.execute(
            "SELECT pool, account_id, mu, sigma, games FROM ratings WHERE pool = %s", (POOL,)
        ).fetchall()
        finished = dict(conn.execute("SELECT game_id::text, finished_at FROM rated_games"))
    assert ledger.games == len(league["games"]) == len(finished)
    assert set(ledger.ratings) == {(p, a) for p, a, *_ in stored}
    for p, account, mu, sigma, games in stored:
        rebuilt = ledger.ratings[(p, account)]
        assert same(rebuilt.mu, mu) and same(rebuilt.sigma, sigma), account
        assert rebuilt.games == games
    # the export's last line before the checkpoint carries the finish time ratings used
    for records in exports:
        events = [r for r in records if "checkpoint" not in r]
        at = datetime.fromisoformat(events[-1]["recorded_at"])
        assert at == finished[events[0]["game_id"]]


def test_cardroom_ratings_rebuild_and_the_client_kit_check_the_service(
    api: ApiClient, live_server: Any, league: dict[str, Any], tmp_path: Any, capsys: Any
) -> None:
    """``cardroom ratings rebuild FOLDER --check URL`` and ``cardroom_client.ratings``: the same
    fold, from files and from texts, both equal to the service's answers."""
    from cardroom_client import Client
    from cardroom_client import ratings as kit

    from service.cli.main import main

    texts = []
    for game_id in league["games"]:
        text = api.get(f"/games/{game_id}/export").text
        tmp_path.joinpath(f"{game_id}.jsonl").write_text(text)
        texts.append(text)
    assert main(["ratings", "rebuild", str(tmp_path), "--check", live_server.url]) == 0
    out, err = capsys.readouterr()
    lines = [json.loads(line) for line in out.splitlines()]
    assert {line["account_id"] for line in lines} == {a["account_id"] for a in league["accounts"]}
    assert "3 of 3 ratings are the service's, bit for bit" in err

    with Client(live_server.url) as client:
        ledger = kit.rebuild(texts)
        assert ledger.games == len(league["games"])
        assert kit.check(client, ledger) == []
        # a rating that is not the service's is reported
        (pool_account, rating), *_ = ledger.ratings.items()
        ledger.ratings[pool_account] = ratings.Rating(rating.mu + 1e-12, rating.sigma, rating.games)
        assert len(kit.check(client, ledger)) == 1


def test_a_pool_lists_its_rated_games_in_finish_order(
    api: ApiClient, pool: ConnectionPool, league: dict[str, Any]
) -> None:
    """``GET /leaderboards/{pool}/games``: every rated game of the pool, in the rebuild's order
    (finish time, ties by game_id), a page at a time, each with its export."""
    listed, after, links = [], None, 0
    while True:
        params = {"limit": 1, **({} if after is None else {"after": after})}
        response = api.get(f"/leaderboards/{POOL}/games", params=params)
        expect_status(response, 200)
        page = response.json()
        assert page["pool"] == POOL and len(page["games"]) <= 1
        listed += page["games"]
        after = page["next_after"]
        if after is None:
            assert "Link" not in response.headers
            break
        links += 'rel="next"' in response.headers["Link"]
    with pool.connection() as conn:
        stored = conn.execute(
            "SELECT game_id::text, finished_at FROM rated_games WHERE pool = %s"
            " ORDER BY finished_at, game_id",
            (POOL,),
        ).fetchall()
    assert [g["game_id"] for g in listed] == [g for g, _ in stored] == league["games"]
    assert links == len(listed) - 1
    for row, (_, finished_at) in zip(listed, stored, strict=True):
        assert datetime.fromisoformat(row["finished_at"]) == finished_at
        assert row["url"] == f"/games/{row['game_id']}"
        export = api.get(row["export"])
        expect_status(export, 200)
        last = [r for r in parse_export(export.text) if "checkpoint" not in r][-1]
        assert datetime.fromisoformat(last["recorded_at"]) == finished_at
    # another pool has none of them; no pool, a cursor that is not one: refused
    assert api.get("/leaderboards/sequence/games").json()["games"] == []
    expect_problem(api.get("/leaderboards/chess/games"), 404, "pool_not_found")
    for bad in ("nonsense", "bm90IGEgY3Vyc29y"):  # the second: base64 of "not a cursor"
        expect_problem(api.get(f"/leaderboards/{POOL}/games?after={bad}"), 400, "invalid_cursor")
    too_many = api.get(f"/leaderboards/{POOL}/games?limit=1001", request_valid=False)
    expect_problem(too_many, 400, "invalid_request")


def test_cardroom_ratings_rebuild_from_the_service(
    live_server: Any, league: dict[str, Any], capsys: Any
) -> None:
    """``cardroom ratings rebuild --from URL --pool P --check``: the exports fetched from the
    service's list, folded, equal to its ratings bit for bit; the arguments checked."""
    from service.cli.main import main

    url = live_server.url
    assert main(["ratings", "rebuild", "--from", url, "--pool", POOL, "--check"]) == 0
    out, err = capsys.readouterr()
    lines = [json.loads(line) for line in out.splitlines()]
    assert {line["account_id"] for line in lines} == {a["account_id"] for a in league["accounts"]}
    assert {line["pool"] for line in lines} == {POOL}
    assert f"from {len(league['games'])} rated games" in err
    assert "3 of 3 ratings are the service's, bit for bit" in err
    # every pool by default: the same ratings (the league plays one pool)
    assert main(["ratings", "rebuild", "--from", url]) == 0
    assert [json.loads(line) for line in capsys.readouterr()[0].splitlines()] == lines
    for wrong in (
        ["ratings", "rebuild"],
        ["ratings", "rebuild", "x.jsonl", "--from", url],
        ["ratings", "rebuild", "x.jsonl", "--check"],
        ["ratings", "rebuild", "--from", url, "--pool", "chess"],
        ["ratings", "rebuild", "--from", "cardroom.example"],
    ):
        assert main(wrong) == 2, wrong
        assert "cardroom ratings rebuild: " in capsys.readouterr()[1]


def test_the_client_kit_rebuilds_from_the_service(live_server: Any, league: dict[str, Any]) -> None:
    """``cardroom_client.ratings.rebuild_from(client)``; and ``check`` of a rebuild the service
    has moved on from (the league's first three games: accounts that played the fourth since)
    compares with the service's history after as many games, not with its latest rating."""
    from cardroom_client import Client
    from cardroom_client import ratings as kit

    with Client(live_server.url) as client:
        ledger = kit.rebuild_from(client, [POOL])
        assert ledger.games == len(league["games"])
        assert kit.check(client, ledger) == []
        exports = [client.export_text(game_id) for game_id in league["games"][:3]]
        earlier = kit.rebuild(exports)
        behind = {
            key
            for key, rating in earlier.ratings.items()
            if rating.games < ledger.ratings[key].games
        }
        assert behind  # the fourth game moved two accounts on
        assert kit.check(client, earlier) == []
        (key, rating), *_ = sorted(earlier.ratings.items())
        earlier.ratings[key] = ratings.Rating(rating.mu, rating.sigma + 1e-12, rating.games)
        assert len(kit.check(client, earlier)) == 1


def _stream_items(base: str, token: str, wanted: int) -> list[dict[str, Any]]:
    """The first ``wanted`` ``rating_changed`` items of the account's stream, resumed from its
    start (``Last-Event-ID: 0-0``: every item after it); a read timeout fails rather than
    waits if fewer come."""
    headers = {"Authorization": f"Bearer {token}", "Last-Event-ID": "0-0"}
    found: list[dict[str, Any]] = []
    with requests.get(
        f"{base}/accounts/me/stream", headers=headers, stream=True, timeout=ANSWER
    ) as response:
        expect_status(response, 200)
        event = None
        for line in response.iter_lines(decode_unicode=True):
            if line.startswith("event: "):
                event = line.removeprefix("event: ")
            elif line.startswith("data: ") and event == "rating_changed":
                found.append(json.loads(line.removeprefix("data: ")))
                if len(found) == wanted:
                    return found
    return found


def test_the_stream_item_and_the_history_agree(
    api: ApiClient, live_server: Any, league: dict[str, Any]
) -> None:
    """Each ``rating_changed`` item of the account stream (GET /accounts/me/stream, over HTTP:
    its floats went through the feed's jsonb) says what ``GET /accounts/{id}/ratings/history``
    (float8 columns) says of the same game: pool, seat, rank, and the rating before and after,
    float for float."""
    for who in league["accounts"]:
        response = api.get(
            f"/accounts/{who['account_id']}/ratings/history",
            params={"pool": POOL, "order": "oldest", "limit": 200},
        )
        expect_status(response, 200)
        history = response.json()["changes"]
        assert len(history) == 3  # each account played three of the league's four games
        items = _stream_items(live_server.url, who["token"], len(history))
        assert [i["game_id"] for i in items] == [h["game_id"] for h in history]
        for item, row in zip(items, history, strict=True):
            assert item["pool"] == POOL
            assert (item["seat"], item["rank"]) == (row["seat"], row["rank"])
            for when in ("before", "after"):
                assert item[when] == row[when]
                for value in ("mu", "sigma", "ordinal"):
                    assert same(item[when][value], row[when][value]), (when, value)


def test_the_lobby_lists_a_rated_games_seats_with_their_ratings(
    api: ApiClient, league: dict[str, Any]
) -> None:
    """Issue 37, goal 5: ``GET /games`` names each seat's player of a rated game and their
    rating in its pool now, as ``GET /accounts/{id}/ratings`` has it; an unrated game's row
    has nothing of it."""
    rated, newcomer = league["accounts"][0], new_account(api)
    created = rated_game(api, 4, [{"seat": 0, "kind": "greedy"}])
    game_id = str(created["game_id"])
    seated(api, game_id, [rated, newcomer]).close()  # seats 1 and 2; seat 3 stays free
    unrated = str(api.create_game(2)["game_id"])
    response = api.get("/games", params={"ids": f"{game_id},{unrated}"})
    expect_status(response, 200)
    rows = {row["game_id"]: row for row in response.json()["games"]}

    row = rows[game_id]
    assert row["rated"] is True and row["rating_pool"] == POOL
    seats = row["seats"]
    assert [s["account_id"] for s in seats] == api.game(game_id)["rated_accounts"]
    assert [s["account_id"] for s in seats] == [
        "bot:greedy",
        rated["account_id"],
        newcomer["account_id"],
        None,
    ]
    held = api.get(f"/accounts/{rated['account_id']}/ratings").json()["ratings"]
    expected = next(r for r in held if r["pool"] == POOL)
    assert expected["games"] >= 1
    assert seats[1]["rating"] == {
        key: expected[key] for key in ("mu", "sigma", "ordinal", "games", "provisional", "anchor")
    }
    anchor = api.get("/accounts/bot:greedy/ratings").json()["ratings"]
    assert seats[0]["rating"]["anchor"] is True
    assert seats[0]["rating"]["ordinal"] == next(r for r in anchor if r["pool"] == POOL)["ordinal"]
    assert seats[2]["rating"] is None  # no rated game of the pool yet
    assert seats[3]["rating"] is None  # free

    plain = rows[unrated]
    assert not {"rated", "rating_pool"} & set(plain)
    assert [set(seat) for seat in plain["seats"]] == [{"seat", "name", "bot"}] * 2
