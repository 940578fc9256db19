"""Rated challenges and rated quick match (issue 37): ``rated: true`` on
``POST /accounts/{id}/challenges`` and ``POST /games/quick``. Both seat accounts only, so a rated
game fits them as it is: a rated challenge accepted is a rated game of the two accounts (and
bots, as anchors), rated when it ends; quick match pairs only people who asked for the same
rated-ness and pool (the game and its edition), with the same rules. Over HTTP, against the real
app and PostgreSQL."""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from api_client import ApiClient, Player, Table, expect_problem, expect_status, play_to_end

from service.play.commands import Creation
from service.play.quick import rules_key

pytest_plugins = ["api_fixtures"]

TWO = {"game": "sushi-go", "players": 2}


def account(api: ApiClient) -> dict[str, Any]:
    response = api.post("/accounts", {"name": f"rp{uuid.uuid4().hex[:12]}"}, token=None)
    expect_status(response, 201)
    return response.json()


def offer(api: ApiClient, by: dict[str, Any], to: dict[str, Any], body: dict[str, Any]) -> Any:
    return api.post(f"/accounts/{to['account_id']}/challenges", body, token=by["token"])


def challenge_items(database_url: str, account_id: str) -> list[dict[str, Any]]:
    with psycopg.connect(database_url) as conn:
        rows = conn.execute(
            "SELECT data FROM account_feed WHERE account_id = %s AND type = 'challenge'"
            " ORDER BY tx, id",
            (account_id,),
        ).fetchall()
    return [data for (data,) in rows]


def test_a_rated_challenge_makes_a_rated_game_rated_when_it_ends(
    api: ApiClient, database_url: str
) -> None:
    ada, bob = account(api), account(api)
    plain = offer(api, ada, bob, TWO)
    expect_status(plain, 201)
    assert "rated" not in plain.json()  # an unrated challenge shows what it always did

    offered = offer(api, ada, bob, {**TWO, "rated": True})
    expect_status(offered, 201)
    challenge = offered.json()
    assert challenge["rated"] is True
    # the challenged account's stream says so too
    items = challenge_items(database_url, bob["account_id"])
    assert [item.get("rated") for item in items] == [None, True]

    accepted = api.post(f"/challenges/{challenge['challenge_id']}/accept", token=bob["token"])
    expect_status(accepted, 201)
    game_id = accepted.json()["game_id"]
    view = api.game(game_id)
    assert view["rated"] is True and view["status"] == "playing"
    assert "rating_changes" not in view  # not until it ends

    table = Table(api, game_id, view["rules"])
    for seat, who in enumerate((ada, bob)):  # the challenger sits first (no bots here)
        table.players.append(Player(seat, who["name"], who["token"], api.clone(token=who["token"])))
    play_to_end(table, random.Random(37))
    table.close()
    over = api.game(game_id)
    assert over["status"] == "over"
    changes = over["rating_changes"]
    assert [(c["seat"], c["account_id"]) for c in changes] == [
        (0, ada["account_id"]),
        (1, bob["account_id"]),
    ]
    for who in (ada, bob):
        held = api.get(f"/accounts/{who['account_id']}/ratings").json()["ratings"]
        assert [(r["pool"], r["games"]) for r in held] == [("sushi-go-gamewright", 1)]
    listed = api.get("/leaderboards/sushi-go-gamewright/games", params={"limit": 1000})
    # (the shared database's pool may hold more than a page: look for it where it can be)
    pages = [listed.json()]
    while pages[-1]["next_after"] is not None:
        after = pages[-1]["next_after"]
        pages.append(
            api.get(
                "/leaderboards/sushi-go-gamewright/games", params={"limit": 1000, "after": after}
            ).json()
        )
    assert game_id in {g["game_id"] for page in pages for g in page["games"]}
    # Its rematch seats the same accounts, and is rated too.
    rematch = api.clone(token=ada["token"]).post(f"/games/{game_id}/rematch")
    expect_status(rematch, 201)
    assert api.game(rematch.json()["game_id"])["rated"] is True


