"""The API end to end: real HTTP (werkzeug, threaded) against real PostgreSQL, every request and
response checked against openapi.yaml by ``ApiClient``.

- complete games of random legal play in every edition, player count and variant;
- every error status, provoked on purpose, with its problem code;
- simultaneous picks from threads.
"""

from __future__ import annotations

import json
import logging
import random
import threading
import uuid
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import Any

import dbsupport
import pytest
import requests
from api_client import (
    ApiClient,
    LiveServer,
    Table,
    expect_problem,
    expect_status,
    play_to_end,
    random_move,
    seed_matches,
    serve,
    serving,
)
from psycopg_pool import ConnectionPool

from domain.decider import Event, fold
from domain.sushigo import SUSHI_GO
from domain.sushigo.cards import KINDS
from domain.sushigo.shuffle import shuffled
from service.errors import ServiceError
from service.http import problems
from service.http.app import create_app
from service.play import GameService
from service.store.db import make_pool
from service.store.events import EventStore

pytest_plugins = ["api_fixtures"]


# --- complete games -------------------------------------------------------------------------------

GAMES = [
    pytest.param(2, {}, id="gamewright-2"),
    pytest.param(3, {}, id="gamewright-3"),
    pytest.param(4, {"edition": "gamewright"}, id="gamewright-4"),
    pytest.param(5, {}, id="gamewright-5"),
    pytest.param(3, {"edition": "zoch"}, id="zoch-3"),
    pytest.param(4, {"edition": "zoch"}, id="zoch-4"),
    pytest.param(5, {"edition": "zoch", "pass_direction": "left"}, id="zoch-5"),
    pytest.param(4, {"pass_direction": "alternate"}, id="gamewright-4-alternate"),
    pytest.param(3, {"edition": "zoch", "pass_direction": "alternate"}, id="zoch-3-alternate"),
    pytest.param(2, {"dummy": True}, id="gamewright-2-dummy"),
]


@pytest.mark.parametrize(("players", "rules"), GAMES)
def test_a_complete_game(api: ApiClient, players: int, rules: dict[str, Any]) -> None:
    rng = random.Random(f"{players}-{sorted(rules.items())}")
    table = Table.open(api, players, **rules)
    try:
        picks = play_to_end(table, rng)
        assert picks > 0
        view = api.game(table.game_id)
        assert view["status"] == "over"
        assert view["rules"] == {
            "players": players,
            "edition": rules.get("edition", "gamewright"),
            "pass_direction": rules.get("pass_direction", "left"),
            "dummy": rules.get("dummy", False),
        }
        check_finished_game(api, table, view, rng)
    finally:
        table.close()


def check_finished_game(
    api: ApiClient, table: Table, view: dict[str, Any], rng: random.Random
) -> None:
    players = view["rules"]["players"]
    dummy = view["rules"]["dummy"]
    scored = players + dummy

    # Winners and totals: the view, the score sheet and the event log agree (S16).
    assert view["winners"] and set(view["winners"]) <= set(range(players))  # never the dummy
    assert [t["seat"] for t in view["totals"]] == list(range(scored))
    totals = [t["total"] for t in view["totals"]]
    assert [s["score"] for s in view["seats"]] == totals[:players]
    if dummy:
        assert view["dummy"]["score"] == totals[players]
        assert view["dummy"]["controller"] is None
    best = max(totals[:players])
    assert all(totals[w] == best for w in view["winners"])
    sheet = api.scores(table.game_id)
    assert sheet["totals"] == view["totals"]  # one shape: {seat, name, total}
    assert sheet["winners"] == view["winners"]
    assert len(sheet["rounds"]) == 3
    for seat in range(scored):
        rounds = sum(r["seats"][seat]["total"] for r in sheet["rounds"])
        assert rounds + sheet["puddings"][seat]["points"] == totals[seat]
    if dummy:
        assert sheet["totals"][players]["name"] == "dummy"

    # The event log pages through every event gaplessly, in version order.
    limit = rng.choice([1, 7, 33])
    events = api.events(table.game_id, limit=limit)
    assert len(events) == view["version"]
    assert len(api.events(table.game_id, limit=500)) == view["version"]
    assert events[0]["type"] == "game_created"
    assert events[-1]["type"] == "game_ended"
    types = Counter(e["type"] for e in events)
    assert types["seat_taken"] == players
    assert types["round_dealt"] == types["round_scored"] == 3
    page = api.get(f"{table.path}/events", params={"after": view["version"]}).json()
    assert page["events"] == [] and page["next_after"] is None

    # After the end everything is public (S18): the seed, every hand, every pick.
    seed = view["seed"]
    assert seed_matches(seed, view["seed_commitment"])
    assert events[-1]["data"]["seed"] == seed
    assert events[0]["data"]["seed_commitment"] == view["seed_commitment"]
    assert all("hand" in s for s in view["seats"])
    for event in events:
        assert "redacted" not in event["data"], event
        if event["type"] == "card_picked":
            assert event["data"]["cards"]
    # ... so anyone can audit the deals from the seed (S18) and replay the game.
    deck = shuffled(bytes.fromhex(seed))
    dealt = 0
    for event in (e for e in events if e["type"] == "round_dealt"):
        piles = [*event["data"]["hands"], *([event["data"]["dummy_pile"]] if dummy else [])]
        for pile in piles:
            assert tuple(pile) == deck[dealt : dealt + len(pile)]
            dealt += len(pile)
    picked = [e["data"] for e in events if e["type"] == "card_picked"]
    if dummy:  # the controller names the dummy's card every turn (S17)
        assert sum("dummy_card" in p for p in picked) == types["turn_revealed"] == 27
    else:
        assert len(picked) == players * types["turn_revealed"]
    if view["rules"]["edition"] == "gamewright":
        assert not any("use_wasabi" in p for p in picked)
    replayed = fold(SUSHI_GO, [Event(e["type"], e["data"], e["schema_version"]) for e in events])
    assert replayed.over and list(replayed.totals) == totals
    assert list(replayed.winners) == view["winners"]
    # A seat's own view says the same.
    mine = table.players[0].client.game(table.game_id)
    assert mine["totals"] == view["totals"] and mine["you"]["seat"] == 0


