"""Issue 29: the end of a game, on the page. The outcome comes first (the ranking and how it was
decided, within a phone's first screen), and Rematch brings the whole table back: two people in
two browsers who both press it sit in one new game; one who presses it first is announced live to
the other ("‹name› proposes a rematch — Join"). Sequence gets the same result panel."""

from __future__ import annotations

from typing import Any

import requests
from patience import ANSWER
from playwright.sync_api import Page, expect
from test_web_sushigo import create_game, token_of
from web_support import SHOTS, screenshot

pytest_plugins = ["api_fixtures", "web_fixtures"]


def _two_at_a_table(contexts: Any, game: str = "sushi-go", **size: int) -> tuple[Page, Page, str]:
    """Ana creates a 2-player game in the lobby, Bob joins it by its link, both see it play."""
    ana = contexts(**size).new_page()
    if game == "sushi-go":
        game_id = create_game(ana, "Ana", 2)
    else:
        ana.goto("/")
        ana.select_option("#game", game)
        ana.select_option("#players", "2")
        ana.fill("#name", "Ana")
        ana.click("#create-game")
        ana.wait_for_url("**/#/game/*")
        game_id = ana.url.rsplit("/", 1)[1]
    bob = contexts(**size).new_page()
    bob.goto(f"/#/game/{game_id}")
    bob.fill("#join-name", "Bob")
    bob.click("#join button[type=submit]")
    expect(bob.locator("#game")).to_have_attribute("data-status", "playing")
    return ana, bob, game_id


def _both_resign(base: str, game_id: str, *pages: Page) -> None:
    """Both give up (the greedy bot plays on, to the end): a finished game in a moment."""
    for page in pages:
        answer = requests.post(
            f"{base}/games/{game_id}/resign",
            headers={"Authorization": f"Bearer {token_of(page, game_id)}"},
            timeout=ANSWER,
        )
        assert answer.status_code == 200, answer.text
    for page in pages:
        expect(page.locator("#game")).to_have_attribute("data-status", "over")


def _seated_in(page: Page, game_id: str) -> bool:
    return bool(page.evaluate(f"!!JSON.parse(localStorage['cardroom.seats'])['{game_id}']"))


def test_both_press_rematch_and_sit_in_one_game(contexts: Any, live_server: Any) -> None:
    """Before: each Rematch created its own game, each waiting for the other."""
    ana, bob, game_id = _two_at_a_table(contexts)
    _both_resign(live_server.url, game_id, ana, bob)
    expect(ana.locator("#rematch")).to_be_visible()
    expect(bob.locator("#rematch")).to_be_visible()
    with ana.expect_response(lambda r: r.url.endswith("/rematch")) as first:
        ana.click("#rematch")
        bob.click("#rematch")  # before his page can know of Ana's
    assert first.value.status == 201
    ana.wait_for_url(f"**/#/game/{first.value.json()['game_id']}")
    bob.wait_for_url(f"**/#/game/{first.value.json()['game_id']}")
    rematch = ana.url.rsplit("/", 1)[1]
    assert bob.url.rsplit("/", 1)[1] == rematch != game_id
    for page in (ana, bob):
        expect(page.locator("#game")).to_have_attribute("data-status", "playing")
        page.wait_for_selector("#hand button.pickable")
        assert _seated_in(page, rematch)


def test_a_rematch_proposed_is_offered_to_the_other_live(contexts: Any, live_server: Any) -> None:
    ana, bob, game_id = _two_at_a_table(contexts)
    _both_resign(live_server.url, game_id, ana, bob)
    ana.click("#rematch")
    ana.wait_for_url(lambda url: game_id not in url)
    rematch = ana.url.rsplit("/", 1)[1]
    expect(ana.locator("#phase")).to_have_text("Waiting for players")
    offer = bob.locator("#rematch-offer")
    expect(offer).to_contain_text("Ana proposes a rematch — Join")  # live: no reload
    screenshot(bob, "rematch-offer")
    offer.get_by_role("button", name="Join").click()
    bob.wait_for_url(f"**/#/game/{rematch}")
    for page in (ana, bob):
        expect(page.locator("#game")).to_have_attribute("data-status", "playing")
    # Back on the finished game, the offer has become a way back to one's seat.
    bob.goto(f"/#/game/{game_id}")
    expect(bob.locator("#rematch-link")).to_have_attribute("href", f"#/game/{rematch}")


def test_the_outcome_comes_first_on_a_phone(contexts: Any, live_server: Any) -> None:
    """Before: the final ranking and the tie-break sat below the last round's summary, a long
    scroll down on a phone."""
    ana, bob, game_id = _two_at_a_table(contexts, width=390, height=844)
    _both_resign(live_server.url, game_id, ana, bob)
    for locator in ("#final-title", "#verdict", "#ranking", "#rematch"):
        expect(ana.locator(locator)).to_be_in_viewport()
    final = ana.locator("#final").bounding_box()
    game = ana.locator("#game").bounding_box()
    assert final and game and final["y"] < game["y"]
    summary = ana.locator("#round-summary")
    if summary.count():
        box = summary.bounding_box()
        assert box and final["y"] < box["y"]
    SHOTS.mkdir(parents=True, exist_ok=True)
    ana.screenshot(path=str(SHOTS / "end-screen-phone.png"))  # the first screen of a phone


def test_sequence_has_a_result_panel_with_rematch_and_one_headline(
    contexts: Any, live_server: Any
) -> None:
    """Before: no result panel, and "Game over — … wins" twice (the phase and the banner)."""
    ana, bob, game_id = _two_at_a_table(contexts, "sequence")
    _both_resign(live_server.url, game_id, ana, bob)
    expect(ana.locator("#final #verdict")).to_contain_text("wins")
    expect(ana.locator("#final #ranking li")).to_have_count(2)
    expect(ana.locator("#final #rematch")).to_be_visible()
    assert ana.locator("main").get_by_text("Game over —").count() == 1
    ana.click("#rematch")
    expect(bob.locator("#rematch-offer")).to_contain_text("Ana proposes a rematch — Join")


def test_a_rematch_offered_before_the_final_sheet_arrives_breaks_nothing(
    contexts: Any, live_server: Any
) -> None:
    """CI once saw "Cannot read properties of undefined (reading 'seat')": the rematch's
    announcement drew the final panel with the score sheet read before the end (no winners,
    totals tied at 0). Here every score sheet asked for after the start is held until the
    rematch is on screen: the panel waits for the final sheet, then ranks with it."""
    ana, bob, game_id = _two_at_a_table(contexts)
    with bob.expect_response("**/scores*"):  # Bob comes back: a sheet of the game in play
        bob.reload()
    held: list[Any] = []
    release = False

    def hold(route: Any) -> None:
        route.continue_() if release else held.append(route)

    bob.route("**/scores*", hold)
    bob_token = {"Authorization": f"Bearer {token_of(bob, game_id)}"}
    answer = requests.post(f"{live_server.url}/games/{game_id}/resign", headers=bob_token)
    assert answer.status_code == 200, answer.text
    _both_resign(live_server.url, game_id, ana)  # Bob's page waits for its sheet meanwhile
    ana.click("#rematch")
    expect(bob.locator("#rematch-offer")).to_contain_text("Ana proposes a rematch — Join")
    assert held, "the page asked for no score sheet after the end"
    expect(bob.locator("#ranking")).to_have_count(0)  # no ranking from a sheet before the end
    release = True
    for route in held:
        route.continue_()
    expect(bob.locator("#ranking li")).to_have_count(2)
    expect(bob.locator("#verdict")).not_to_be_empty()
