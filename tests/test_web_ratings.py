"""Ratings on the web page (issue 37, goal 5) in a real browser: the lobby marks a rated game; at
the table each seat shows its rating in the game's pool; the final ranking shows each seat's
rating change, equal to the API's; the leaderboard (reached from the lobby) lists the pool's
non-provisional players, highest ordinal first, in a table with no accessibility violation."""

from __future__ import annotations

import json
import random
import uuid
from typing import Any

import requests
from api_client import ApiClient, Player, Table, play_to_end
from playwright.sync_api import Page, expect
from web_support import axe_violations, screenshot

pytest_plugins = ["api_fixtures", "web_fixtures"]

POOL = "sushi-go-gamewright"


def new_account(base: str, prefix: str) -> dict[str, Any]:
    name = f"{prefix}{uuid.uuid4().hex[:8]}"
    response = requests.post(f"{base}/accounts", json={"name": name}, timeout=10)
    assert response.status_code == 201, response.text
    return dict(response.json())


def rated_game(base: str, players: int, bots: list[dict[str, Any]]) -> str:
    body = {"game": "sushi-go", "players": players, "bots": bots, "rated": True}
    response = requests.post(f"{base}/games", json=body, timeout=10)
    assert response.status_code == 201, response.text
    return str(response.json()["game_id"])


def sit(api: ApiClient, table: Table, account: dict[str, Any]) -> None:
    """The account takes a seat (its token acts for the seat), as tests/test_api_ratings.py."""
    response = api.post(f"/games/{table.game_id}/players", {}, token=account["token"])
    assert response.status_code == 201, response.text
    seat = response.json()["seat"]
    client = api.clone(token=account["token"])
    table.players.append(Player(seat, account["name"], account["token"], client))


def ratings_of(base: str, account_id: str) -> dict[str, Any]:
    answer = requests.get(f"{base}/accounts/{account_id}/ratings", timeout=10).json()
    return next(r for r in answer["ratings"] if r["pool"] == POOL)


def signed(x: float) -> str:
    return f"+{x:.1f}" if x >= 0.05 else f"−{-x:.1f}" if x <= -0.05 else "±0.0"


def signed_in(page: Page, account: dict[str, Any]) -> None:
    kept = {k: account[k] for k in ("account_id", "name", "token")}
    stored = json.dumps(json.dumps(kept))
    page.context.add_init_script(
        f"try {{ localStorage.setItem('cardroom.account', {stored}) }} catch {{}}"
    )


def test_a_rated_game_shows_ratings_at_the_table_and_changes_in_the_final_ranking(
    contexts: Any, live_server: Any
) -> None:
    base = live_server.url
    ann, bob = new_account(base, "Ann"), new_account(base, "Bob")
    game_id = rated_game(base, 3, [{"seat": 2, "kind": "greedy"}])
    page = contexts(bypass_csp=True).new_page()  # bypass_csp: axe-core is injected below
    signed_in(page, ann)

    # (a) the lobby's open games say the game is rated; an unrated one says nothing of it
    unrated = requests.post(
        f"{base}/games", json={"game": "sushi-go", "players": 2}, timeout=10
    ).json()["game_id"]
    page.goto("/")
    expect(page.locator(f"#games-waiting li[data-game='{game_id}'] .badge.rated")).to_have_text(
        "rated"
    )
    expect(page.locator(f"#games-waiting li[data-game='{unrated}']")).to_be_visible()
    expect(page.locator(f"#games-waiting li[data-game='{unrated}'] .badge.rated")).to_have_count(0)

    # Ann joins in the page as her account; Bob through the API: the game starts.
    page.goto(f"/#/game/{game_id}")
    page.click("#join-account")
    expect(page.locator("#leave")).to_be_visible()  # seated; the game waits for Bob
    with ApiClient(base) as api:
        table = Table(api, game_id, {})
        table.players.append(Player(0, ann["name"], ann["token"], api.clone(token=ann["token"])))
        sit(api, table, bob)
        page.wait_for_selector("#hand button.pickable")
        view = api.game(game_id)
        assert view["rating_pool"] == POOL
        assert view["rated_accounts"] == [ann["account_id"], bob["account_id"], "bot:greedy"]

        # (b) at the table: each seat's rating in the pool (the bot's fixed anchor)
        seats = page.locator("#seat-ratings li")
        expect(seats).to_have_count(3)
        anchor = requests.get(f"{base}/accounts/bot:greedy/ratings", timeout=10).json()
        greedy = next(r for r in anchor["ratings"] if r["pool"] == POOL)
        bot_row = page.locator("#seat-ratings li[data-account='bot:greedy']")
        expect(bot_row).to_contain_text(f"{greedy['ordinal']:.1f} (a fixed anchor rating)")
        assert float(bot_row.get_attribute("data-ordinal") or "nan") == greedy["ordinal"]
        for account in (ann, bob):  # their first rated game: no rating yet
            row = page.locator(f"#seat-ratings li[data-account='{account['account_id']}']")
            expect(row).to_contain_text(f"{account['name']}: unrated yet")

        play_to_end(table, random.Random(37))
        table.close()
        final = api.game(game_id)

    # (c) the final ranking: each rated seat's change, as the view and the account's ratings say
    changes = final["rating_changes"]
    assert [c["account_id"] for c in changes] == [ann["account_id"], bob["account_id"]]
    rows = page.locator("#final #rating-changes tbody tr")
    expect(rows).to_have_count(2)
    for change in changes:
        row = page.locator(f"#rating-changes tr[data-account='{change['account_id']}']")
        before, after = change["before"]["ordinal"], change["after"]["ordinal"]
        assert float(row.get_attribute("data-before") or "nan") == before
        assert float(row.get_attribute("data-after") or "nan") == after
        assert after == ratings_of(base, change["account_id"])["ordinal"]
        cells = row.locator("td")
        expect(cells.nth(0)).to_have_text(str(change["rank"]))
        expect(cells.nth(1)).to_have_text(f"{before:.1f}")
        expect(cells.nth(2)).to_have_text(f"→ {after:.1f}")
        expect(cells.nth(3)).to_have_text(signed(after - before))
    # the table's ratings are now the ones after the game
    ann_row = page.locator(f"#seat-ratings li[data-account='{ann['account_id']}']")
    expect(ann_row).to_contain_text("1 rated game, provisional")
    screenshot(page, "rated-final")
    assert axe_violations(page) == []


