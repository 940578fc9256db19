"""Quick match (issue 35, point 5): ``POST /games/quick`` seats the caller in the waiting public
game with exactly these rules, or creates one. Races are part of the contract: N requests at once
for a 4-player game, across two real ``cardroom serve`` processes, fill ⌈N/4⌉ games, never more
half-empty ones. Over HTTP, against the real app and PostgreSQL."""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
import requests
from api_client import ApiClient, expect_problem, expect_status
from patience import ANSWER
from race_support import at_once
from serve_support import cardroom_serve

from service.play.commands import Creation
from service.play.quick import rules_key

pytest_plugins = ["api_fixtures"]


@pytest.fixture
def rules(database_url: str) -> Iterator[dict[str, Any]]:
    """Rules no other test asks for: a turn clock of its own, its key's slot emptied first
    (the database is shared with other tests and earlier runs)."""
    seconds = random.randint(5, 3600)
    body = {"game": "sushi-go", "players": 4, "turn_seconds": seconds}
    _forget(database_url, body)
    yield body
    _forget(database_url, body)


def _forget(database_url: str, body: dict[str, Any]) -> None:
    for players in (2, 3, 4):
        creation = Creation("sushi-go", {"players": players}, (), body["turn_seconds"])
        with psycopg.connect(database_url) as conn:
            conn.execute("DELETE FROM quick_games WHERE key = %s", (rules_key(creation),))


def name() -> str:
    return f"q{uuid.uuid4().hex[:10]}"


def quick(api: ApiClient, body: dict[str, Any], token: str | None = None) -> dict[str, Any]:
    response = api.post("/games/quick", body, token=token)
    expect_status(response, 201)
    assert response.headers["Location"] == f"/games/{response.json()['game_id']}"
    return response.json()


def test_the_first_creates_the_next_join_until_full(api: ApiClient, rules: dict[str, Any]):
    ada = name()
    first = quick(api, {**rules, "name": ada})
    assert (first["created"], first["seat"], first["started"]) == (True, 0, False)
    view = api.game(first["game_id"], token=first["token"])  # the seat token works
    assert view["status"] == "waiting" and view["visibility"] == "public"
    assert [(s["name"], s["taken"]) for s in view["seats"]][0] == (ada, True)
    seats = [quick(api, {**rules, "name": name()}) for _ in range(3)]
    assert {s["game_id"] for s in seats} == {first["game_id"]}
    assert [(s["created"], s["seat"]) for s in seats] == [(False, 1), (False, 2), (False, 3)]
    assert seats[-1]["started"] is True
    assert api.game(first["game_id"])["status"] == "playing"
    fifth = quick(api, {**rules, "name": name()})  # the game is full: the next one
    assert fifth["created"] is True and fifth["game_id"] != first["game_id"]


def test_only_exactly_the_same_rules_share_a_game(api: ApiClient, rules: dict[str, Any]):
    first = quick(api, {**rules, "name": name()})
    # The game's defaults filled in are the same rules ...
    same = quick(api, {**rules, "rules": {"edition": "gamewright"}, "name": name()})
    assert same["game_id"] == first["game_id"]
    # ... but another number of players, or another clock, is another game.
    others = [
        {**rules, "players": 3},
        {**rules, "turn_seconds": rules["turn_seconds"] % 3595 + 6},
        {k: v for k, v in rules.items() if k != "turn_seconds"},
    ]
    for other in others:
        seat = quick(api, {**other, "name": name()})
        assert seat["game_id"] != first["game_id"], other


def test_an_account_takes_its_seat_under_its_name(api: ApiClient, rules: dict[str, Any]):
    created = api.post("/accounts", {"name": name()}, token=None).json()
    seat = quick(api, rules, token=created["token"])
    assert (seat["account_id"], seat["name"]) == (created["account_id"], created["name"])
    again = api.post("/games/quick", rules, token=created["token"])
    body = expect_problem(again, 409, "already_seated")
    assert body["errors"] == {"seat": seat["seat"], "game_id": seat["game_id"]}
    anonymous = api.post("/games/quick", rules, token=None)
    expect_problem(anonymous, 400, "invalid_request")
    private = api.post(
        "/games/quick", {**rules, "name": name(), "visibility": "private"}, request_valid=False
    )
    expect_problem(private, 400, "invalid_request")
    lookalike = api.post("/games/quick", {**rules, "name": created["name"].upper()})
    expect_problem(lookalike, 409, "name_taken")


def test_eight_at_once_on_two_hosts_fill_two_games(database_url: str, rules: dict[str, Any]):
    """8 requests at the same moment for a 4-player game, 4 to each of two real servers:
    exactly 2 games, both full. Repeated, since one run could pass by luck."""
    with cardroom_serve(database_url) as one, cardroom_serve(database_url) as two:
        for _ in range(3):
            _forget(database_url, rules)
            seats = at_once(
                [
                    _request(host.url, {**rules, "name": name()})
                    for host in (one, two, one, two, one, two, one, two)
                ]
            )
            assert sorted(s.status_code for s in seats) == [201] * 8, [s.text for s in seats]
            games: dict[str, list[int]] = {}
            for s in seats:
                games.setdefault(s.json()["game_id"], []).append(s.json()["seat"])
            assert sorted(sorted(g) for g in games.values()) == [[0, 1, 2, 3]] * 2
            assert sum(s.json()["created"] for s in seats) == 2
            for game_id in games:
                view = requests.get(f"{one.url}/games/{game_id}", timeout=ANSWER).json()
                assert view["status"] == "playing"


def _request(url: str, body: dict[str, Any]) -> Callable[[], requests.Response]:
    return lambda: requests.post(f"{url}/games/quick", json=body, timeout=ANSWER)