def test_a_finished_game_is_listed_as_over(api: ApiClient, finished: Table) -> None:
    seen = {}
    after = None
    while True:
        params: dict[str, Any] = {"status": "over", "game": "sushi-go", "limit": 100}
        if after:
            params["after"] = after
        page = api.get("/games", params=params).json()
        seen.update({g["game_id"]: g for g in page["games"]})
        after = page["next_after"]
        if after is None:
            break
    summary = seen[finished.game_id]
    assert summary["status"] == "over" and summary["url"] == finished.path


# --- listing, health ------------------------------------------------------------------------------


def test_games_list_paginates_and_filters(api: ApiClient) -> None:
    mine = [api.create_game(3)["game_id"] for _ in range(3)]
    ids: list[str] = []
    after = None
    while True:
        params: dict[str, Any] = {"status": "waiting", "game": "sushi-go", "limit": 2}
        if after is not None:
            params["after"] = after
        response = api.get("/games", params=params)
        expect_status(response, 200)
        page = response.json()
        assert len(page["games"]) <= 2
        assert all(g["status"] == "waiting" and g["game"] == "sushi-go" for g in page["games"])
        ids += [g["game_id"] for g in page["games"]]
        after = page["next_after"]
        if after is None:
            break
    assert len(ids) == len(set(ids))
    positions = [ids.index(game_id) for game_id in mine]
    assert positions == sorted(positions)  # oldest first
    none = api.get("/games", params={"game": "no-such-game"}).json()
    assert none == {"games": [], "next_after": None}
    # order=oldest is the default: the same games in the same order (others may add games
    # meanwhile, at the end of the list).
    params = {"game": "sushi-go", "limit": 100}
    explicit = [
        g["game_id"]
        for g in api.get("/games", params={**params, "order": "oldest"}).json()["games"]
    ]
    default = [g["game_id"] for g in api.get("/games", params=params).json()["games"]]
    assert default[: len(explicit)] == explicit


def list_all_games(api: ApiClient, params: dict[str, Any]) -> list[dict[str, Any]]:
    """Every page of ``GET /games`` with these parameters, following ``next_after``."""
    games: list[dict[str, Any]] = []
    after = None
    while True:
        response = api.get("/games", params={**params, **({"after": after} if after else {})})
        expect_status(response, 200)
        page = response.json()
        assert len(page["games"]) <= params["limit"]
        games += page["games"]
        after = page["next_after"]
        if after is None:
            return games


def test_a_games_filter_that_is_not_utf8_is_refused_as_every_filter_is(api: ApiClient) -> None:
    """`%FF` is no UTF-8: the `game` filter refuses it (400) as `status`, `order` and `limit`
    refuse a value they cannot hold, rather than filter by U+FFFD."""
    for query in ("game=%FF", "game=sushi%C3go", "status=%FF", "order=%FF", "limit=%FF"):
        response = api.get(f"/games?{query}", request_valid=None)
        problem = expect_problem(response, 400, "invalid_request")
        assert query.split("=")[0] in problem["errors"], query
    expect_status(api.get("/games?game=sushi-go"), 200)
    expect_status(api.get("/games?game=%C3%A9"), 200)  # text, merely no such game


def test_games_list_newest_first(api: ApiClient) -> None:
    mine = [api.create_game(3)["game_id"] for _ in range(4)]
    games = list_all_games(
        api, {"game": "sushi-go", "status": "waiting", "order": "newest", "limit": 3}
    )
    ids = [g["game_id"] for g in games]
    assert len(ids) == len(set(ids))  # no game on two pages
    assert set(mine) <= set(ids)  # and none of mine left out
    positions = [ids.index(game_id) for game_id in mine]
    assert positions == sorted(positions, reverse=True)  # the last one made comes first
    keys = [(datetime.fromisoformat(g["created_at"]), uuid.UUID(g["game_id"])) for g in games]
    assert keys == sorted(keys, reverse=True)
    # Every game made before mine (and waiting) is on a later page: none is left out.
    oldest = [
        g["game_id"]
        for g in list_all_games(api, {"status": "waiting", "game": "sushi-go", "limit": 100})
    ]
    older = oldest[: oldest.index(mine[0])]  # still waiting now, so waiting then too
    assert set(older) <= set(ids[positions[0] + 1 :])


def test_health(api: ApiClient) -> None:
    response = api.get("/healthz")
    expect_status(response, 200)
    assert response.json() == {"status": "ok", "database": "ok"}


def test_views_before_the_start(api: ApiClient) -> None:
    game = api.create_game(3, edition="zoch")
    assert game["card_names"]["dumpling"] == "mussels"
    assert game["card_names"]["squid_nigiri"] == "tuna_nigiri"
    granted = api.join(game["game_id"], "Ada")
    assert granted["token_type"] == "Bearer" and not granted["started"]
    view = api.game(game["game_id"], token=granted["token"])
    assert view["status"] == "waiting"
    assert [s["taken"] for s in view["seats"]] == [True, False, False]
    assert [s["name"] for s in view["seats"]] == ["Ada", None, None]
    assert api.scores(game["game_id"])["rounds"] == []


