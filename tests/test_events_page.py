"""``GET /games/{id}/events`` without ``limit`` holds a whole game on one page."""

from __future__ import annotations

import random

import pytest
from api_client import ApiClient

from domain.sequence.randomplay import play_random_game
from service.http.schemas import EVENTS_PAGE

pytest_plugins = ["api_fixtures"]


@pytest.mark.parametrize(
    "body",
    [
        {"game": "sushi-go", "players": 5, "rules": {"edition": "gamewright"}},
        {"game": "sequence", "players": 12, "rules": {"teams": 3}},
    ],
)
def test_the_default_page_holds_a_whole_game(api: ApiClient, body: dict) -> None:
    bots = [{"seat": seat, "kind": "greedy"} for seat in range(body["players"])]
    created = api.post("/games", {**body, "bots": bots})
    assert created.status_code == 201, created.text
    game = created.json()
    assert game["status"] == "over"  # an all-bot game plays itself at creation
    page = api.get(f"/games/{game['game_id']}/events").json()
    assert page["next_after"] is None
    assert len(page["events"]) == game["version"]
    assert page["events"][-1]["type"] == "game_ended"


def test_the_default_page_is_far_above_the_longest_random_games() -> None:
    longest = max(
        len(play_random_game({"players": players, "teams": teams}, random.Random(i))[0])
        for players, teams in [(2, 2), (12, 3), (12, 2)]
        for i in range(10)
    )
    assert longest * 2 < EVENTS_PAGE
