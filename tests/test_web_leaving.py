"""Leaving, resigning and cancelled games (issue 20) in a real browser, on both games: "Leave"
before the start frees the seat and the page watches; "Resign…" after it asks once more, then
the seat is labelled as the greedy bot's; a cancelled game says so on its page and in "Your
games"."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

import pytest
import requests
from patience import ANSWER
from playwright.sync_api import Page, expect
from web_support import screenshot

pytest_plugins = ["api_fixtures", "web_fixtures"]


def create_game(page: Page, game: str, name: str, players: int) -> str:
    """Creates a game from the lobby's form (this page sits down at seat 0); returns its id."""
    page.goto("/")
    page.select_option("#game", game)
    page.select_option("#players", str(players))
    page.fill("#name", name)
    page.click("#create-game")
    page.wait_for_url("**/#/game/*")
    page.wait_for_selector("#game")
    return page.url.rsplit("/", 1)[1]


def seat_label(page: Page, game: str, seat: int) -> Any:
    if game == "sushi-go":
        return page.locator(f"section.seat[data-seat='{seat}'] h3")
    return page.locator(f"li.sq-seat[data-seat='{seat}']")


@pytest.mark.parametrize("game", ["sushi-go", "sequence"])
def test_leave_before_the_start_frees_the_seat(contexts: Any, live_server: Any, game: str) -> None:
    page = contexts().new_page()
    game_id = create_game(page, game, "Lea", 2)
    expect(page.locator("#leave")).to_be_visible()
    page.click("#leave")
    expect(page.get_by_text("You are watching.")).to_be_visible()
    expect(page.locator("#join")).to_contain_text("2 open seats")
    expect(page.locator("#leave")).to_have_count(0)
    view = requests.get(f"{live_server.url}/games/{game_id}", timeout=ANSWER).json()
    assert [s["taken"] for s in view["seats"]] == [False, False]
    expect(page.locator("#log")).to_contain_text("Lea left seat 1")


@pytest.mark.parametrize("game", ["sushi-go", "sequence"])
def test_resign_asks_first_then_the_greedy_bot_plays_the_seat(
    contexts: Any, live_server: Any, game: str
) -> None:
    page = contexts().new_page()
    game_id = create_game(page, game, "Rae", 2)
    requests.post(
        f"{live_server.url}/games/{game_id}/players", json={"name": "Sam"}, timeout=ANSWER
    )
    resign = page.locator("#resign")
    expect(resign).to_be_visible()  # the page follows the start by itself
    resign.click()
    expect(page.locator("#resign-question")).to_contain_text("cannot be undone")
    page.click("#resign-cancel")  # nothing happens without the confirmation
    expect(resign).to_be_visible()
    view = requests.get(f"{live_server.url}/games/{game_id}", timeout=ANSWER).json()
    assert view["seats"][0]["taken_over"] is None
    resign.click()
    page.click("#resign-confirm")
    expect(page.locator("#seat-actions")).to_contain_text("You resigned")
    expect(seat_label(page, game, 0)).to_contain_text("resigned · greedy bot plays")
    expect(page.locator("#log")).to_contain_text("Rae resigned")
    view = requests.get(f"{live_server.url}/games/{game_id}", timeout=ANSWER).json()
    assert view["seats"][0]["taken_over"] == "resigned"
    screenshot(page, f"resigned-{game}")


@pytest.mark.parametrize("game", ["sushi-go", "sequence"])
def test_a_cancelled_game_says_so(contexts: Any, live_server: Any, game: str) -> None:
    page = contexts().new_page()
    game_id = create_game(page, game, "Cy", 3 if game == "sushi-go" else 4)
    sweeper = live_server.app.extensions["cardroom_clock"]
    later = datetime.now(UTC) + timedelta(days=2)  # past the default 24 h to fill
    assert sweeper.sweep(later, [UUID(game_id)]) == 1
    expect(page.locator("#cancelled")).to_contain_text("did not fill in time")
    expect(page.locator("#phase")).to_contain_text("Cancelled")
    expect(page.locator("#leave")).to_have_count(0)
    page.goto("/")
    expect(page.locator(f"#my-games li[data-game='{game_id}']")).to_contain_text("cancelled")