# --- errors ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def module_api(live_server: LiveServer) -> Iterator[ApiClient]:
    with ApiClient(live_server.url) as client:
        yield client


@pytest.fixture(scope="module")
def started(module_api: ApiClient) -> Iterator[Table]:
    """A 3-player gamewright game in its first turn, nobody has picked. Tests must not pick."""
    table = Table.open(module_api, 3)
    yield table
    table.close()


@pytest.fixture(scope="module")
def finished(module_api: ApiClient) -> Iterator[Table]:
    table = Table.open(module_api, 2)
    play_to_end(table, random.Random(2))
    yield table
    table.close()


def _hand(table: Table, seat: int) -> list[str]:
    return table.players[seat].client.game(table.game_id)["you"]["hand"]


CREATE_400 = [
    ({"game": "sushi-go", "players": 3, "colour": "red"}, "colour"),
    ({"game": "sushi-go"}, "players"),
    ({"players": 3}, "game"),
    ({"game": "sushi-go", "players": "4"}, "players"),
    ({"game": "sushi-go", "players": 4.5}, "players"),
    ({"game": "sushi-go", "players": True}, "players"),
    ({"game": "sushi-go", "players": None}, "players"),
    ({"game": "sushi-go", "players": 0}, "players"),
    ({"game": "sushi-go", "players": 13}, "players"),
    ({"game": "sushi-go", "players": 10**40}, "players"),
    ({"game": "sushi-go", "players": -3}, "players"),
    ({"game": "", "players": 3}, "game"),
    ({"game": "x" * 5000, "players": 3}, "game"),
    ({"game": 7, "players": 3}, "game"),
    ({"game": "sushi-go", "players": 3, "rules": {"edition": "monopoly"}}, "edition"),
    ({"game": "sushi-go", "players": 3, "rules": {"pass_direction": "up"}}, "pass_direction"),
    ({"game": "sushi-go", "players": 2, "rules": {"dummy": "yes"}}, "dummy"),
    ({"game": "sushi-go", "players": 2, "rules": {"dummy": 1}}, "dummy"),
    ({"game": "sushi-go", "players": 3, "rules": {"jokers": True}}, "jokers"),
    ({"game": "sushi-go", "players": 3, "rules": None}, "rules"),
    ({"game": "sushi-go", "players": 3, "rules": []}, "rules"),
    ([], "_schema"),
    ("sushi-go", "_schema"),
    (3, "_schema"),
]


@pytest.mark.parametrize(("body", "field"), CREATE_400)
def test_400_invalid_create_body(module_api: ApiClient, body: Any, field: str) -> None:
    response = module_api.post("/games", body, request_valid=False)
    problem = expect_problem(response, 400, "invalid_request")
    assert field in problem["errors"], problem


@pytest.mark.parametrize(
    "raw",
    [b'{"game": "sushi-go", "players": ', b"null", b"", b"{'game': 1}", b"\xff\xfe", b"[" * 8000],
    ids=["truncated", "null", "empty", "single-quotes", "not-utf8", "deeply-nested"],
)
def test_400_malformed_json(module_api: ApiClient, started: Table, raw: bytes) -> None:
    headers = {"Content-Type": "application/json"}
    version = module_api.game(started.game_id)["version"]
    for path, token in [
        ("/games", None),
        (f"{started.path}/players", None),
        (f"{started.path}/moves", started.players[0].token),
    ]:
        response = module_api.post(
            path, data=raw, headers=headers, token=token, request_valid=False
        )
        expect_problem(response, 400, "malformed_json")
    assert module_api.game(started.game_id)["version"] == version  # no seat taken, no pick


JOIN_400 = [
    ({}, "name"),
    ({"name": "x" * 129}, "name"),  # past any name: a shorter bad name is 422 (test_names.py)
    ({"name": 42}, "name"),
    ({"name": None}, "name"),
    ({"name": "Ada", "seat": 0}, "seat"),
]


@pytest.mark.parametrize(("body", "field"), JOIN_400)
def test_400_invalid_join_body(module_api: ApiClient, body: Any, field: str) -> None:
    game = module_api.create_game(3)
    # The contract takes a join without a name: an account token's seat takes the account's.
    valid = None if body == {} else False
    response = module_api.post(f"/games/{game['game_id']}/players", body, request_valid=valid)
    problem = expect_problem(response, 400, "invalid_request")
    assert field in problem["errors"], problem
    assert module_api.game(game["game_id"])["version"] == 1  # nothing was recorded


MOVE_400 = [
    ({"cards": ["fugu"]}, "cards"),
    ({"cards": ["tempura", "sashimi", "dumpling"]}, "cards"),
    ({"cards": []}, "cards"),
    ({"cards": "tempura"}, "cards"),
    ({"cards": [None]}, "cards"),
    ({"cards": [7]}, "cards"),
    ({"cards": ["x" * 10000]}, "cards"),
    ({}, "cards"),
    ({"card": "tempura"}, "card"),
    ({"cards": ["tempura"], "dummy_card": "fugu"}, "dummy_card"),
    ({"cards": ["tempura"], "use_wasabi": [1]}, "use_wasabi"),
    ({"cards": ["tempura"], "use_wasabi": "no"}, "use_wasabi"),
    ({"cards": ["tempura"], "use_wasabi": [True, False, True]}, "use_wasabi"),
    ({"cards": ["tempura"], "seat": 5}, "seat"),
    ({"cards": ["tempura"], "seat": -1}, "seat"),
    ({"cards": ["tempura"], "seat": "0"}, "seat"),
    ({"cards": ["tempura"], "seat": None}, "seat"),
    ({"cards": ["tempura"], "seat": 2**70}, "seat"),
    # JSON Schema counts 5.0 as an integer, and so does the server (strict_json.py): out of range.
    pytest.param({"cards": ["tempura"], "seat": 5.0}, "seat", id="seat-5.0"),
]


