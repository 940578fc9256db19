"""Every outcome shown before play moves on (issue 17), in a whole game of each edition and
variant against bots: each round's summary (points per category, maki standings) and the final
ranking with pudding points and the winner in words, all as GET /scores has them; then a
rematch creates the same game with the same bots."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any
from uuid import uuid4

import pytest
from playwright.sync_api import Locator, Page, expect
from test_web_sushigo import api_json, create_game, my_turn_or_over, take_turn, token_of
from web_support import screenshot

from domain.sushigo.randomplay import play_random_game
from service.store.events import EventStore

pytest_plugins = ["api_fixtures", "web_fixtures"]

VARIANTS = {
    "gamewright": (3, {"seat-1": "greedy", "seat-2": "random"}),
    "zoch": (3, {"edition": "zoch", "seat-1": "random", "seat-2": "greedy"}),
    "dummy": (2, {"dummy": "on", "seat-1": "greedy"}),
}


def plural(n: int, one: str) -> str:
    return f"{n} {one}" if n == 1 else f"{n} {one}s"


def check_summary(page: Page, sheet: dict[str, Any]) -> int:
    """The round summary on the page against the API's score sheet; returns its round."""
    summary = page.locator("#round-summary")
    round_ = int(summary.get_attribute("data-round") or 0)
    scored = next(r for r in sheet["rounds"] if r["round"] == round_)
    expect(summary.locator("h2")).to_have_text(f"Round {round_} scored")
    for seat in scored["seats"]:
        row = summary.locator(f"tr[data-seat='{seat['seat']}']")
        expect(row.locator("td").last).to_have_text(str(seat["total"]))
        expect(row.locator("td").first).to_contain_text(str(seat["maki"]["points"]))
        icons = seat["maki"].get("icons", 0)
        expect(summary.locator(".maki-standings")).to_contain_text(
            f"{seat['name']}: {plural(icons, 'icon')}, {plural(seat['maki']['points'], 'point')}"
        )
    return round_


def shown_cards(seat: Locator) -> Counter[str]:
    """The cards a seat's tableau shows, by kind (grouped kinds say how many, data-count)."""
    shown: Counter[str] = Counter()
    for card in seat.locator("[data-kind]").all():
        shown[card.get_attribute("data-kind") or ""] += int(card.get_attribute("data-count") or 1)
    return shown


