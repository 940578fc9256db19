"""Issue 29's smaller points, each as a person meets it: the replay's table within the first
screen at 1280×800, a replay notice gone at the next step, a refused invitation no longer offered
as valid, and "1 pt" (not "1 pts")."""

from __future__ import annotations

from typing import Any

import requests
from patience import ANSWER
from playwright.sync_api import expect
from test_web_replay import all_events, bots_game, get

pytest_plugins = ["api_fixtures", "web_fixtures"]


def test_the_replays_table_is_in_the_first_screen_at_1280x800(
    contexts: Any, live_server: Any
) -> None:
    """Before: the audit panel came first, and the table started below the screen."""
    game_id = bots_game(live_server.url)
    page = contexts(width=1280, height=800).new_page()
    page.goto(f"/#/replay/{game_id}")
    table = page.locator("#replay-state h2")
    expect(table).to_contain_text("The table at version")
    expect(table).to_be_in_viewport()
    box = page.locator("#replay-state .card").first.bounding_box()
    assert box and box["y"] + box["height"] <= 800  # its cards start on the first screen too
    expect(page.locator("#audit")).to_be_visible()  # still there, beside it


def test_a_replay_notice_clears_on_the_next_step(contexts: Any, live_server: Any) -> None:
    """Before: "Round 3 has no turn 12" stayed after later steps."""
    game_id = bots_game(live_server.url, players=5)  # 7 cards a round: no turn 12
    page = contexts().new_page()
    page.goto(f"/#/replay/{game_id}")
    page.fill("#jump-round", "3")
    page.fill("#jump-turn", "12")
    page.locator("#jump button[type=submit]").click()
    expect(page.locator("#notice")).to_have_text("Round 3 has no turn 12.")
    page.click("#prev")
    expect(page.locator("#notice")).to_be_hidden()


def test_a_refused_invitation_is_not_offered_as_valid(contexts: Any, live_server: Any) -> None:
    """Before: after the revoked link was refused, the page still said "Only people with this
    link can join", with the link, a Copy button and the join form."""
    base = live_server.url
    created = requests.post(
        f"{base}/games",
        json={"game": "sushi-go", "players": 3, "visibility": "private"},
        timeout=ANSWER,
    ).json()
    game_id, invitation = created["game_id"], created["invitation"]
    page = contexts().new_page()
    page.goto(f"/#/game/{game_id}?invitation={invitation['token']}")
    expect(page.locator("#join-name")).to_be_visible()
    revoked = requests.delete(
        f"{base}/games/{game_id}/invitation",
        headers={"Authorization": f"Bearer {invitation['creator_token']}"},
        timeout=ANSWER,
    )
    assert revoked.status_code == 204, revoked.text
    page.fill("#join-name", "Lou")
    with page.expect_response(lambda r: r.url.endswith("/players")) as answer:
        page.locator("#join button[type=submit]").click()
    assert answer.value.status == 403
    expect(page.locator("#join")).to_contain_text("This invitation link is no longer valid")
    expect(page.locator("#join-name")).to_have_count(0)
    expect(page.locator("#invite-link")).to_have_count(0)
    expect(page.locator("#copy-invite")).to_have_count(0)
    expect(page.locator("main")).not_to_contain_text("Only people with this link can join")


def test_one_point_is_one_pt(contexts: Any, live_server: Any) -> None:
    base = live_server.url
    for _ in range(10):  # a game where a card scores exactly 1 (an egg nigiri, a dumpling)
        game_id = bots_game(base)
        audit = get(base, f"/games/{game_id}/audit")
        found = [
            (p["round"], s["seat"], c["category"])
            for p in audit["provenance"]
            if isinstance(p.get("round"), int)
            for s in p["seats"]
            for c in s["categories"]
            if any(card.get("points") == 1 for card in c.get("cards", []))
        ]
        if found:
            break
    else:
        raise AssertionError("no card scored exactly 1 in ten games")
    round_, seat, category = found[0]
    all_events(base, game_id)
    page = contexts().new_page()
    page.goto(f"/#/replay/{game_id}")
    page.locator(
        f"#score-sheet button[data-round='{round_}'][data-seat='{seat}']"
        f"[data-category='{category}']"
    ).click()
    origin = page.locator("#provenance")
    expect(origin).to_contain_text("(1 pt")
    expect(origin).not_to_contain_text("1 pts")