@pytest.mark.parametrize(("body", "field"), MOVE_400)
def test_400_invalid_move_body(
    module_api: ApiClient, started: Table, body: Any, field: str
) -> None:
    version = module_api.game(started.game_id)["version"]
    token = started.players[0].token
    valid = None if isinstance(body.get("seat"), float) else False
    response = module_api.post(f"{started.path}/moves", body, token=token, request_valid=valid)
    problem = expect_problem(response, 400, "invalid_request")
    assert field in problem["errors"], problem
    assert module_api.game(started.game_id)["version"] == version


def test_400_use_wasabi_per_card(module_api: ApiClient) -> None:
    """One true/false per card (S9), refused by the body schema before the rules see it."""
    table = Table.open(module_api, 3, edition="zoch")
    card = _hand(table, 0)[0]
    response = module_api.post(
        f"{table.path}/moves",
        {"cards": [card], "use_wasabi": [True, False]},
        token=table.players[0].token,
        request_valid=None,  # JSON Schema cannot compare the two lengths
    )
    problem = expect_problem(response, 400, "invalid_request")
    assert "use_wasabi" in problem["errors"]


GAMES_QUERY_400 = [
    ({"limit": "0"}, "limit", False),
    ({"limit": "101"}, "limit", False),
    ({"limit": "ten"}, "limit", False),
    ({"limit": "2.5"}, "limit", False),
    ({"status": "finished"}, "status", False),
    ({"game": "g" * 41}, "game", False),
    ({"after": "a" * 201}, "after", False),
    ({"order": "desc"}, "order", False),
    ({"order": "Newest"}, "order", False),
    ({"order": ""}, "order", None),  # the validator takes an empty value for an absent one
    ({"sort": "desc"}, "sort", None),  # OpenAPI has no way to refuse unknown query parameters
]


@pytest.mark.parametrize(("params", "field", "valid"), GAMES_QUERY_400)
def test_400_bad_games_query(
    module_api: ApiClient, params: dict[str, str], field: str, valid: bool | None
) -> None:
    response = module_api.get("/games", params=params, request_valid=valid)
    problem = expect_problem(response, 400, "invalid_request")
    assert field in problem["errors"], problem


@pytest.mark.parametrize("cursor", ["garbage", "Zm9vfGJhcg", "", "!!!"])
def test_400_bad_games_cursor(module_api: ApiClient, cursor: str) -> None:
    response = module_api.get("/games", params={"after": cursor})
    problem = expect_problem(response, 400, "invalid_cursor")
    assert "'next_after'" in problem["detail"]  # the page field a client should send back


EVENTS_QUERY_400 = [
    ({"after": "-1"}, "after", False),
    ({"after": "abc"}, "after", False),
    ({"after": str(2**31)}, "after", False),
    ({"after": "9" * 400}, "after", False),
    ({"limit": "0"}, "limit", False),
    ({"limit": "1001"}, "limit", False),
    ({"limit": ""}, "limit", None),  # openapi-core takes an empty value for "not given"
    ({"since": "3"}, "since", None),
]


@pytest.mark.parametrize(("params", "field", "valid"), EVENTS_QUERY_400)
def test_400_bad_events_query(
    module_api: ApiClient, started: Table, params: dict[str, str], field: str, valid: bool | None
) -> None:
    response = module_api.get(f"{started.path}/events", params=params, request_valid=valid)
    problem = expect_problem(response, 400, "invalid_request")
    assert field in problem["errors"], problem


def test_401_moves_need_a_token(module_api: ApiClient, started: Table) -> None:
    card = _hand(started, 0)[0]
    response = module_api.post(
        f"{started.path}/moves", {"cards": [card]}, token=None, request_valid=False
    )
    expect_problem(response, 401, "missing_token")
    assert response.headers["WWW-Authenticate"] == "Bearer"


@pytest.mark.parametrize("path", ["/moves", "", "/events"], ids=["move", "view", "events"])
def test_401_unknown_token(module_api: ApiClient, started: Table, path: str) -> None:
    unknown = "x" * 43
    if path == "/moves":
        response = module_api.post(f"{started.path}/moves", {"cards": ["tempura"]}, token=unknown)
    else:
        response = module_api.get(started.path + path, token=unknown)
    expect_problem(response, 401, "invalid_token")
    assert response.headers["WWW-Authenticate"].startswith("Bearer error=")


@pytest.mark.parametrize(
    "header",
    ["Basic dXNlcjpwYXNz", "Bearer", "Bearer    ", "Token abc", "bearer-abc", "abc"],
)
@pytest.mark.parametrize("path", ["/moves", "", "/events"], ids=["move", "view", "events"])
def test_401_malformed_authorization(
    module_api: ApiClient, started: Table, header: str, path: str
) -> None:
    version = module_api.game(started.game_id)["version"]
    method = "POST" if path == "/moves" else "GET"
    kwargs: dict[str, Any] = {"json": {"cards": ["tempura"]}} if method == "POST" else {}
    response = module_api.request(
        method,
        started.path + path,
        headers={"Authorization": header},
        token=None,
        request_valid=None,
        **kwargs,
    )
    expect_problem(response, 401, "invalid_token")
    assert module_api.game(started.game_id)["version"] == version  # no pick recorded


