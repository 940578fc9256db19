"""Sequence in the web page (issue 8): the board with chips and sequences, your hand, the legal
cells of the selected card highlighted; a whole game against a bot played by clicking cells."""

from __future__ import annotations

import random
from typing import Any

import requests
from patience import ANSWER
from playwright.sync_api import Page, expect
from web_support import screenshot

pytest_plugins = ["api_fixtures", "web_fixtures"]


def seat_view(base: str, game_id: str, token: str) -> Any:
    response = requests.get(
        f"{base}/games/{game_id}", headers={"Authorization": f"Bearer {token}"}, timeout=ANSWER
    )
    response.raise_for_status()
    return response.json()


def highlighted(page: Page) -> list[list[int]]:
    cells = page.locator("#board button.legal")
    return sorted(
        [
            int(cells.nth(i).get_attribute("data-row") or -1),
            int(cells.nth(i).get_attribute("data-col") or -1),
        ]
        for i in range(cells.count())
    )


def test_a_sequence_game_against_a_bot_on_the_board(contexts: Any, live_server: Any) -> None:
    rng = random.Random(11)
    page = contexts().new_page()
    page.goto("/")
    page.select_option("#game", "sequence")
    page.select_option("#players", "2")
    page.select_option("#seat-1", "greedy")
    page.fill("#name", "Noor")
    page.click("#create-game")
    page.wait_for_url("**/#/game/*")
    game_id = page.url.rsplit("/", 1)[1]
    token = page.evaluate(f"JSON.parse(localStorage['cardroom.seats'])['{game_id}'].token")
    expect(page.locator("#board button.sq-cell")).to_have_count(100)
    screenshot(page, "sequence-1-start")

    moves = 0
    while True:
        page.wait_for_selector("#hand button[data-card], #game[data-status=over]")
        if page.locator("#game[data-status=over]").count():
            break
        expect(page.locator("#game")).to_have_attribute("data-status", "playing")
        view = seat_view(live_server.url, game_id, token)
        if not view["you"]["your_turn"]:
            expect(page.locator("#game")).not_to_have_attribute(
                "data-version", str(view["version"])
            )
            continue
        plays = {p["card"]: sorted(p["cells"]) for p in view["you"]["plays"]}
        playable = [card for card, cells in plays.items() if cells]
        before = page.get_attribute("#game", "data-version")
        if not playable:  # only dead cards: discard one (Q7), or pass (Q8)
            button = "#discard" if view["you"]["can_discard"] else "#pass"
            if button == "#discard":
                page.locator(
                    f"#hand button[data-card='{view['you']['dead_cards'][0]}']"
                ).first.click()
            page.click(button)
        else:
            card = rng.choice(playable)
            page.locator(f"#hand button[data-card='{card}']").first.click()
            # The page highlights exactly the cells the API says the card can go on.
            assert highlighted(page) == plays[card]
            cell = rng.choice(plays[card])
            target = page.locator(f"#board button[data-row='{cell[0]}'][data-col='{cell[1]}']")
            shown = int(page.inner_text("#phase").split()[1])  # "Turn N · your turn (…)"
            with page.expect_response(lambda r: r.url.endswith("/moves")) as answer:
                target.click()
            assert answer.value.status == 200, answer.value.text()
            # The move names the turn the page showed when it was chosen.
            assert answer.value.request.post_data_json == {
                "turn": shown,
                "card": card,
                "cell": cell,
            }
            if moves == 3:
                screenshot(page, "sequence-2-playing")
        moves += 1
        expect(page.locator("#game")).not_to_have_attribute("data-version", before)
        if not playable:
            continue
        # The chip placed (or removed, for a one-eyed jack) is on the page's board as in the API.
        chip = seat_view(live_server.url, game_id, token)["chips"][cell[0]][cell[1]]
        expect(target).to_have_attribute("data-chip", "" if chip is None else str(chip))
    final = requests.get(f"{live_server.url}/games/{game_id}", timeout=ANSWER).json()
    assert final["status"] == "over" and moves > 5
    # The board shows every chip of the final position and the cells of each sequence.
    for r, row in enumerate(final["chips"]):
        for c, chip in enumerate(row):
            cell = page.locator(f"#board button[data-row='{r}'][data-col='{c}']")
            expect(cell).to_have_attribute("data-chip", "" if chip is None else str(chip))
    in_runs = {(r, c) for run in final["sequences"] for r, c in run["cells"]}
    expect(page.locator("#board button.sq-in-seq")).to_have_count(len(in_runs))
    # ... marked plainly: striped and outlined 4 px in the team's colour (issue 39, item 11)
    marked = page.locator("#board button.sq-in-seq:not(.sq-corner)").first
    style = marked.evaluate(
        "e => [getComputedStyle(e).backgroundImage, getComputedStyle(e).boxShadow]"
    )
    assert style[0].startswith("repeating-linear-gradient") and " 4px" in style[1], style
    expect(page.locator("#phase")).to_contain_text("Game over")
    screenshot(page, "sequence-3-over")
    page.click("#replay-link")
    expect(page.locator("#audit h2")).to_have_text("✔ Audit passed")
    expect(page.locator("#replay-state #board button.sq-cell")).to_have_count(100)
    screenshot(page, "sequence-4-replay")


