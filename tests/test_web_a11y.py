"""Accessibility (issue 17): axe-core (from the npm registry, see web_support.axe_core) finds no
WCAG 2.1 A/AA or best-practice violation on the lobby, a game of each kind in play, a finished
game and its replay, and a round's summary beside its last reveal, at desktop and phone
width."""

from __future__ import annotations

import random
from typing import Any

import pytest
import requests
from patience import ANSWER
from playwright.sync_api import Page, expect
from test_web_sushigo import create_game, take_turn
from web_support import axe_violations, screenshot

pytest_plugins = ["api_fixtures", "web_fixtures"]

WIDTHS = [1280, 375]


def clean(page: Page, where: str) -> None:
    violations = axe_violations(page)
    assert violations == [], f"{where}: {violations}"


def finished_game(base: str) -> str:
    bots = [{"seat": s, "kind": "greedy"} for s in range(3)]
    body = {"game": "sushi-go", "players": 3, "bots": bots}
    return requests.post(f"{base}/games", json=body, timeout=ANSWER).json()["game_id"]


@pytest.mark.parametrize("width", WIDTHS)
def test_the_lobby_and_a_sushi_go_game_have_no_violations(
    contexts: Any, live_server: Any, width: int
) -> None:
    finished_game(live_server.url)  # every list has a row
    page = contexts(width=width, bypass_csp=True).new_page()
    create_game(page, "Ama", 2, **{"seat-1": "greedy"})
    page.wait_for_selector("#hand button.pickable")
    page.locator("#hand button.pickable").first.click()
    clean(page, "a sushi go game with a card chosen")
    page.goto("/")
    expect(page.locator("#games-over li[data-game]").first).to_be_visible()
    expect(page.locator("#my-games li[data-game]").first).to_be_visible()
    clean(page, "the lobby")


@pytest.mark.parametrize("width", WIDTHS)
def test_a_sequence_game_has_no_violations(contexts: Any, width: int) -> None:
    page = contexts(width=width, bypass_csp=True).new_page()
    page.goto("/")
    page.select_option("#game", "sequence")
    page.select_option("#players", "2")
    page.select_option("#seat-1", "greedy")
    page.fill("#name", "Noor")
    page.click("#create-game")
    page.wait_for_selector("#hand button[data-card]")
    page.locator("#hand button[data-card]").first.click()
    clean(page, "a sequence game with a card chosen")


@pytest.mark.parametrize("width", WIDTHS)
def test_a_finished_game_and_its_replay_have_no_violations(
    contexts: Any, live_server: Any, width: int
) -> None:
    game_id = finished_game(live_server.url)
    page = contexts(width=width, bypass_csp=True).new_page()
    page.goto(f"/#/game/{game_id}")
    expect(page.locator("#game")).to_have_attribute("data-status", "over")
    clean(page, "a finished game")
    page.goto(f"/#/replay/{game_id}/20")
    expect(page.locator("#replay-state h2")).to_have_text("The table at version 20")
    page.locator("#score-sheet button[data-category='maki']").first.click()
    expect(page.locator("#provenance")).to_contain_text("maki")
    clean(page, "a replay with a score explained")
    screenshot(page, f"a11y-replay-{width}")


def test_a_finished_sequence_game_and_its_replay_have_no_violations(
    contexts: Any, live_server: Any
) -> None:
    bots = [{"seat": s, "kind": "greedy"} for s in range(2)]
    body = {"game": "sequence", "players": 2, "bots": bots}
    game_id = requests.post(f"{live_server.url}/games", json=body, timeout=ANSWER).json()["game_id"]
    page = contexts(bypass_csp=True).new_page()
    page.goto(f"/#/game/{game_id}")
    expect(page.locator("#game")).to_have_attribute("data-status", "over")
    clean(page, "a finished sequence game")
    page.goto(f"/#/replay/{game_id}/10")
    expect(page.locator("#replay-state h2").first).to_have_text("The table at version 10")
    clean(page, "a sequence replay")


@pytest.mark.parametrize("width", WIDTHS)
def test_a_round_s_summary_beside_its_last_reveal_has_no_violations(
    contexts: Any, width: int
) -> None:
    page = contexts(width=width, bypass_csp=True).new_page()
    create_game(page, "Ode", 2, **{"seat-1": "greedy"})
    rng = random.Random(3)
    while not page.locator("#round-summary #last-reveal").count():
        page.wait_for_selector("#hand button.pickable")
        take_turn(page, rng, chopsticks=0)
    expect(page.locator("#turn-sound")).to_be_visible()
    clean(page, "a round's summary with its last reveal")


def test_a_reveal_and_a_rematch_offer_have_no_violations(contexts: Any, live_server: Any) -> None:
    """Issue 29: the marks of a reveal, the reveal line, the card faces, the outcome panel and
    "‹name› proposes a rematch — Join"."""
    page = contexts(width=375, bypass_csp=True).new_page()
    game_id = create_game(page, "Uma", 2)
    other = requests.post(
        f"{live_server.url}/games/{game_id}/players", json={"name": "Vic"}, timeout=ANSWER
    ).json()
    page.wait_for_selector("#hand button.pickable")
    take_turn(page, random.Random(5), chopsticks=0)
    view = requests.get(
        f"{live_server.url}/games/{game_id}",
        headers={"Authorization": f"Bearer {other['token']}"},
        timeout=ANSWER,
    ).json()
    move = {"round": 1, "turn": 1, "cards": [view["you"]["hand"][0]]}
    headers = {"Authorization": f"Bearer {other['token']}"}
    requests.post(
        f"{live_server.url}/games/{game_id}/moves", json=move, headers=headers, timeout=ANSWER
    )
    expect(page.locator("#table .card.fresh")).to_have_count(2)
    expect(page.locator("#reveal-line")).to_contain_text("Turn 1 revealed")
    clean(page, "a reveal, marked")
    token = page.evaluate(f"JSON.parse(localStorage['cardroom.seats'])['{game_id}'].token")
    for bearer in (token, other["token"]):
        requests.post(
            f"{live_server.url}/games/{game_id}/resign",
            headers={"Authorization": f"Bearer {bearer}"},
            timeout=ANSWER,
        )
    requests.post(f"{live_server.url}/games/{game_id}/rematch", headers=headers, timeout=ANSWER)
    expect(page.locator("#rematch-offer")).to_contain_text("Vic proposes a rematch — Join")
    clean(page, "a finished game with a rematch offered")