def test_a_bearer_scheme_is_case_insensitive(module_api: ApiClient, started: Table) -> None:
    response = module_api.get(
        started.path, headers={"Authorization": f"bearer {started.players[1].token}"}, token=None
    )
    expect_status(response, 200)
    assert response.json()["you"]["seat"] == 1


def test_403_another_games_token(module_api: ApiClient, started: Table) -> None:
    other = Table.open(module_api, 2)
    token = other.players[0].token
    card = _hand(started, 0)[0]
    versions = [module_api.game(table.game_id)["version"] for table in (started, other)]
    response = module_api.post(f"{started.path}/moves", {"cards": [card]}, token=token)
    expect_problem(response, 403, "not_your_game")
    for path in (started.path, f"{started.path}/events"):
        expect_problem(module_api.get(path, token=token), 403, "not_your_game")
    assert [module_api.game(table.game_id)["version"] for table in (started, other)] == versions
    other.close()


def test_403_not_your_seat(module_api: ApiClient, started: Table) -> None:
    card = _hand(started, 1)[0]
    version = module_api.game(started.game_id)["version"]
    response = module_api.post(
        f"{started.path}/moves", {"cards": [card], "seat": 2}, token=started.players[1].token
    )
    expect_problem(response, 403, "not_your_seat")
    assert module_api.game(started.game_id)["version"] == version  # no pick, for either seat


@pytest.mark.parametrize(
    ("method", "suffix", "body"),
    [
        ("GET", "", None),
        ("GET", "/events", None),
        ("GET", "/scores", None),
        ("POST", "/players", {"name": "Ada"}),
        ("POST", "/moves", {"round": 1, "turn": 1, "cards": ["tempura"]}),
    ],
)
def test_404_unknown_game(
    module_api: ApiClient, started: Table, method: str, suffix: str, body: Any
) -> None:
    token = started.players[0].token if suffix == "/moves" else None
    for game_id, valid in [
        (str(uuid.uuid4()), True),
        ("not-a-uuid", False),
        ("12345", False),
        (started.game_id + "0", False),
    ]:
        kwargs: dict[str, Any] = {} if body is None else {"json": body}
        response = module_api.request(
            method, f"/games/{game_id}{suffix}", token=token, request_valid=valid, **kwargs
        )
        expect_problem(response, 404, "game_not_found")


@pytest.mark.parametrize(
    "path",
    ["/nope", "/games/", "/games/x/y/z", "/healthz/", "/static/openapi.yaml", "/openapi.json"],
)
def test_404_unknown_path(module_api: ApiClient, path: str) -> None:
    expect_problem(module_api.get(path, request_valid=False), 404, "not_found")


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("DELETE", "/games", {"GET", "POST"}),
        ("PUT", "/games/{id}", {"GET"}),
        ("DELETE", "/games/{id}", {"GET"}),
        ("GET", "/games/{id}/moves", {"POST"}),
        ("GET", "/games/{id}/players", {"POST"}),
        ("POST", "/games/{id}/events", {"GET"}),
        ("PATCH", "/games/{id}/scores", {"GET"}),
        ("POST", "/healthz", {"GET"}),
    ],
)
def test_405_method_not_allowed(
    module_api: ApiClient, started: Table, method: str, path: str, allowed: set[str]
) -> None:
    path = path.replace("{id}", started.game_id)
    response = module_api.request(method, path, request_valid=False)
    expect_problem(response, 405, "method_not_allowed")
    methods = {m.strip() for m in response.headers["Allow"].split(",")}
    assert methods - {"HEAD", "OPTIONS"} == allowed


def test_409_game_full(module_api: ApiClient, started: Table, finished: Table) -> None:
    for table in (started, finished):
        response = module_api.post(f"{table.path}/players", {"name": "Late"})
        expect_problem(response, 409, "game_full")


def test_409_already_picked(module_api: ApiClient) -> None:
    table = Table.open(module_api, 3)
    player = table.players[0]
    first, second = _hand(table, 0)[:2]
    player.client.move(table.game_id, {"cards": [first]})
    for card in (first, second):
        response = player.client.post(f"{table.path}/moves", {"cards": [card]})
        problem = expect_problem(response, 409, "already_picked")
        assert problem["errors"] == {"round": 1, "turn": 1}
    view = player.client.game(table.game_id)
    assert view["you"]["pick"]["cards"] == [first]  # a pick is final (S4)
    table.close()


def test_409_game_not_started(module_api: ApiClient) -> None:
    game = module_api.create_game(3)
    granted = module_api.join(game["game_id"], "Early")
    response = module_api.post(
        f"/games/{game['game_id']}/moves", {"cards": ["tempura"]}, token=granted["token"]
    )
    expect_problem(response, 409, "game_not_started")


def test_409_game_over(module_api: ApiClient, finished: Table) -> None:
    for player in finished.players:
        response = player.client.post(f"{finished.path}/moves", {"cards": ["tempura"]})
        expect_problem(response, 409, "game_over")


def test_413_body_too_large(live_server: LiveServer, started: Table) -> None:
    huge = {"game": "sushi-go", "players": 3, "rules": {}, "padding": "x" * 20_000}
    cases = [
        ("/games", None),
        (f"{started.path}/players", None),
        (f"{started.path}/moves", started.players[0].token),
    ]
    for path, token in cases:
        with ApiClient(live_server.url) as client:  # the server may close the connection
            response = client.post(path, huge, token=token, request_valid=None)
            expect_problem(response, 413, "body_too_large")
    with ApiClient(live_server.url) as client:  # a body just under the limit is read
        response = client.post(
            "/games", {"game": "sushi-go", "pad": "x" * 16_000}, request_valid=False
        )
        expect_problem(response, 400, "invalid_request")


