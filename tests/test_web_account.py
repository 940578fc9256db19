"""The web page keeps an account (issue 35, point 6) in a real browser: created in the lobby, kept
across a reload, used to join a game (the seat is the account's), listed in "Your games"; a
token pasted in another browser is the same account; without an account the lobby is as it
was. The signed-in lobby has no accessibility violation (axe-core)."""

from __future__ import annotations

import uuid
from typing import Any

import psycopg
import requests
from patience import ANSWER
from playwright.sync_api import Page, expect
from web_support import axe_violations, screenshot

from service.play.commands import Creation
from service.play.quick import rules_key

pytest_plugins = ["api_fixtures", "web_fixtures"]


def open_game(base: str, players: int = 2) -> str:
    body = {"game": "sushi-go", "players": players, "bots": [{"seat": 1, "kind": "greedy"}]}
    return str(requests.post(f"{base}/games", json=body, timeout=ANSWER).json()["game_id"])


def create_account(page: Page, name: str) -> None:
    page.goto("/")
    page.click("#account summary")
    page.fill("#account-name", name)
    page.click("#create-account button")
    expect(page.locator("#account-shown")).to_have_text(name)


def test_an_account_made_in_the_page_joins_a_game_and_lists_it(
    contexts: Any, live_server: Any
) -> None:
    base = live_server.url
    name = f"Acc{uuid.uuid4().hex[:8]}"
    page = contexts(bypass_csp=True).new_page()  # bypass_csp: axe-core is injected below
    create_account(page, name)
    stored = page.evaluate("() => JSON.parse(localStorage.getItem('cardroom.account'))")
    assert stored["name"] == name and stored["token"].startswith("cardroom_pat_")
    bearer = {"Authorization": f"Bearer {stored['token']}"}
    me = requests.get(f"{base}/accounts/me", headers=bearer, timeout=ANSWER).json()
    assert me["account_id"] == stored["account_id"]

    game_id = open_game(base)
    page.goto(f"/#/game/{game_id}")
    page.click("#join-account")
    page.wait_for_selector("#hand button.pickable")
    view = requests.get(f"{base}/games/{game_id}", headers=bearer, timeout=ANSWER).json()
    assert view["you"]["seat"] == 0 and view["seats"][0]["name"] == name  # the account's seat

    page.goto("/")
    page.reload()  # the account is kept across reloads, like the seats' tokens
    expect(page.locator("#account-shown")).to_have_text(name)
    expect(page.locator(f"#my-games li[data-game='{game_id}']")).to_be_visible()
    expect(page.locator("#my-games h2")).to_have_text("Games joined in this browser")
    listed = page.locator(f"#account-games-list li[data-game='{game_id}']")
    expect(listed).to_contain_text(name)
    expect(listed).to_contain_text("in play")
    screenshot(page, "account-lobby")
    assert axe_violations(page) == []

    # The token pasted in another browser is the same account; forgetting it there leaves
    # that browser anonymous again.
    other = contexts().new_page()
    other.goto("/")
    other.click("#account summary")
    other.fill("#account-token", stored["token"])
    other.click("#use-token button")
    expect(other.locator("#account-shown")).to_have_text(name)
    other.click("#forget-account")
    expect(other.locator("#account summary")).to_be_visible()
    assert other.evaluate("() => localStorage.getItem('cardroom.account')") is None


def test_without_an_account_the_game_page_offers_no_account_join(
    contexts: Any, live_server: Any
) -> None:
    page = contexts().new_page()
    game_id = open_game(live_server.url, players=3)
    page.goto(f"/#/game/{game_id}")
    expect(page.locator("#join")).to_be_visible()
    expect(page.locator("#join-account")).to_have_count(0)
    page.goto("/")
    expect(page.locator("#account summary")).to_have_text("Account (optional)")
    expect(page.locator("#account-shown")).to_have_count(0)


def test_quick_match_seats_the_account_in_a_waiting_game(
    contexts: Any, live_server: Any, database_url: str
) -> None:
    """Two browsers, each with its own account, press Quick match for a 2-player Sushi Go!:
    the first opens a game, the second sits in it, and both are on its page, seated."""
    # The database is shared: no game may be left waiting in that pool (the page's quick match
    # has no clock), or the first browser would sit in it and the two would not meet.
    creation = Creation("sushi-go", {"players": 2}, (), None)
    with psycopg.connect(database_url) as conn:
        conn.execute("DELETE FROM quick_games WHERE key = %s", (rules_key(creation),))
    seated = []
    for stem in ("Qa", "Qb"):
        page = contexts().new_page()
        name = f"{stem}{uuid.uuid4().hex[:8]}"
        create_account(page, name)
        page.select_option("#quick-game", "sushi-go")
        page.select_option("#quick-players", "2")
        page.click("#quick-match")
        page.wait_for_url("**/#/game/*")
        seated.append((page, name, page.url.rsplit("/", 1)[-1]))
    (first, _, game_a), (second, name_b, game_b) = seated
    assert game_a == game_b  # the second joined the game the first opened
    for page, _, _ in seated:
        page.wait_for_selector("#hand button.pickable")  # seated, the game started
    view = requests.get(f"{live_server.url}/games/{game_a}", timeout=ANSWER).json()
    assert [seat["name"] for seat in view["seats"]][1] == name_b
