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
from patience import ANSWER
from playwright.sync_api import Page, expect
from web_support import axe_violations, screenshot

pytest_plugins = ["api_fixtures", "web_fixtures"]

POOL = "sushi-go-gamewright"


def new_account(base: str, prefix: str) -> dict[str, Any]:
    name = f"{prefix}{uuid.uuid4().hex[:8]}"
    response = requests.post(f"{base}/accounts", json={"name": name}, timeout=ANSWER)
    assert response.status_code == 201, response.text
    return dict(response.json())


def rated_game(base: str, players: int, bots: list[dict[str, Any]]) -> str:
    body = {"game": "sushi-go", "players": players, "bots": bots, "rated": True}
    response = requests.post(f"{base}/games", json=body, timeout=ANSWER)
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
    answer = requests.get(f"{base}/accounts/{account_id}/ratings", timeout=ANSWER).json()
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
        f"{base}/games", json={"game": "sushi-go", "players": 2}, timeout=ANSWER
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
        anchor = requests.get(f"{base}/accounts/bot:greedy/ratings", timeout=ANSWER).json()
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
    listed = requests.get(
        f"{base}/leaderboards/{POOL}", params={"limit": 200}, timeout=ANSWER
    ).json()

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


def seed_rating(pool: Any, account_id: str, rating_pool: str, ordinal: float, games: int) -> None:
    """A rating row as the service writes one (service/store/ratings.py's UPSERT): what is
    tested here is the page, the fold is tested in tests/test_ratings.py."""
    sigma = 1.0 if games >= 10 else 7.5
    with pool.connection() as conn:
        conn.execute(
            "INSERT INTO ratings VALUES (%s, %s, %s, %s, %s, %s, %s, gen_random_uuid(), now())",
            (account_id, rating_pool, ordinal + 3 * sigma, sigma, ordinal, games, games < 10),
        )


def test_the_lobby_shows_the_seated_players_ratings_of_a_rated_game(
    contexts: Any, live_server: Any, pool: Any
) -> None:
    """Goal 5: the lobby's game list shows a rated game's players' ratings, as GET /games
    gives them (the API's ordinal in data-ordinal); an unrated game's row shows none."""
    base = live_server.url
    ann, bob = new_account(base, "Ann"), new_account(base, "Bob")
    seed_rating(pool, ann["account_id"], POOL, 12.34, 3)
    game_id = rated_game(base, 4, [{"seat": 0, "kind": "greedy"}])
    with ApiClient(base) as api:
        table = Table(api, game_id, {})
        for account in (ann, bob):
            sit(api, table, account)
        table.close()
    unrated = requests.post(
        f"{base}/games", json={"game": "sushi-go", "players": 3}, timeout=ANSWER
    ).json()["game_id"]
    listed = requests.get(f"{base}/games", params={"ids": game_id}, timeout=ANSWER).json()
    seats = listed["games"][0]["seats"]

    page = contexts(bypass_csp=True).new_page()
    page.goto("/")
    row = page.locator(f"#games-waiting li[data-game='{game_id}']")
    shown = row.locator(".seat-rating")
    expect(shown).to_have_count(3)  # the bot and the two accounts; the free seat has nobody
    ann_rating = row.locator(f".seat-rating[data-account='{ann['account_id']}']")
    expect(ann_rating).to_have_text(f"{ann['name']} 12.3 (provisional)")
    assert float(ann_rating.get_attribute("data-ordinal") or "nan") == seats[1]["rating"]["ordinal"]
    assert abs(seats[1]["rating"]["ordinal"] - 12.34) < 1e-9  # mu - 3 sigma of the row
    expect(row.locator(f".seat-rating[data-account='{bob['account_id']}']")).to_have_text(
        f"{bob['name']} unrated"
    )
    bot = row.locator(".seat-rating[data-account='bot:greedy']")
    expect(bot).to_have_text(f"{seats[0]['name']} {seats[0]['rating']['ordinal']:.1f} (anchor)")
    expect(page.locator(f"#games-waiting li[data-game='{unrated}'] .seat-rating")).to_have_count(0)
    expect(page.locator(f"#games-waiting li[data-game='{unrated}']")).not_to_contain_text("ratings")
    screenshot(page, "lobby-ratings")
    assert axe_violations(page) == []


def test_the_leaderboards_more_button_pages_past_the_first_twenty(
    contexts: Any, live_server: Any, pool: Any
) -> None:
    """More than a page (20) of ranked players: "More" shows the rest, in the API's order, and
    hides on the last page."""
    base = live_server.url
    for n in range(23):
        account = new_account(base, "Lead")
        seed_rating(pool, account["account_id"], "sequence", 40.0 - n * 1.5, 10 + n)
    listed = requests.get(f"{base}/leaderboards/sequence", params={"limit": 200}, timeout=ANSWER)
    players = listed.json()["players"]
    assert len(players) >= 23

    page = contexts(bypass_csp=True).new_page()
    page.goto("/#/leaderboard/sequence")
    rows = page.locator("#leaderboard tbody tr")
    expect(rows).to_have_count(20)
    more = page.locator("#more-leaderboard")
    expect(more).to_be_visible()
    while more.is_visible():  # each click adds a page until the last
        before = rows.count()
        more.click()
        expect(rows).not_to_have_count(before)
    expect(rows).to_have_count(len(players))
    shown = [row.get_attribute("data-account") for row in rows.all()]
    assert shown == [p["account_id"] for p in players]
    ranks = [
        int(cell) for cell in page.locator("#leaderboard tbody tr td:first-child").all_inner_texts()
    ]
    assert ranks == list(range(1, len(players) + 1))