@pytest.mark.parametrize(
    "content_type",
    [
        None,
        "text/plain",
        "application/x-www-form-urlencoded",
        "application/xml",
        "multipart/form-data",
    ],
)
def test_415_unsupported_media_type(
    module_api: ApiClient, started: Table, content_type: str | None
) -> None:
    headers = {} if content_type is None else {"Content-Type": content_type}
    cases = [
        ("/games", json.dumps({"game": "sushi-go", "players": 3}), None),
        (f"{started.path}/players", json.dumps({"name": "Ada"}), None),
        (f"{started.path}/moves", json.dumps({"cards": ["tempura"]}), started.players[0].token),
    ]
    for path, data, token in cases:
        response = module_api.post(
            path, data=data.encode(), headers=headers, token=token, request_valid=False
        )
        expect_problem(response, 415, "unsupported_media_type")


def test_json_with_a_charset_is_json(module_api: ApiClient) -> None:
    response = module_api.post(
        "/games",
        data=json.dumps({"game": "sushi-go", "players": 3}).encode(),
        headers={"Content-Type": "application/json; charset=utf-8"},
    )
    expect_status(response, 201)


@pytest.mark.parametrize(
    ("players", "rules"),
    [
        (2, {"edition": "zoch"}),
        (6, {"edition": "zoch"}),
        (1, {}),
        (6, {}),
        (12, {}),
        (3, {"dummy": True}),
        (2, {"dummy": True, "edition": "zoch"}),
        (4, {"dummy": True, "pass_direction": "alternate"}),
    ],
)
def test_422_invalid_rules(module_api: ApiClient, players: int, rules: dict[str, Any]) -> None:
    body = {"game": "sushi-go", "players": players, "rules": rules}
    expect_problem(module_api.post("/games", body), 422, "invalid_rules")


@pytest.mark.parametrize("game", ["chess", "sushi_go", "Sushi-Go", "Sequence"])
def test_422_unknown_game(module_api: ApiClient, game: str) -> None:
    # The contract lists the games (a union on `game`): it refuses the request too.
    response = module_api.post("/games", {"game": game, "players": 3}, request_valid=False)
    problem = expect_problem(response, 422, "unknown_game")
    assert "sushi-go" in problem["detail"] and "sequence" in problem["detail"]


def test_422_moves_that_break_the_rules(module_api: ApiClient, started: Table) -> None:
    version = module_api.game(started.game_id)["version"]
    player = started.players[0]
    hand = _hand(started, 0)
    missing = next(kind for kind in KINDS if kind not in hand)
    path = f"{started.path}/moves"

    problem = expect_problem(
        player.client.post(path, {"cards": [missing]}), 422, "card_not_in_hand"
    )
    assert problem["errors"] == {"hand": sorted(hand)}
    problem = expect_problem(
        player.client.post(path, {"cards": hand[:2]}), 422, "chopsticks_not_available"
    )
    assert "S6" in problem["detail"]
    expect_problem(
        player.client.post(path, {"cards": hand[:1], "dummy_card": hand[1]}),
        422,
        "dummy_card_not_allowed",
    )
    expect_problem(
        player.client.post(path, {"cards": hand[:1], "use_wasabi": [False]}),
        422,
        "wasabi_choice_not_allowed",
    )
    assert module_api.game(started.game_id)["version"] == version  # nothing was recorded
    assert not any(s["picked"] for s in module_api.game(started.game_id)["seats"])


def test_422_the_dummy_card(module_api: ApiClient) -> None:
    table = Table.open(module_api, 2, dummy=True)
    controller, other = table.players
    view = controller.client.game(table.game_id)
    assert view["you"]["controls_dummy"] and view["dummy"]["controller"] == 0
    hand = view["you"]["hand"]
    assert len(hand) == 10  # 9 dealt + the top card of the dummy pile (S17)
    path = f"{table.path}/moves"
    expect_problem(controller.client.post(path, {"cards": hand[:1]}), 422, "dummy_card_missing")
    expect_problem(
        controller.client.post(path, {"cards": hand[:1], "dummy_card": None}),
        422,
        "dummy_card_missing",
    )
    other_hand = other.client.game(table.game_id)["you"]["hand"]
    assert len(other_hand) == 9
    expect_problem(
        other.client.post(path, {"cards": other_hand[:1], "dummy_card": other_hand[1]}),
        422,
        "dummy_card_not_allowed",
    )
    # Naming one card for yourself and for the dummy needs it twice in your hand.
    single = next((k for k, n in Counter(hand).items() if n == 1), None)
    if single is not None:
        expect_problem(
            controller.client.post(path, {"cards": [single], "dummy_card": single}),
            422,
            "card_not_in_hand",
        )
    after = controller.client.move(table.game_id, {"cards": hand[:1], "dummy_card": hand[1]})
    assert after["you"]["pick"]["dummy_card"] == hand[1]
    table.close()


def test_errors_are_problem_json_even_with_a_json_accept(module_api: ApiClient) -> None:
    response = module_api.get("/nope", headers={"Accept": "application/json"}, request_valid=False)
    expect_problem(response, 404, "not_found")


# --- 503: the database is down --------------------------------------------------------------------


