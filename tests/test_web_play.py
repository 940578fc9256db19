"""A game's page (issue 17) in a real browser, where the network or other people get in the way:
a game that starts while the page loads, a join refused because the seat went meanwhile, going
offline and back, and how many requests a pick costs."""

from __future__ import annotations

import re
from typing import Any

import requests
from patience import ANSWER
from playwright.sync_api import Page, Route, expect
from test_web_sushigo import create_game, version
from web_support import timeout_ms

pytest_plugins = ["api_fixtures", "web_fixtures"]


def new_game(base: str, players: int = 2, **body: Any) -> str:
    answer = requests.post(
        f"{base}/games", json={"game": "sushi-go", "players": players, **body}, timeout=ANSWER
    )
    assert answer.status_code == 201, answer.text
    return answer.json()["game_id"]


def join(base: str, game_id: str, name: str) -> dict[str, Any]:
    answer = requests.post(f"{base}/games/{game_id}/players", json={"name": name}, timeout=ANSWER)
    assert answer.status_code == 201, answer.text
    return answer.json()


def test_a_game_that_starts_while_the_page_loads_is_shown_started(
    contexts: Any, live_server: Any
) -> None:
    """Before: the view (still waiting) and the log (hands dealt) disagreed, and the stream went
    on from the log's version, so the page stayed on "Waiting for players"."""
    base = live_server.url
    game_id = new_game(base)
    join(base, game_id, "Ana")
    page = contexts().new_page()
    first = []

    def late(route: Route) -> None:
        if first:
            route.continue_()
            return
        first.append(route.request.url)
        answer = route.fetch()  # the view while the game waits for its second player...
        join(base, game_id, "Bob")  # ...who sits down before the page reads the log
        route.fulfill(response=answer)

    page.route(f"**/games/{game_id}", late)
    page.goto(f"/#/game/{game_id}")
    expect(page.locator("#log")).to_contain_text("Round 1: hands dealt")
    expect(page.locator("#phase")).to_contain_text("Round 1 of 3")
    assert first  # the race did happen


def test_a_refused_join_shows_the_game_as_it_is_now(contexts: Any, live_server: Any) -> None:
    """Before: after a 409 the form still offered "1 open seat"."""
    base = live_server.url
    game_id = new_game(base)
    join(base, game_id, "Ana")
    context = contexts()
    page = context.new_page()
    # No live update tells the page (the stream's URL may carry a query: follow_rematch).
    page.route(re.compile(r"/stream(\?.*)?$"), lambda route: route.abort())
    page.goto(f"/#/game/{game_id}")
    expect(page.locator("#join h2")).to_contain_text("1 open seat")
    join(base, game_id, "Bob")  # the last seat goes to someone else meanwhile
    page.fill("#join-name", "Cy")
    with page.expect_response(lambda r: r.url.endswith("/players")) as answer:
        page.click("#join button[type=submit]")
    assert answer.value.status == 409
    expect(page.locator("#notice")).to_be_visible()
    expect(page.locator("#join")).to_have_count(0)
    expect(page.locator("#phase")).to_contain_text("Round 1 of 3")


def test_offline_is_shown_and_its_error_goes_once_back_online(
    contexts: Any, live_server: Any
) -> None:
    """Before: the indicator said "● live" while offline, and a "cannot be reached" banner
    stayed after the connection came back."""
    context = contexts()
    page = context.new_page()
    create_game(page, "Oda", 2, **{"seat-1": "greedy"})
    page.wait_for_selector("#hand button.pickable")
    expect(page.locator("#connection")).to_have_text("● live")
    context.context.set_offline(True)
    expect(page.locator("#connection")).to_contain_text("offline")
    page.locator("#hand button.pickable").first.click()
    page.click("#pick")  # fails after its retries: the service cannot be reached
    expect(page.locator("#notice")).to_contain_text("cannot be reached", timeout=timeout_ms(15_000))
    context.context.set_offline(False)
    expect(page.locator("#connection")).to_have_text("● live")
    expect(page.locator("#notice")).to_be_hidden()
    before = version(page)
    expect(page.locator("#hand button.chosen")).to_have_count(1)  # the choice is kept
    expect(page.locator("#game")).to_have_attribute("aria-busy", "false")
    page.click("#pick")
    expect(page.locator("#game")).not_to_have_attribute("data-version", str(before))


