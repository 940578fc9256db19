"""The web page (issue 8) in a real browser: Sushi Go! played through the page, as people do.

Each test opens the page at ``/`` in headless Chromium (tests/web_support.py), uses only what a
person sees and clicks, and checks what the page shows against the REST API's own answers.
Screenshots are saved under test-output/web/.
"""

from __future__ import annotations

import random
from typing import Any

import requests
from patience import ANSWER
from playwright.sync_api import Page, expect
from web_support import screenshot

pytest_plugins = ["api_fixtures", "web_fixtures"]


# --- what a person does -----------------------------------------------------------------------


def create_game(page: Page, name: str, players: int, **choices: str) -> str:
    """Fills in the lobby's form and creates the game; returns its id (the page sits down)."""
    page.goto("/")
    page.select_option("#game", "sushi-go")
    page.select_option("#players", str(players))
    for field, value in choices.items():
        if field == "dummy":
            page.check("#dummy")
        else:
            page.select_option(f"#{field}", value)
    page.fill("#name", name)
    page.click("#create-game")
    page.wait_for_url("**/#/game/*")
    page.wait_for_selector("#game")
    return page.url.rsplit("/", 1)[1]


def version(page: Page) -> int:
    return int(page.get_attribute("#game", "data-version") or 0)


def take_turn(page: Page, rng: random.Random, chopsticks: float = 0.5) -> dict[str, Any]:
    """Chooses cards in the hand (chopsticks with probability ``chopsticks`` when the page offers
    them, the dummy's card when asked, a wasabi choice sometimes) and presses Pick; returns the
    body the page sent, with ``offered`` added: whether chopsticks were offered."""
    offered = page.locator("#use-chopsticks").count() > 0
    if offered and rng.random() < chopsticks:
        page.check("#use-chopsticks")
    wanted = 2 if page.locator("#use-chopsticks:checked").count() else 1
    cards = page.locator("#hand button.pickable")
    indexes = rng.sample(range(cards.count()), wanted)
    if chopsticks == 1 and not offered:  # take chopsticks when dealt them, to use them later
        kinds = [cards.nth(i).get_attribute("data-card") for i in range(cards.count())]
        indexes = [kinds.index("chopsticks")] if "chopsticks" in kinds else indexes
    for i in indexes:
        cards.nth(i).click()
    if page.locator("#dummy-card").count():
        page.locator("#dummy-card").select_option(index=1)
    for box in page.locator("input.use-wasabi").all():
        if rng.random() < 0.5:
            box.uncheck()
    before = version(page)
    with page.expect_response(lambda r: r.url.endswith("/moves")) as answer:
        page.click("#pick")
    assert answer.value.status in (200, 201), answer.value.text()
    # (No wait_for_function: the page's CSP forbids evaluating strings, as it should.)
    expect(page.locator("#game")).not_to_have_attribute("data-version", str(before))
    return {**answer.value.request.post_data_json, "offered": offered}


def my_turn_or_over(page: Page) -> bool:
    """Waits (the page updates live) until the page offers a pick, or the game is over."""
    page.wait_for_selector("#hand button.pickable, #game[data-status=over]")
    return page.locator("#game[data-status=over]").count() == 0


def api_json(base: str, path: str, token: str | None = None) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    response = requests.get(base + path, headers=headers, timeout=ANSWER)
    response.raise_for_status()
    return response.json()


def token_of(page: Page, game_id: str) -> str:
    return page.evaluate(f"JSON.parse(localStorage['cardroom.seats'])['{game_id}'].token")


def shown_totals(page: Page) -> dict[str, int]:
    rows = page.locator("#totals tr")
    return {
        rows.nth(i).locator("th").inner_text(): int(rows.nth(i).locator("td").first.inner_text())
        for i in range(rows.count())
    }


# --- two people, two browsers ---------------------------------------------------------------------