def check_last_reveal(page: Page, base: str, game_id: str, token: str, round_: int) -> None:
    """The summary shows every seat's tableau as the round's last reveal left it: the game's
    state just before its round_scored event (GET /state at that version), and the points
    the round gave each seat."""
    events = api_json(base, f"/games/{game_id}/events?limit=1000", token)["events"]
    scored = [e["version"] for e in events if e["type"] == "round_scored"][round_ - 1]
    state = api_json(base, f"/games/{game_id}/state?version={scored - 1}", token)
    tables = [s["tableau"] for s in state["seats"]]
    if state.get("dummy"):
        tables.append(state["dummy"]["tableau"])  # the dummy's seat comes last (S17)
    reveal = page.locator("#round-summary #last-reveal")
    expect(reveal.locator("section.seat")).to_have_count(len(tables))
    for seat, table in enumerate(tables):
        shown = reveal.locator(f"section.seat[data-seat='{seat}']")
        assert shown_cards(shown) == Counter(table["cards"]), (seat, table)
        # each nigiri that went onto a wasabi is drawn on it (S8/S9)
        assert shown.locator(".stack [data-kind$='_nigiri']").count() == len(table["on_wasabi"])
    assert sum(len(t["cards"]) for t in tables) > 0


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_each_round_and_the_end_are_explained_as_the_api_scores_them(
    contexts: Any, live_server: Any, variant: str
) -> None:
    players, choices = VARIANTS[variant]
    rng = random.Random(17)
    page = contexts().new_page()
    game_id = create_game(page, "Uma", players, **choices)
    token = token_of(page, game_id)
    seen: list[int] = []
    while my_turn_or_over(page):
        take_turn(page, rng)
        summary = page.locator("#round-summary")
        if summary.count() and int(summary.get_attribute("data-round") or 0) not in seen:
            sheet = api_json(live_server.url, f"/games/{game_id}/scores", token)
            seen.append(check_summary(page, sheet))
            check_last_reveal(page, live_server.url, game_id, token, seen[-1])
            if len(seen) == 1:
                screenshot(page, f"round-summary-{variant}")
            page.click("#round-summary-continue")  # the player goes on
            expect(page.locator("#round-summary")).to_have_count(0)
    assert seen[:2] == [1, 2]  # round 3 ends the game: its summary may come with the end

    sheet = api_json(live_server.url, f"/games/{game_id}/scores", token)
    final = page.locator("#final")
    expect(final).to_be_visible()
    ranking = final.locator("#ranking li")
    expect(ranking).to_have_count(len(sheet["totals"]))
    totals = {t["seat"]: t["total"] for t in sheet["totals"]}
    shown = [int(ranking.nth(i).get_attribute("data-seat") or 0) for i in range(ranking.count())]
    assert [totals[seat] for seat in shown] == sorted(totals.values(), reverse=True)
    puddings = {p["seat"]: p for p in sheet["puddings"]}
    for total in sheet["totals"]:
        line = final.locator(f"#ranking li[data-seat='{total['seat']}']")
        expect(line).to_contain_text(f"{total['name']}: {total['total']} point")
        pudding = puddings[total["seat"]]
        points = pudding["points"]
        sign = "+" if points > 0 else "−" if points < 0 else ""
        expect(line).to_contain_text(  # words, not "(puddings: 1, -3)" (issue 39, item 11)
            f"({plural(pudding['count'], 'pudding')}: {sign}{plural(abs(points), 'point')})"
        )
    winners = [t["name"] for t in sheet["totals"] if t["seat"] in sheet["winners"]]
    for name in winners:
        expect(final.locator("#verdict")).to_contain_text(name)
    screenshot(page, f"final-{variant}")
    page.set_viewport_size({"width": 375, "height": 800})
    screenshot(page, f"final-{variant}-phone")

    # The rematch: the same rules, the same bots at the same seats; this browser sits down.
    old = api_json(live_server.url, f"/games/{game_id}")
    page.click("#rematch")
    page.wait_for_url(lambda url: game_id not in url and "/#/game/" in url)
    again = page.url.rsplit("/", 1)[1]
    new = api_json(live_server.url, f"/games/{again}")
    assert new["rules"] == old["rules"]
    bots = [(s["seat"], s["bot"]) for s in old["seats"] if s["bot"]]
    assert [(s["seat"], s["bot"]) for s in new["seats"] if s["bot"]] == bots
    assert "Uma" in [s["name"] for s in new["seats"]]


# Random games (domain/sushigo/randomplay.py, random.Random(n)) whose best totals tie among
# three players: in game 14 the puddings break the tie, in game 98 they are equal too (S16).
TIES = {"broken on puddings": 14, "shared": 98}