def test_a_pick_costs_one_request_and_focus_returns_to_the_hand(
    contexts: Any, live_server: Any
) -> None:
    """Before: every live event reloaded the game, including the view the pick's own answer had
    just returned. Now the stream's events already in that view cost nothing; and keyboard
    focus goes back to the hand's first card once the next hand is offered."""
    page = contexts().new_page()
    create_game(page, "Pia", 2, **{"seat-1": "greedy"})
    page.wait_for_selector("#hand button.pickable")
    asked: list[str] = []
    page.on("request", lambda r: asked.append(f"{r.method} {r.url}"))
    page.locator("#hand button.pickable").first.focus()
    page.keyboard.press("Enter")
    page.focus("#pick")
    page.keyboard.press("Enter")
    # The bot had picked already (S4), so this pick revealed the turn: the stream says so.
    expect(page.locator("#log li").first).to_contain_text("Turn 1 revealed")
    expect(page.locator("#hand button.pickable").first).to_be_focused()
    assert [a for a in asked if "/stream" not in a] == [
        f"POST {page.url.split('#')[0]}games/{page.url.rsplit('/', 1)[1]}/moves"
    ]


def test_your_turn_is_in_the_title_while_the_page_is_in_the_background(
    contexts: Any,
) -> None:
    page = contexts().new_page()
    create_game(page, "Rui", 2, **{"seat-1": "greedy"})
    page.wait_for_selector("#hand button.pickable")
    expect(page).to_have_title("Cardroom")
    page.evaluate(
        "Object.defineProperty(document, 'hidden', {get: () => true, configurable: true});"
        "document.dispatchEvent(new Event('visibilitychange'))"
    )
    expect(page).to_have_title("▶ Your turn — Cardroom")


# Notes each tone the page starts in an attribute of <html>: "h" if the page was hidden, "v" if
# in view (WebAudio's own method, wrapped from the test's side: the page needs no hook of its
# own, and its CSP stays as it is).
COUNT_TONES = (
    "document.documentElement.dataset.tones = ''; const start = OscillatorNode.prototype.start;"
    "OscillatorNode.prototype.start = function (...args) {"
    " document.documentElement.dataset.tones += document.hidden ? 'h' : 'v';"
    " return start.apply(this, args); }; true"  # (an expression, not a function to call)
)
HIDE = (
    "Object.defineProperty(document, 'hidden', {get: () => true, configurable: true});"
    "document.dispatchEvent(new Event('visibilitychange'))"
)
SHOW = (
    "Object.defineProperty(document, 'hidden', {get: () => false, configurable: true});"
    "document.dispatchEvent(new Event('visibilitychange'))"
)
SOUND_MODULE = "/app/js/ondemand/sound.js"


def pick_and_wait(page: Page) -> None:
    """Picks the hand's first card; the bot has picked (S4), so the next turn is offered."""
    before = version(page)
    page.locator("#hand button.pickable").first.click()
    page.click("#pick")
    expect(page.locator("#game")).not_to_have_attribute("data-version", str(before))
    page.wait_for_selector("#hand button.pickable")


def test_the_turn_sound_is_off_until_chosen_kept_and_plays_only_in_the_background(
    contexts: Any,
) -> None:
    page = contexts().new_page()
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url))
    create_game(page, "Sol", 2, **{"seat-1": "greedy"})
    page.wait_for_selector("#hand button.pickable")
    expect(page.locator("#turn-sound")).not_to_be_checked()  # off by default
    page.evaluate(HIDE)
    pick_and_wait(page)
    expect(page).to_have_title("▶ Your turn — Cardroom")
    # A new turn in the background, but the sound is off: its module is not even loaded.
    assert not [url for url in asked if url.endswith(SOUND_MODULE)]

    page.check("#turn-sound")
    assert page.evaluate("localStorage['cardroom.turnSound']") == "on"
    page.reload()
    page.wait_for_selector("#hand button.pickable")
    expect(page.locator("#turn-sound")).to_be_checked()  # kept in this browser
    asked.clear()
    page.evaluate(COUNT_TONES)
    page.evaluate(HIDE)
    assert not [url for url in asked if url.endswith(SOUND_MODULE)]  # no chime for this turn
    pick_and_wait(page)
    expect(page).to_have_title("▶ Your turn — Cardroom")
    expect(page.locator("html")).to_have_attribute("data-tones", "hh")  # the chime's two notes

    page.evaluate(SHOW)
    pick_and_wait(page)
    page.evaluate(HIDE)
    pick_and_wait(page)
    # Two notes more, for the turn that came while hidden; none for the one that came in view.
    expect(page.locator("html")).to_have_attribute("data-tones", "hhhh")
    page.uncheck("#turn-sound")
    assert page.evaluate("localStorage['cardroom.turnSound'] ?? null") is None