def test_two_people_play_a_complete_game_in_two_browsers(contexts: Any, live_server: Any) -> None:
    """Two browser contexts (two people, each with their own storage) play a whole 2-player game
    with the dummy (S17): one creates it in the lobby, the other joins by the invitation link.
    Picks arrive live on the other page; a reload keeps the seat; the last page shows the score
    sheet the API gives."""
    rng = random.Random(8)
    ana = contexts().new_page()
    game_id = create_game(ana, "Ana", 2, dummy="on")
    expect(ana.locator("#phase")).to_have_text("Waiting for players")
    link = ana.input_value("#invite-link")
    assert link.endswith(f"/#/game/{game_id}")
    screenshot(ana, "two-browsers-1-waiting")

    # A third person opens the link too. A name the API refuses is explained in words (the
    # problem+json detail); once Bob takes the last seat, the join form goes away live.
    late = contexts().new_page()
    late.goto(link)
    late.fill("#join-name", "   ")
    late.click("#join button[type=submit]")
    expect(late.locator("#notice")).to_contain_text("name")
    # Bob finds the game in the lobby's open games (newest first; other tests add games too).
    bob = contexts().new_page()
    bob.goto("/")
    row = bob.locator(f"#games-waiting li[data-game='{game_id}']")
    more = bob.locator("section", has=bob.locator("#games-waiting")).get_by_role("button")
    for _ in range(20):
        bob.wait_for_selector("#games-waiting li")
        if row.count() or not more.is_visible():
            break
        more.click()
    row.get_by_role("link", name="Join").click()
    assert bob.url == link
    bob.fill("#join-name", "Bob")
    bob.click("#join button[type=submit]")
    bob.wait_for_selector("#hand button.pickable")
    # Bob's log goes on without a gap from where his spectator's log was when he joined.
    for line in ("Ana sat down at seat 1", "Bob sat down at seat 2", "Round 1: hands dealt"):
        expect(bob.locator("#log")).to_contain_text(line)
    expect(late.locator("#join")).to_have_count(0)
    expect(late.locator("#game")).to_contain_text("Bob")
    screenshot(late, "two-browsers-1-spectator")
    late.close()

    pages = {"Ana": ana, "Bob": bob}
    ana.wait_for_selector("#hand button.pickable")  # Bob's seat started the game: live
    turns = 0
    while my_turn_or_over(ana):
        sent = take_turn(ana, rng)
        # Ana's pick reaches Bob's page without a reload (the event stream).
        expect(bob.locator("#game")).to_have_attribute("data-version", str(version(ana)))
        if turns == 0:
            assert "dummy_card" in sent  # seat 0 controls the dummy on the first turn (S17)
            expect(bob.locator("section.seat[data-seat='0'] .badge")).to_have_text("picked")
            screenshot(bob, "two-browsers-2-live-pick")
        if not my_turn_or_over(bob):
            break  # Bob's last card was picked for him (S5) and that ended the game
        take_turn(bob, rng)
        turns += 1
        if turns == 5:
            ana.reload()  # the seat survives a reload: the token is in the browser's storage
            ana.wait_for_selector("#game")
            expect(ana.locator("#game")).to_contain_text("Ana — you")
    assert turns > 2 * 9  # three rounds of 9-card hands, less the chopsticks' extra cards

    token = token_of(ana, game_id)
    sheet = api_json(live_server.url, f"/games/{game_id}/scores", token)
    for name, page in pages.items():
        page.wait_for_selector("#game[data-status=over]")
        expect(page.locator("#totals")).to_be_visible()
        assert shown_totals(page) == {t["name"]: t["total"] for t in sheet["totals"]}, name
        winners = {t["name"] for t in sheet["totals"] if t["seat"] in sheet["winners"]}
        expect(page.locator("#phase")).to_contain_text(" and ".join(sorted(winners)))
    screenshot(ana, "two-browsers-3-over")


# --- one person against bots ------------------------------------------------------------------


