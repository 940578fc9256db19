"""The web page (issue 8): how it is served, and that it works for people on a phone and with a
keyboard only. The game flows themselves are in test_web_sushigo.py, test_web_replay.py and
test_web_sequence.py."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import requests
from playwright.sync_api import expect
from test_web_sushigo import create_game, version
from web_support import screenshot

from service.web_page import ASSETS

pytest_plugins = ["api_fixtures", "web_fixtures"]


def test_the_page_and_its_assets_are_served_locally_under_a_strict_policy(
    live_server: Any,
) -> None:
    page = requests.get(live_server.url + "/", timeout=10)
    assert page.status_code == 200 and page.headers["Content-Type"].startswith("text/html")
    policy = page.headers["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
    assert page.headers["X-Content-Type-Options"] == "nosniff"
    files = [p for p in ASSETS.rglob("*") if p.is_file()]
    assert {p.suffix for p in files} <= {".html", ".css", ".js"}
    for path in files:
        text = path.read_text()
        # No CDN, no font or script from elsewhere: every URL in the assets is the service's own.
        assert not re.search(r"(?:src|href)=\"(?:https?:)?//|@import|url\(\s*['\"]?https?:", text)
        served = requests.get(f"{live_server.url}/app/{path.relative_to(ASSETS)}", timeout=10)
        assert served.status_code == 200 and served.text == text, path
    # Nothing outside the asset folder is reachable through it.
    for sneaky in ("../web_page.py", "..%2fweb_page.py", "%2e%2e/api.py"):
        assert requests.get(f"{live_server.url}/app/{sneaky}", timeout=10).status_code == 404


def test_every_module_the_page_imports_exists() -> None:
    for path in (ASSETS / "js").glob("*.js"):
        for target in re.findall(r'from "\./([\w.]+)"', path.read_text()):
            assert (ASSETS / "js" / target).is_file(), f"{path.name} imports {target}"
    assert Path(ASSETS / "index.html").read_text().count('type="module"') == 1


def test_lobby_and_game_fit_a_phone_screen(contexts: Any) -> None:
    page = contexts(width=375, height=740).new_page()
    page.goto("/")
    expect(page.locator("#create")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    screenshot(page, "phone-1-lobby")
    create_game(page, "Eve", 3, **{"seat-1": "greedy", "seat-2": "greedy"})
    page.wait_for_selector("#hand button.pickable")
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    screenshot(page, "phone-2-game")


def test_a_pick_made_with_the_keyboard_only(contexts: Any) -> None:
    """Tab to a card, Enter to choose it, Tab on to the Pick button, Enter: the pick is sent and
    focus stays usable after the page re-renders."""
    page = contexts().new_page()
    create_game(page, "Kim", 2, **{"seat-1": "random"})
    page.wait_for_selector("#hand button.pickable")
    page.focus("#main")
    for _ in range(60):  # from the top of the page through the links to the first card
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.matches('#hand button.pickable')"):
            break
    else:
        raise AssertionError("Tab never reached a card of the hand")
    chosen = page.evaluate("document.activeElement.dataset.card")
    page.keyboard.press("Enter")
    expect(page.locator("#hand button.chosen")).to_have_count(1)
    assert page.evaluate("document.activeElement.dataset.card") == chosen  # focus kept
    for _ in range(20):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.id") == "pick":
            break
    else:
        raise AssertionError("Tab never reached the Pick button")
    before = version(page)
    with page.expect_response(lambda r: r.url.endswith("/moves")) as answer:
        page.keyboard.press("Enter")
    assert answer.value.status == 200 and answer.value.request.post_data_json["cards"] == [chosen]
    expect(page.locator("#game")).not_to_have_attribute("data-version", str(before))
    expect(page.locator("#log")).to_contain_text("Kim took")
