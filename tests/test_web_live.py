"""Issue 29: the page keeps the player's place. A live update (another seat picks) changes only
what changed: the nodes of your hand, an open panel, keyboard focus and a text selection stay as
they were (a MutationObserver watches); a route change starts at the top of the new page."""

from __future__ import annotations

from typing import Any

import requests
from patience import ANSWER
from playwright.sync_api import Page, expect
from test_web_sushigo import create_game

pytest_plugins = ["api_fixtures", "web_fixtures"]

WATCH = """() => {
  const hand = document.querySelector("#hand");
  window.__kept = {
    cards: [...hand.querySelectorAll("button")],
    how: document.querySelector("#how-to-play"),
    focused: document.activeElement,
    selected: String(document.getSelection()),
  };
  window.__changes = [];
  window.__observer = new MutationObserver((records) => {
    for (const r of records) {
      const node = r.target.nodeType === 1 ? r.target : r.target.parentElement;
      const removed = [...r.removedNodes].some((n) => n.contains?.(hand) || hand.contains(n));
      const how = node.closest?.("#how-to-play") === window.__kept.how && r.type === "childList";
      if (hand.contains(node) || removed || how)
        window.__changes.push(`${r.type} ${node.tagName}#${node.id} ${r.attributeName || ""}`);
    }
  });
  window.__observer.observe(document.querySelector("main"),
    { subtree: true, childList: true, attributes: true, characterData: true });
}"""

KEPT = """() => {
  const k = window.__kept;
  return {
    changes: window.__changes,
    cards: k.cards.every((c) => c.isConnected),
    how: k.how.isConnected && k.how.open,
    focused: document.activeElement === k.focused,
    selected: String(document.getSelection()) === k.selected && k.selected.length > 0,
  };
}"""


def _seat_in(base: str, game_id: str, name: str) -> dict[str, Any]:
    answer = requests.post(f"{base}/games/{game_id}/players", json={"name": name}, timeout=ANSWER)
    assert answer.status_code == 201, answer.text
    return answer.json()


def test_another_seats_pick_replaces_nothing_of_mine(contexts: Any, live_server: Any) -> None:
    """Before: each live event rebuilt <main>: the hand's buttons were new nodes, an open "How
    to play" closed, and focus and the selection were put back by hand (when they could be)."""
    base = live_server.url
    page = contexts().new_page()
    game_id = create_game(page, "Mia", 3)
    bo = _seat_in(base, game_id, "Bo")
    _seat_in(base, game_id, "Cy")
    page.wait_for_selector("#hand button.pickable")
    page.click("#how-to-play > summary")
    page.locator("#hand button.pickable").nth(1).click()  # chosen, and focused
    page.locator("#how-to-play li").first.select_text()
    page.locator("#hand button.pickable").nth(1).focus()
    page.evaluate(WATCH)
    view = requests.get(
        f"{base}/games/{game_id}",
        headers={"Authorization": f"Bearer {bo['token']}"},
        timeout=ANSWER,
    ).json()
    move = {"round": view["round"], "turn": view["turn"], "cards": [view["you"]["hand"][0]]}
    answer = requests.post(
        f"{base}/games/{game_id}/moves",
        json=move,
        headers={"Authorization": f"Bearer {bo['token']}"},
        timeout=ANSWER,
    )
    assert answer.status_code == 200, answer.text
    expect(page.locator("section.seat[data-seat='1'] .badge")).to_have_text("picked")
    kept = page.evaluate(KEPT)
    assert kept == {
        "changes": [],
        "cards": True,
        "how": True,
        "focused": True,
        "selected": True,
    }
    expect(page.locator("#hand button.chosen")).to_have_count(1)


def _scrolled_down(page: Page) -> None:
    page.evaluate("() => window.scrollTo(0, document.body.scrollHeight)")
    assert page.evaluate("() => window.scrollY") > 0


def test_a_new_game_opens_at_its_top(contexts: Any) -> None:
    """Before: after "Create and sit down" from a lobby scrolled down on a phone, the title and
    the "waiting for" line were above the screen."""
    page = contexts(width=390, height=640).new_page()
    page.goto("/")
    page.wait_for_selector("#create-game")
    page.select_option("#players", "3")
    page.fill("#name", "Tia")
    _scrolled_down(page)
    page.click("#create-game")
    page.wait_for_url("**/#/game/*")
    expect(page.locator("#phase")).to_have_text("Waiting for players")
    assert page.evaluate("() => window.scrollY") == 0
    expect(page.locator("h1")).to_be_in_viewport()