def test_one_person_plays_a_full_game_against_bots(contexts: Any, live_server: Any) -> None:
    """Four seats, the Zoch edition (per-nigiri wasabi choice, S9), three bots, a turn clock:
    every pick the page sends is accepted, bots' picks appear, the game ends with the API's
    winners and totals."""
    rng = random.Random(5)
    page = contexts().new_page()
    game_id = create_game(
        page,
        "Dana",
        4,
        edition="zoch",
        pass_direction="alternate",
        **{"seat-1": "greedy", "seat-2": "random", "seat-3": "greedy"},
        turn_seconds="120",
    )
    expect(page.locator("#deadline")).to_contain_text("s left for this turn")
    expect(page.locator("#table")).to_contain_text("greedy bot 1")
    screenshot(page, "bots-1-first-turn")
    sent: list[dict[str, Any]] = []
    while my_turn_or_over(page):
        sent.append(take_turn(page, rng, chopsticks=1))  # takes chopsticks, uses them (S6)
        if len(sent) == 12:
            screenshot(page, "bots-2-round-2")
    assert len(sent) >= 21  # 3 rounds of 8 cards, the last of each picked for you (S5)
    # Whenever the page offered chopsticks, the pick it sent took two cards, in order (S6).
    assert all(len(body["cards"]) == (2 if body["offered"] else 1) for body in sent)
    assert all(len(body["use_wasabi"]) == len(body["cards"]) for body in sent)  # Zoch, S9
    view = api_json(live_server.url, f"/games/{game_id}")
    sheet = api_json(live_server.url, f"/games/{game_id}/scores")
    assert view["status"] == "over"
    assert shown_totals(page) == {t["name"]: t["total"] for t in sheet["totals"]}
    expect(page.locator("#log")).to_contain_text("Turn 1 revealed")
    # Every round's table is on the page: a row per seat, the round's total as the API has it.
    for round_ in sheet["rounds"]:
        table = page.locator(f"table.sheet[data-round='{round_['round']}']")
        for seat in round_["seats"]:
            expect(table.locator("tr", has_text=seat["name"]).locator("td").last).to_have_text(
                str(seat["total"])
            )
    screenshot(page, "bots-3-over")


def test_a_pick_for_a_turn_that_moved_on_is_explained_and_the_page_shows_the_new_turn(
    contexts: Any, live_server: Any
) -> None:
    """The page sends the turn it showed with the pick. When the game has moved on before the
    pick arrives (here: another device of the same seat picked first), the service refuses it
    (409 stale_move) and the page says so in words and shows the current turn."""
    page = contexts().new_page()
    game_id = create_game(page, "Noa", 2, **{"seat-1": "random"})
    page.wait_for_selector("#hand button.pickable")
    token = page.evaluate(f"JSON.parse(localStorage.getItem('cardroom.seats'))['{game_id}'].token")
    auth = {"Authorization": f"Bearer {token}"}
    url = f"{live_server.url}/games/{game_id}"

    def other_device_first(route: Any) -> None:
        sent = route.request.post_data_json
        assert (sent["round"], sent["turn"]) == (1, 1)  # the turn the page showed
        hand = requests.get(url, headers=auth, timeout=ANSWER).json()["you"]["hand"]
        other = {"round": 1, "turn": 1, "cards": [c for c in hand if c not in sent["cards"]][:1]}
        assert requests.post(f"{url}/moves", json=other, headers=auth, timeout=ANSWER).ok
        route.continue_()

    page.route("**/moves", other_device_first)
    page.locator("#hand button.pickable").first.click()
    with page.expect_response(lambda r: r.url.endswith("/moves")) as answer:
        page.click("#pick")
    assert answer.value.status == 409 and answer.value.json()["code"] == "stale_move"
    expect(page.locator("#notice")).to_contain_text("that turn was over")
    expect(page.locator("#phase")).to_contain_text("turn 2")
    expect(page.locator("#hand button.pickable").first).to_be_enabled()
    events = requests.get(f"{url}/events", timeout=ANSWER).json()["events"]
    mine = [e for e in events if e["type"] == "card_picked" and e["data"]["seat"] == 0]
    assert len(mine) == 1  # the other device's pick only