def test_the_leaderboard_lists_non_provisional_players_highest_first(
    contexts: Any, live_server: Any
) -> None:
    base = live_server.url
    accounts = [new_account(base, p) for p in ("Cho", "Dev", "Eli")]
    rng = random.Random(5)
    with ApiClient(base) as api:
        # 10 rated games make a rating non-provisional (with σ below 7): played through the API
        for _ in range(12):
            game_id = rated_game(base, 4, [{"seat": 3, "kind": "greedy"}])
            table = Table(api, game_id, {})
            for account in accounts:
                sit(api, table, account)
            play_to_end(table, rng)
            table.close()
            standings = [ratings_of(base, a["account_id"]) for a in accounts]
            if not any(s["provisional"] for s in standings):
                break
    assert not any(s["provisional"] for s in standings), standings
    listed = requests.get(f"{base}/leaderboards/{POOL}", params={"limit": 200}, timeout=10).json()

    page = contexts(bypass_csp=True).new_page()
    page.goto("/")
    page.click("#leaderboard-link")
    rows = page.locator("#leaderboard tbody tr")
    expect(rows).to_have_count(len(listed["players"]))
    shown = [
        (row.get_attribute("data-account"), float(row.get_attribute("data-ordinal") or "nan"))
        for row in rows.all()
    ]
    assert shown == [(p["account_id"], p["ordinal"]) for p in listed["players"]]
    assert [o for _, o in shown] == sorted((o for _, o in shown), reverse=True)
    ours = sorted(
        zip(standings, accounts, strict=True), key=lambda sa: sa[0]["ordinal"], reverse=True
    )
    on_page = [a for a, _ in shown if a in {x["account_id"] for x in accounts}]
    assert on_page == [a["account_id"] for _, a in ours]
    top = page.locator(f"#leaderboard tr[data-account='{ours[0][1]['account_id']}']")
    expect(top.locator("th")).to_have_text(ours[0][1]["name"])
    expect(top.locator("td").nth(1)).to_have_text(f"{ours[0][0]['ordinal']:.1f}")
    expect(page.locator("#leaderboard caption")).to_have_text("Sushi Go! (Gamewright)")
    expect(page.locator("#more-leaderboard")).to_be_hidden()  # one page holds them
    screenshot(page, "leaderboard")
    assert axe_violations(page) == []
    # another pool, by its link: nobody there yet
    page.click("nav[aria-label='Rating pools'] a[href='#/leaderboard/sushi-go-zoch']")
    expect(page.locator("#leaderboard-empty")).to_be_visible()
    expect(page.locator("#leaderboard tbody tr")).to_have_count(0)