def test_503_when_the_database_is_unreachable() -> None:
    dead = ConnectionPool(
        "postgresql://nobody@127.0.0.1:9/nothing?connect_timeout=1",
        min_size=0,
        max_size=1,
        timeout=0.2,
        open=True,
    )
    try:
        with serve(create_app(pool=dead)) as url, ApiClient(url) as client:
            for path in ("/healthz", "/games", f"/games/{uuid.uuid4()}"):
                response = client.get(path)
                expect_problem(response, 503, "database_unavailable")
                assert response.headers["Retry-After"] == str(problems.RETRY_AFTER_SECONDS)
    finally:
        dead.close()


# --- simultaneous picks ---------------------------------------------------------------------------


def test_five_seats_pick_at_the_same_moment(api: ApiClient) -> None:
    table = Table.open(api, 5)
    turns = 4
    barrier = threading.Barrier(5, timeout=30)
    sent: dict[tuple[int, int], dict[str, Any]] = {}
    rng = random.Random(5)
    seeds = [rng.random() for _ in table.players]

    def play(seat: int) -> list[int]:
        statuses = []
        player_rng = random.Random(seeds[seat])
        with table.players[seat].client.clone() as client:
            try:
                for turn in range(1, turns + 1):
                    view = client.game(table.game_id)
                    assert (view["round"], view["turn"]) == (1, turn)
                    body = random_move(view, player_rng)
                    sent[(seat, turn)] = body
                    barrier.wait()
                    response = client.post(f"{table.path}/moves", body)
                    statuses.append(response.status_code)
                    barrier.wait()  # every seat has picked: the turn is over
            except BaseException:
                barrier.abort()  # the other seats fail at once instead of timing out
                raise
        return statuses

    with ThreadPoolExecutor(5) as pool:
        results = list(pool.map(play, range(5)))
    assert results == [[200] * turns] * 5

    events = api.events(table.game_id, limit=13)  # gapless, in version order
    picked = [e["data"] for e in events if e["type"] == "card_picked"]
    per_turn = Counter((p["round"], p["turn"], p["seat"]) for p in picked)
    assert per_turn == Counter({(1, t, s): 1 for t in range(1, turns + 1) for s in range(5)})
    for p in picked:
        assert p["cards"] == sent[(p["seat"], p["turn"])]["cards"]
    revealed = [e["data"] for e in events if e["type"] == "turn_revealed"]
    assert [r["turn"] for r in revealed] == list(range(1, turns + 1))
    assert api.game(table.game_id)["turn"] == turns + 1
    table.close()


def test_one_seat_sending_two_picks_at_once_gets_one(api: ApiClient) -> None:
    table = Table.open(api, 5)
    for turn in (1, 2, 3):
        player = table.players[0]
        hand = player.client.game(table.game_id)["you"]["hand"]
        kinds = list(dict.fromkeys(hand))
        bodies = [{"cards": [kinds[0]]}, {"cards": [kinds[-1]], "seat": 0}]
        barrier = threading.Barrier(2, timeout=30)

        def send(body: dict[str, Any], player: Any = player, barrier: Any = barrier) -> Any:
            with player.client.clone() as client:
                barrier.wait()
                return client.post(f"{table.path}/moves", body)

        with ThreadPoolExecutor(2) as pool:
            responses = list(pool.map(send, bodies))
        statuses = sorted(r.status_code for r in responses)
        assert statuses == [200, 409], [r.text for r in responses]
        won = next(b for b, r in zip(bodies, responses, strict=True) if r.status_code == 200)
        lost = next(r for r in responses if r.status_code == 409)
        expect_problem(lost, 409, "already_picked")
        for other in table.players[1:]:
            other.client.move(table.game_id, {"cards": [_hand(table, other.seat)[0]]})
        events = api.events(table.game_id)
        mine = [
            e["data"]
            for e in events
            if e["type"] == "card_picked" and e["data"]["seat"] == 0 and e["data"]["turn"] == turn
        ]
        assert [m["cards"] for m in mine] == [won["cards"]]
    table.close()


def view_version(table: Table) -> int:
    return int(table.api.game(table.game_id)["version"])


class _StaleOnce(GameService):
    """A service whose first load returns an old state: as if its request lost an append race."""

    def __init__(self, store: EventStore, stale: Any) -> None:
        super().__init__(store)
        self._stale = [stale]

    def load(self, game_id: uuid.UUID) -> Any:
        return self._stale.pop() if self._stale else super().load(game_id)


def test_a_pick_that_loses_a_race_is_not_replayed_in_the_next_turn(
    api: ApiClient, store: EventStore
) -> None:
    """Seat 0 sends picks A and B at once while seat 1 has picked already. A wins and ends the
    turn; B, decided on the state before A, must not become seat 0's pick of turn 2 (S4)."""
    for _ in range(20):
        table = Table.open(api, 2)
        hands = [_hand(table, 0), _hand(table, 1)]
        table.players[1].client.move(table.game_id, {"cards": [hands[1][0]]})
        rest = list(hands[1])
        rest.remove(hands[1][0])
        common = [k for k in hands[0][1:] if k in rest]  # in seat 0's hand now and in turn 2
        if common:
            break
        table.close()
    else:
        pytest.fail("no deal with a card in both hands")
    gid = uuid.UUID(table.game_id)
    stale = GameService(store).load(gid)
    table.players[0].client.move(table.game_id, {"cards": [hands[0][0]]})  # A: turn 1 ends
    racer = _StaleOnce(store, stale)
    from domain.sushigo import Pick

    with pytest.raises(ServiceError) as refused:
        racer.move(gid, 0, Pick((common[0],)), (1, 1))  # B, sent for round 1, turn 1
    assert refused.value.code == "stale_move" and refused.value.kind == "conflict"  # a 409
    assert refused.value.where == {"version": view_version(table), "round": 1, "turn": 2}
    view = table.players[0].client.game(table.game_id)
    assert view["turn"] == 2 and view["you"]["pick"] is None
    table.close()