@pytest.mark.parametrize("tie", list(TIES))
def test_a_tie_is_settled_in_words_as_the_scores_settle_it(
    contexts: Any, live_server: Any, store: EventStore, tie: str
) -> None:
    """The final panel says who tied, and how S16 settled it ("Ana wins on puddings, 4 to 1", or
    a shared win), with the names and counts of GET /scores."""
    rng = random.Random(TIES[tie])
    events, _, _ = play_random_game({"players": 3}, rng)
    game_id = uuid4()
    store.create_game(game_id, "sushi-go", random.Random(TIES[tie]).randbytes(32), events)
    page = contexts().new_page()
    page.goto(f"/#/game/{game_id}")
    sheet = api_json(live_server.url, f"/games/{game_id}/scores")
    best = max(t["total"] for t in sheet["totals"])
    tied = [t for t in sheet["totals"] if t["total"] == best]
    assert len(tied) == 2
    count = {p["seat"]: p["count"] for p in sheet["puddings"]}
    verdict = page.locator("#final #verdict")
    expect(verdict).to_contain_text(f"{tied[0]['name']} and {tied[1]['name']} tie on {best} points")
    if len(sheet["winners"]) == 1:
        winner, other = sorted(tied, key=lambda t: t["seat"] not in sheet["winners"])
        expect(verdict).to_contain_text(
            f"{winner['name']} wins on puddings, {count[winner['seat']]} to {count[other['seat']]}"
        )
    else:
        assert count[tied[0]["seat"]] == count[tied[1]["seat"]]
        expect(verdict).to_contain_text(
            f"and on puddings ({count[tied[0]['seat']]} each): a shared win (S16)"
        )
    # The table stays as the last reveal left it (the view's last_round), not emptied.
    last = api_json(live_server.url, f"/games/{game_id}")["last_round"]
    assert last["round"] == 3
    for seat in last["seats"]:
        shown = page.locator(f"#table section.seat[data-seat='{seat['seat']}']")
        assert shown_cards(shown) == Counter(seat["tableau"]["cards"])
    screenshot(page, f"final-tie-{tie.split()[0]}")


def _pick_from_below(page: Page, rng: random.Random) -> None:
    """A card chosen, then Pick pressed from below: the player has scrolled down past the hand
    (to the table under it), Pick at the top of the viewport."""
    cards = page.locator("#hand button.pickable")
    cards.nth(rng.randrange(cards.count())).click()
    page.locator("#pick").evaluate("el => el.scrollIntoView({ block: 'start' })")
    before = page.locator("#game").get_attribute("data-version")
    page.click("#pick")
    expect(page.locator("#game")).not_to_have_attribute("data-version", before or "")


def test_on_a_phone_the_results_come_into_view_and_stay(contexts: Any) -> None:
    """Issue 39, item 9: after scrolling down to press Pick on a phone, the round summary and
    the final ranking appeared 2,600-2,800 px above the viewport, and the summary hid itself
    after 15 s while being read. Now each comes into view where the player is, and the summary
    stays until Continue or the next pick (the page's own clock is run 20 s on, not waited)."""
    page = contexts(width=390, height=844).new_page()
    page.clock.install()  # setTimeout and friends under the test's hand; time flows as usual
    create_game(page, "Ida", 3, **{"seat-1": "greedy", "seat-2": "greedy"})
    rng = random.Random(9)
    summary = page.locator("#round-summary")
    rounds_seen = 0
    while my_turn_or_over(page):
        _pick_from_below(page, rng)
        if page.locator("#game[data-status=over]").count():
            break
        if not summary.count():
            continue
        rounds_seen += 1
        expect(summary.locator("h2")).to_be_in_viewport()
        expect(page.locator("#round-summary-continue")).to_be_focused()
        page.clock.run_for(20_000)  # longer than the summary once stayed
        expect(summary).to_be_visible()
        expect(summary.locator("h2")).to_be_in_viewport()
        if rounds_seen == 1:
            page.click("#round-summary-continue")
            expect(summary).to_have_count(0)
        # the second stays until the next pick, which takes it away
    assert rounds_seen == 2
    expect(page.locator("#final #ranking")).to_be_visible()
    expect(page.locator("#final h2")).to_be_in_viewport()
    expect(page.locator("#final")).to_be_focused()
    screenshot(page, "results-in-view-phone")