def test_the_lobby_sets_up_sequence_teams_variants_and_bots(
    contexts: Any, live_server: Any
) -> None:
    """6 players in 3 teams (Q4) with advanced jacks (Q11): the game the API records is the one
    chosen in the form; the page shows every team and the seats in turn order."""
    page = contexts().new_page()
    page.goto("/")
    page.select_option("#game", "sequence")
    page.select_option("#players", "6")
    page.select_option("#teams", "3")
    page.check("#advanced_jacks")
    for seat in range(1, 6):
        page.select_option(f"#seat-{seat}", "greedy" if seat % 2 else "random")
    page.fill("#name", "Ines")
    page.click("#create-game")
    page.wait_for_url("**/#/game/*")
    game_id = page.url.rsplit("/", 1)[1]
    view = requests.get(f"{live_server.url}/games/{game_id}", timeout=ANSWER).json()
    assert view["rules"] == {"players": 6, "teams": 3, "advanced_jacks": True}
    assert [s["bot"] for s in view["seats"]] == [
        None,
        "greedy",
        "random",
        "greedy",
        "random",
        "greedy",
    ]
    expect(page.locator("#teams li[data-team]")).to_have_count(3)
    expect(page.locator("#seats li[data-seat]")).to_have_count(6)
    expect(page.locator("main")).to_contain_text("advanced jacks")
    page.wait_for_selector("#hand button[data-card]")
    screenshot(page, "sequence-5-six-players")


def test_on_a_phone_the_hand_stays_beside_the_board_and_cells_say_what_they_show(
    contexts: Any,
) -> None:
    page = contexts(width=375, height=740).new_page()
    page.goto("/")
    page.select_option("#game", "sequence")
    page.select_option("#players", "2")
    page.select_option("#seat-1", "greedy")
    page.fill("#name", "Ivo")
    page.click("#create-game")
    page.wait_for_selector("#hand button[data-card]")
    # The board at the top of the screen (the game now opens at its own top, issue 29, not at
    # the lobby's scroll position, which used to bring the hand into view by chance).
    page.locator("#board").evaluate("el => el.scrollIntoView({ block: 'start' })")
    expect(page.locator("#board")).to_be_in_viewport(ratio=0.3)
    expect(page.locator("#hand button[data-card]").first).to_be_in_viewport()
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    screenshot(page, "sequence-phone")
    # A cell's spoken label begins with what it shows (A♠, 10♥, ★), then says the rest.
    labels = page.evaluate(
        "[...document.querySelectorAll('#board .sq-cell')]"
        ".map((c) => [c.querySelector('.sq-label').textContent, c.getAttribute('aria-label')])"
    )
    assert len(labels) == 100
    assert all(label.startswith(f"{shown},") for shown, label in labels), labels[:3]


def a_card_on_its_way_to_the_board(contexts: Any, live_server: Any) -> tuple[Page, str]:
    """A 2-player Sequence game against the greedy bot, played from the keyboard: a playable card
    chosen in the hand (Enter), a legal cell of the board focused; and the view's version."""
    page = contexts().new_page()
    page.goto("/")
    page.select_option("#game", "sequence")
    page.select_option("#players", "2")
    page.select_option("#seat-1", "greedy")
    page.fill("#name", "Kai")
    page.click("#create-game")
    page.wait_for_url("**/#/game/*")
    game_id = page.url.rsplit("/", 1)[1]
    token = page.evaluate(f"JSON.parse(localStorage['cardroom.seats'])['{game_id}'].token")
    page.wait_for_selector("#hand.sq-hand-turn button[data-card]")
    view = seat_view(live_server.url, game_id, token)
    card = next(p["card"] for p in view["you"]["plays"] if p["cells"])
    page.locator(f"#hand button[data-card='{card}']").first.focus()
    page.keyboard.press("Enter")
    page.locator("#board button.legal").first.focus()
    before = page.get_attribute("#game", "data-version")
    return page, before or ""


def test_after_a_move_made_with_the_keyboard_focus_is_back_in_the_hand(
    contexts: Any, live_server: Any
) -> None:
    """Issue 17: the board's cell that took the chip is disabled once the move is made; keyboard
    focus goes back to the hand (not to the page's top), ready for the next turn."""
    page, before = a_card_on_its_way_to_the_board(contexts, live_server)
    page.keyboard.press("Enter")
    expect(page.locator("#game")).not_to_have_attribute("data-version", before)
    expect(page.locator("#hand button[data-card]:focus")).to_have_count(1)


def test_focus_comes_back_to_the_hand_when_the_view_is_drawn_twice_within_a_frame(
    contexts: Any, live_server: Any
) -> None:
    """Issue 17, on a busy machine: the move's answer and the stream's update can draw the view
    twice before the browser's next frame; the focus still goes back to the hand. Injected by
    holding requestAnimationFrame's callbacks until the view has been drawn again."""
    page, before = a_card_on_its_way_to_the_board(contexts, live_server)
    page.evaluate(
        "() => { window.heldFrames = [];"
        " window.requestAnimationFrame = (f) => window.heldFrames.push(f); }"
    )
    page.keyboard.press("Enter")
    expect(page.locator("#game")).not_to_have_attribute("data-version", before)
    drawn = page.get_attribute("#game", "data-drawn")
    page.evaluate("() => window.dispatchEvent(new Event('online'))")  # catches up: draws again
    # (The page keeps its nodes when it draws again, issue 29: #game counts the draws.)
    expect(page.locator("#game")).not_to_have_attribute("data-drawn", drawn or "")
    held = page.evaluate(
        "() => { const held = window.heldFrames.splice(0);"
        " held.forEach((f) => f(performance.now())); return held.length; }"
    )
    assert held >= 1
    expect(page.locator("#hand button[data-card]:focus")).to_have_count(1)