def test_concurrent_joins_take_distinct_seats(api: ApiClient) -> None:
    game = api.create_game(5)
    barrier = threading.Barrier(6, timeout=30)

    def join(i: int) -> requests.Response:
        with api.clone() as client:
            barrier.wait()
            return client.post(f"/games/{game['game_id']}/players", {"name": f"p{i}"})

    with ThreadPoolExecutor(6) as pool:
        responses = list(pool.map(join, range(6)))
    granted = [r.json() for r in responses if r.status_code == 201]
    full = [r for r in responses if r.status_code != 201]
    assert sorted(g["seat"] for g in granted) == [0, 1, 2, 3, 4]
    assert [g["started"] for g in granted].count(True) == 1
    assert len(full) == 1
    expect_problem(full[0], 409, "game_full")
    assert len({g["token"] for g in granted}) == 5


def test_a_lobby_row_names_the_seats_free_seats_and_whose_move_it_is(api: ApiClient) -> None:
    """Issue 17: the lobby shows each game's players, free seats and whose turn it is from one
    GET /games, not one request per game."""
    body = {"game": "sushi-go", "players": 3, "bots": [{"seat": 2, "kind": "greedy"}]}
    created = api.post("/games", json=body).json()
    game_id = created["game_id"]

    def row() -> dict[str, Any]:
        games = list_all_games(api, {"game": "sushi-go", "order": "newest", "limit": 100})
        return next(g for g in games if g["game_id"] == game_id)

    waiting = row()
    assert waiting["free_seats"] == 2 and waiting["waiting_for"] == []
    assert waiting["seats"][0] == {"seat": 0, "name": None, "bot": None}
    ana = api.post(f"/games/{game_id}/players", json={"name": "Ana"}).json()
    api.post(f"/games/{game_id}/players", json={"name": "Bo"})  # the bot sits down after Bo
    playing = row()
    assert playing["status"] == "playing" and playing["free_seats"] == 0
    assert [(s["name"], s["bot"]) for s in playing["seats"]][:2] == [("Ana", None), ("Bo", None)]
    assert playing["seats"][2]["bot"] == "greedy"
    assert playing["waiting_for"] == [0, 1]  # the bot has picked already (S4: all at once)
    hand = api.get(f"/games/{game_id}", headers={"Authorization": f"Bearer {ana['token']}"})
    card = hand.json()["you"]["hand"][0]
    api.post(
        f"/games/{game_id}/moves",
        json={"round": 1, "turn": 1, "cards": [card]},
        headers={"Authorization": f"Bearer {ana['token']}"},
    )
    assert row()["waiting_for"] == [1]


def test_the_games_list_narrowed_to_given_ids(api: ApiClient) -> None:
    """A client lists its own games (the seats it holds) in one request."""
    mine = [api.create_game(3)["game_id"] for _ in range(3)]
    unknown = str(uuid.uuid4())
    page = api.get("/games", params={"ids": ",".join([*mine[:2], unknown]), "limit": 10}).json()
    assert (
        sorted(g["game_id"] for g in page["games"]) == sorted(mine[:2])
        and page["next_after"] is None
    )
    bad = api.get("/games", params={"ids": "not-a-game"}, request_valid=None)
    expect_problem(bad, 400, "invalid_request")


@pytest.fixture
def apart(database_url: str) -> Iterator[tuple[EventStore, ApiClient]]:
    """The store and a client of the app on a database of their own (dbsupport.own_database):
    games that do not fold must not meet other tests' lobby listings."""
    with (
        dbsupport.own_database(database_url) as url,
        make_pool(url, max_size=4) as pool,
        serving(pool) as server,
        ApiClient(server.url) as api,
    ):
        yield EventStore(pool), api


def test_a_game_that_cannot_be_folded_is_listed_without_its_seats(
    apart: tuple[EventStore, ApiClient], caplog: pytest.LogCaptureFixture
) -> None:
    """The lobby's rows are read from each game's folded state: a game of a kind this service
    does not host, or one whose events do not fold, is still listed (no 500 for the others),
    and the error log says which game, with the exception."""
    store, api = apart
    odd, broken = uuid.uuid4(), uuid.uuid4()
    store.create_game(odd, "checkers", b"s" * 32, [Event("game_created", {"seats": 2})])
    good = api.create_game(2)["game_id"]
    created = api.get(f"/games/{good}/events").json()["events"][0]
    bad_pick = {"seat": 0, "round": 1, "turn": 1, "cards": ["tempura"], "chopsticks": False}
    events = [Event("game_created", created["data"]), Event("card_picked", bad_pick)]
    store.create_game(broken, "sushi-go", b"s" * 32, events)
    ids = ",".join([str(odd), str(broken), good])
    with caplog.at_level(logging.ERROR, logger="service.http.routes.lobby"):
        page = api.get("/games", params={"ids": ids, "limit": 10}).json()
    rows = {g["game_id"]: g for g in page["games"]}
    assert set(rows) == {str(odd), str(broken), good}
    assert rows[str(odd)]["seats"] == [] and rows[str(broken)]["seats"] == []
    assert len(rows[good]["seats"]) == 2
    logged = [r for r in caplog.records if r.name == "service.http.routes.lobby"]
    assert sorted(r.getMessage() for r in logged) == sorted(
        f"game {game} cannot be folded; listed without its seats" for game in (odd, broken)
    )
    assert all(r.levelno == logging.ERROR and r.exc_info for r in logged)