def test_a_rated_challenge_with_bots_has_them_as_anchors(api: ApiClient) -> None:
    ada, bob = account(api), account(api)
    body = {**TWO, "players": 3, "bots": [{"seat": 2, "kind": "greedy"}], "rated": True}
    offered = offer(api, ada, bob, body)
    expect_status(offered, 201)
    cid = offered.json()["challenge_id"]
    seat = api.post(f"/challenges/{cid}/accept", token=bob["token"]).json()
    view = api.game(seat["game_id"])
    assert view["rated"] is True
    assert [(s["name"], s["bot"]) for s in view["seats"]] == [
        (ada["name"], None),
        (bob["name"], None),
        ("greedy bot 2", "greedy"),
    ]


def test_a_rated_challenge_is_public(api: ApiClient) -> None:
    ada, bob = account(api), account(api)
    private = offer(api, ada, bob, {**TWO, "rated": True, "visibility": "private"})
    expect_problem(private, 422, "invalid_rated")
    assert api.get("/accounts/me/challenges", token=ada["token"]).json()["outgoing"] == []


# --- quick match ------------------------------------------------------------------------------


def _keys(body: dict[str, Any]) -> list[str]:
    """The quick match keys of ``body``'s clock, rated or not, 2 or 3 players, either edition."""
    keys = []
    for rated in (False, True):
        for players in (2, 3):
            for edition in ("gamewright", "zoch"):
                if edition == "zoch" and players == 2:
                    continue  # zoch is for 3-5 (invalid_rules)
                options = {"players": players, "edition": edition}
                creation = Creation("sushi-go", options, (), body["turn_seconds"], rated=rated)
                keys.append(rules_key(creation))
    return keys


@pytest.fixture
def rules(database_url: str) -> Iterator[dict[str, Any]]:
    """A clock no other test asks for; its keys' slots emptied before and after (the database
    is shared with other tests and earlier runs)."""
    body = {**TWO, "turn_seconds": random.randint(5, 3600)}

    def forget() -> None:
        with psycopg.connect(database_url) as conn:
            conn.execute("DELETE FROM quick_games WHERE key = ANY(%s)", (_keys(body),))

    forget()
    yield body
    forget()


def quick(api: ApiClient, body: dict[str, Any], who: dict[str, Any] | None) -> dict[str, Any]:
    token = None if who is None else who["token"]
    response = api.post("/games/quick", body, token=token)
    expect_status(response, 201)
    return response.json()


def test_quick_match_pairs_rated_with_rated_of_the_same_pool(
    api: ApiClient, rules: dict[str, Any]
) -> None:
    ada, bob, cy, dee = (account(api) for _ in range(4))
    rated = {**rules, "rated": True}
    first = quick(api, rated, ada)
    assert first["created"] is True
    # an unrated request with the same rules is another game, anonymous or an account's
    unrated = quick(api, rules, bob)
    assert unrated["created"] is True and unrated["game_id"] != first["game_id"]
    assert "rated" not in api.game(unrated["game_id"])
    # the next rated request of the pool takes the waiting rated game's seat: it starts
    second = quick(api, rated, cy)
    assert (second["game_id"], second["created"], second["started"]) == (
        first["game_id"],
        False,
        True,
    )
    view = api.game(first["game_id"])
    assert view["rated"] is True and view["status"] == "playing"
    assert [s["name"] for s in view["seats"]] == [ada["name"], cy["name"]]
    # another pool (the Zoch edition) never shares a game with the Gamewright one
    three = {**rated, "players": 3}
    gamewright = quick(api, three, ada)
    zoch = quick(api, {**three, "rules": {"edition": "zoch"}}, dee)
    assert zoch["created"] is True and zoch["game_id"] != gamewright["game_id"]
    assert quick(api, three, dee)["game_id"] == gamewright["game_id"]


def test_rated_quick_match_needs_an_account_and_a_person(
    api: ApiClient, rules: dict[str, Any]
) -> None:
    rated = {**rules, "rated": True}
    anonymous = api.post("/games/quick", {**rated, "name": "Ada"}, token=None)
    expect_problem(anonymous, 403, "account_required")
    bots = [{"seat": 0, "kind": "greedy"}, {"seat": 1, "kind": "random"}]
    only_bots = api.post("/games/quick", {**rated, "bots": bots}, token=account(api)["token"])
    expect_problem(only_bots, 422, "invalid_rated")
    # the refusals left no game waiting: the next rated request creates the game
    assert quick(api, rated, account(api))["created"] is True
