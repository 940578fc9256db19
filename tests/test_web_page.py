"""The web page (issue 8): how it is served, and that it works for people on a phone and with a
keyboard only. The game flows themselves are in test_web_sushigo.py, test_web_replay.py and
test_web_sequence.py."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path
from typing import Any

import requests
from api_client import serve
from patience import ANSWER
from playwright.sync_api import expect
from psycopg_pool import ConnectionPool
from test_web_sushigo import create_game, version
from web_support import screenshot, timeout_ms

from service.http.app import create_app
from service.http.routes.web_page import ASSETS

pytest_plugins = ["api_fixtures", "web_fixtures"]


def test_the_page_and_its_assets_are_served_locally_under_a_strict_policy(
    live_server: Any,
) -> None:
    page = requests.get(live_server.url + "/", timeout=ANSWER)
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
        served = requests.get(f"{live_server.url}/app/{path.relative_to(ASSETS)}", timeout=ANSWER)
        assert served.status_code == 200 and served.text == text, path
    # Nothing outside the asset folder is reachable through it.
    for sneaky in ("../web_page.py", "..%2fweb_page.py", "%2e%2e/api.py"):
        assert requests.get(f"{live_server.url}/app/{sneaky}", timeout=ANSWER).status_code == 404


def test_every_module_the_page_imports_exists() -> None:
    for path in (ASSETS / "js").rglob("*.js"):
        # Static imports, and the dynamic ones of a game's module (loaded for that game only).
        for target in re.findall(r'(?:from |import\()"(\.{1,2}/[\w./]+)"', path.read_text()):
            assert (path.parent / target).resolve().is_file(), f"{path.name} imports {target}"
    index = Path(ASSETS / "index.html").read_text()
    assert index.count('type="module"') == 1
    # Every module the first render needs is preloaded at once (no import waterfall): the
    # page's own modules, not the games' (one is loaded for the game shown).
    preloaded = set(re.findall(r'rel="modulepreload" href="/app/(js/[\w./]+)"', index))
    core = {f"js/{p.name}" for p in (ASSETS / "js").glob("*.js")} - {"js/app.js"}
    assert preloaded == core


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
    # The phase is also said in a live region that outlives re-renders (for screen readers).
    expect(page.locator("#announce")).to_have_text(page.inner_text("#phase"))
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


def test_live_updates_go_on_after_the_server_ends_a_stream(
    contexts: Any, pool: ConnectionPool
) -> None:
    """The server ends every stream after a while (here 1 s); the page reconnects where it left
    off (Last-Event-ID), so what happens later still arrives without a reload."""
    app = create_app(pool=pool, config={"STREAM_SECONDS": 1})
    with serve(app) as url:
        body = {"game": "sushi-go", "players": 2}
        game_id = requests.post(f"{url}/games", json=body, timeout=ANSWER).json()["game_id"]
        requests.post(f"{url}/games/{game_id}/players", json={"name": "Ana"}, timeout=ANSWER)
        page = contexts(url=url).new_page()
        streams: list[str] = []
        page.on("request", lambda r: streams.append(r.url) if "/stream" in r.url else None)
        page.goto(f"/#/game/{game_id}")
        expect(page.locator("#phase")).to_have_text("Waiting for players")
        while len(streams) < 2:  # the first stream ended and the page opened another
            page.wait_for_event("request", lambda r: "/stream" in r.url, timeout=timeout_ms(10_000))
        requests.post(f"{url}/games/{game_id}/players", json={"name": "Bob"}, timeout=ANSWER)
        expect(page.locator("#phase")).to_contain_text("Round 1 of 3")
        expect(page.locator("#log")).to_contain_text("Bob sat down at seat 2")


def test_a_pick_whose_answer_was_lost_is_retried_once_and_lands_once(
    contexts: Any, live_server: Any
) -> None:
    """The connection drops after the server recorded a pick, then the service is briefly away
    (503): the page retries with the same Idempotency-Key, gets the recorded answer back, and the
    log holds the pick exactly once."""
    context = contexts()
    context.allowed.add(503)  # sent by the test itself, below
    page = context.new_page()
    game_id = create_game(page, "Lou", 2, **{"seat-1": "random"})
    page.wait_for_selector("#hand button.pickable")
    keys: list[str | None] = []
    replayed: list[str | None] = []

    def flaky(route: Any) -> None:
        keys.append(route.request.header_value("Idempotency-Key"))
        if len(keys) == 1:
            route.fetch()  # the pick reaches the server and is recorded...
            route.abort("connectionreset")  # ...but its answer never arrives
        elif len(keys) == 2:
            route.fulfill(status=503, headers={"Retry-After": "0"}, json={"code": "down"})
        else:
            answer = route.fetch()
            replayed.append(answer.headers.get("idempotent-replayed"))
            route.fulfill(response=answer)

    page.route("**/moves", flaky)
    page.locator("#hand button.pickable").first.click()
    page.click("#pick")
    expect(page.locator("#game")).to_have_attribute("aria-busy", "true")
    expect(page.locator("#game")).to_have_attribute("aria-busy", "false")  # answered at last
    expect(page.locator("#notice")).to_be_hidden()  # no error for the person to read
    expect(page.locator("#log")).to_contain_text("Lou took")
    assert len(keys) == 3 and keys[0] and len(set(keys)) == 1
    assert replayed == ["true"]  # the server answered from its record of the first request
    events = requests.get(f"{live_server.url}/games/{game_id}/events", timeout=ANSWER).json()
    picks = [e for e in events["events"] if e["type"] == "card_picked" and e["data"]["seat"] == 0]
    assert len({p["data"]["turn"] for p in picks}) == len(picks)  # one pick per turn


def test_assets_are_sent_compressed_to_a_client_that_accepts_it(live_server: Any) -> None:
    """Issue 17: gzip where the client accepts it (with Vary, so caches keep both), the same
    bytes as the file once decompressed, and plain bytes for a client that does not."""
    for name in ("js/games/sequence.js", "style.css"):
        url = f"{live_server.url}/app/{name}"
        text = (ASSETS / name).read_bytes()
        packed = requests.get(url, headers={"Accept-Encoding": "gzip"}, stream=True, timeout=ANSWER)
        raw = packed.raw.read(decode_content=False)
        assert packed.headers["Content-Encoding"] == "gzip"
        assert "Accept-Encoding" in packed.headers["Vary"]
        assert gzip.decompress(raw) == text and len(raw) < len(text) / 2
        assert packed.headers["Content-Security-Policy"]
        # A conditional request for the same version: 304, no body.
        again = requests.get(
            url,
            headers={"Accept-Encoding": "gzip", "If-None-Match": packed.headers["ETag"]},
            timeout=ANSWER,
        )
        assert again.status_code == 304
        plain = requests.get(url, headers={"Accept-Encoding": "identity"}, timeout=ANSWER)
        assert "Content-Encoding" not in plain.headers and plain.content == text
        assert "Accept-Encoding" in plain.headers["Vary"]
    page = requests.get(live_server.url + "/", headers={"Accept-Encoding": "gzip"}, timeout=ANSWER)
    assert page.headers["Content-Encoding"] == "gzip" and page.headers["Cache-Control"]
    assert requests.get(f"{live_server.url}/app/nothing.js", timeout=ANSWER).status_code == 404


def test_a_game_page_asks_for_its_module_log_and_scores_at_once(
    contexts: Any, live_server: Any
) -> None:
    """Issue 17: once the view names the game, its module, its log and its score sheet are asked
    for together, not one after the other (the first render waits for the slowest only); a game
    the browser has shown before has its module asked for with the view."""
    page = contexts().new_page()
    game_id = create_game(page, "Ivy", 2, **{"seat-1": "greedy"})
    page.wait_for_selector("#hand button.pickable")
    fresh = contexts()
    seats = page.evaluate("localStorage['cardroom.seats']")
    fresh.context.add_init_script(  # a fresh browser that holds the seat (about:blank may not)
        f"try {{ localStorage.setItem('cardroom.seats', {json.dumps(seats)}) }} catch {{}}"
    )
    again = fresh.new_page()
    order: list[str] = []
    again.on("request", lambda r: order.append(f"asked {r.url}"))
    again.on("requestfinished", lambda r: order.append(f"got {r.url}"))
    again.goto(f"/#/game/{game_id}")
    again.wait_for_selector("#hand button.pickable")
    module = f"got {live_server.url}/app/js/games/sushigo.js"
    view = f"got {live_server.url}/games/{game_id}"
    for path in (f"/games/{game_id}/events", f"/games/{game_id}/scores"):
        asked = next(
            i for i, line in enumerate(order) if line.startswith(f"asked {live_server.url}{path}")
        )
        assert order.index(view) < asked < order.index(module), (path, order)
    # Back to the same game (a reload): the page knows which game it is, and asks for its
    # module before the view, not after.
    order.clear()
    again.reload()
    again.wait_for_selector("#hand button.pickable")
    module_asked = order.index(f"asked {live_server.url}/app/js/games/sushigo.js")
    assert module_asked < order.index(f"asked {live_server.url}/games/{game_id}"), order