def test_the_summary_is_one_key_from_the_hand_and_back(contexts: Any) -> None:
    """Issue 39, item 11: on a laptop, reaching the round summary's Continue took 16 Tabs and
    pressing it left focus on the page's body. Now Continue has focus when the summary comes,
    and pressing it gives focus to the next hand's first card."""
    page = contexts(width=1280, height=800).new_page()
    create_game(page, "Kai", 3, **{"seat-1": "greedy", "seat-2": "greedy"})
    rng = random.Random(11)
    summary = page.locator("#round-summary")
    while not summary.count():
        assert my_turn_or_over(page)
        _pick_from_below(page, rng)
    screenshot(page, "round-summary-laptop")
    expect(page.locator("#round-summary-continue")).to_be_focused()
    page.keyboard.press("Enter")
    expect(summary).to_have_count(0)
    expect(page.locator("#hand button.pickable").first).to_be_focused()
    expect(page.locator("#hand button.pickable").first).to_be_in_viewport()
    screenshot(page, "round-2-laptop")


def _grow_own_table(page: Page) -> None:
    """Picks the card that makes the player's own table tallest, whatever the deal: a kind it
    does not show yet (a line of its own), else a wasabi or a nigiri (a stack of two), else
    the first card; then Pick, and waits for the answer."""
    own = page.locator("section.seat.mine [data-kind]")
    shown = {own.nth(i).get_attribute("data-kind") for i in range(own.count())}
    cards = page.locator("#hand button.pickable")
    kinds = [cards.nth(i).get_attribute("data-card") or "" for i in range(cards.count())]

    def rank(kind: str) -> tuple[bool, bool]:
        return kind in shown, not (kind == "wasabi" or kind.endswith("_nigiri"))

    cards.nth(min(range(len(kinds)), key=lambda i: rank(kinds[i]))).click()
    before = page.locator("#game").get_attribute("data-version")
    page.click("#pick")
    expect(page.locator("#game")).not_to_have_attribute("data-version", before or "")


def _inside(page: Page, marks: Locator) -> None:
    """Each of the marks lies wholly inside the viewport."""
    height = page.viewport_size["height"] if page.viewport_size else 0
    for mark in marks.all():
        box = mark.bounding_box()
        assert box is not None
        assert box["y"] >= 0 and box["y"] + box["height"] <= height, (box, height)


def test_on_a_laptop_the_reveal_marks_are_above_the_fold(contexts: Any) -> None:
    """Issue 39, item 11: at 1280x800 the cards a reveal added were marked below the fold, under
    a panel holding only "Resign…" above the hand; later, a salmon nigiri landing on a wasabi
    at a round's second to fourth pick was still marked out of view, the player's own table
    under the hand. After each pick of a round (the page at its top; each pick the card that
    makes the player's own table tallest, so any deal is covered), the reveal line, every
    seat's place on the table and every mark the reveal left on the player's own table are in
    view; Resign… comes after the table, and below the hand."""
    page = contexts(width=1280, height=800).new_page()
    page.emulate_media(reduced_motion="reduce")  # a mark drawn where it stays, not mid-way
    create_game(page, "Lea", 3, **{"seat-1": "greedy", "seat-2": "greedy"})
    for turn in range(1, 8):  # the 8th pick ends the round (its summary comes)
        assert my_turn_or_over(page)
        page.mouse.wheel(0, -10_000)
        _grow_own_table(page)
        page.mouse.wheel(0, -10_000)
        expect(page.locator("#reveal-line")).to_be_in_viewport()
        for seat in range(3):
            expect(page.locator(f"section.seat[data-seat='{seat}'] header")).to_be_in_viewport()
        fresh = page.locator("section.seat[data-seat='0'] .card.fresh")
        expect(fresh).to_have_count(1)
        _inside(page, fresh)
        if turn == 7:  # for a reviewer: the player's own table at its tallest in the round
            screenshot(page, "reveal-marks-laptop")
    order = "el => el.compareDocumentPosition(document.querySelector('#table'))"
    assert page.locator("#resign").evaluate(order) & 2  # the table precedes Resign…
    resign, hand = page.locator("#resign").bounding_box(), page.locator("#hand").bounding_box()
    assert resign and hand and resign["y"] >= hand["y"] + hand["height"]
