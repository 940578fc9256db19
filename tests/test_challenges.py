"""Challenges (issue 35, point 5): an account offers another a game; accepting creates it with both
seated, in one transaction with the challenge's answer; declines, cancels and expiry end it; the
accounts' stream items are written with each change. Over HTTP, against the real app and
PostgreSQL; the races with threads against it."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import psycopg
import pytest
from api_client import ApiClient, expect_problem, expect_status
from race_support import at_once

pytest_plugins = ["api_fixtures"]

TWO = {"game": "sushi-go", "players": 2}


def account(api: ApiClient, scopes: list[str] | None = None) -> dict[str, Any]:
    response = api.post("/accounts", {"name": f"ch{uuid.uuid4().hex[:12]}"}, token=None)
    expect_status(response, 201)
    created = response.json()
    if scopes is not None:
        minted = api.post("/accounts/me/tokens", {"scopes": scopes}, token=created["token"]).json()
        created["token"] = minted["token"]
    return created


def challenge(api: ApiClient, by: dict[str, Any], to: dict[str, Any], body: Any = None) -> Any:
    response = api.post(f"/accounts/{to['account_id']}/challenges", body or TWO, token=by["token"])
    expect_status(response, 201)
    return response.json()


def feed(database_url: str, account_id: str) -> list[tuple[str, Any, Any]]:
    with psycopg.connect(database_url) as conn:
        rows = conn.execute(
            "SELECT type, game_id, data FROM account_feed WHERE account_id = %s"
            " AND type IN ('challenge', 'challenge_answered') ORDER BY tx, id",
            (account_id,),
        ).fetchall()
    return [(t, g, d) for t, g, d in rows]


def test_a_challenge_accepted_is_a_game_with_both_seated(api: ApiClient, database_url: str):
    ada, bob, eve = account(api), account(api), account(api)
    offered = challenge(api, ada, bob, {**TWO, "turn_seconds": 60})
    cid = offered["challenge_id"]
    assert offered["status"] == "offered"
    assert offered["from"] == {"account_id": ada["account_id"], "name": ada["name"]}
    assert offered["to"] == {"account_id": bob["account_id"], "name": bob["name"]}
    assert offered["game_id"] is None and offered["turn_seconds"] == 60
    assert offered["links"]["accept"] == f"/challenges/{cid}/accept"
    # The challenged account's stream: a `challenge` item, in the insert's transaction.
    [(kind, game, data)] = feed(database_url, bob["account_id"])
    assert (kind, game, data["challenge_id"], data["status"]) == ("challenge", None, cid, "offered")
    assert data["from"]["name"] == ada["name"] and data["players"] == 2
    # Either party reads it; anyone else finds nothing.
    for party in (ada, bob):
        expect_status(api.get(f"/challenges/{cid}", token=party["token"]), 200)
    expect_problem(api.get(f"/challenges/{cid}", token=eve["token"]), 404, "challenge_not_found")
    mine = api.get("/accounts/me/challenges", token=bob["token"]).json()
    assert [c["challenge_id"] for c in mine["incoming"]] == [cid] and mine["outgoing"] == []
    theirs = api.get("/accounts/me/challenges", token=ada["token"]).json()
    assert [c["challenge_id"] for c in theirs["outgoing"]] == [cid]
    # Only the challenged accepts.
    expect_problem(
        api.post(f"/challenges/{cid}/accept", token=ada["token"]), 403, "not_your_challenge"
    )
    accepted = api.post(f"/challenges/{cid}/accept", token=bob["token"])
    expect_status(accepted, 201)
    seat = accepted.json()
    game_id = seat["game_id"]
    assert accepted.headers["Location"] == f"/games/{game_id}"
    assert (seat["seat"], seat["name"], seat["account_id"]) == (1, bob["name"], bob["account_id"])
    assert seat["started"] is True and seat["challenge"]["status"] == "accepted"
    assert seat["challenge"]["game_id"] == game_id
    # Both seated, the game started; the seat token and both account tokens act for the seats.
    view = api.game(game_id, token=seat["token"])
    assert view["status"] == "playing" and view["turn_deadline"]
    assert [s["name"] for s in view["seats"]] == [ada["name"], bob["name"]]
    assert api.game(game_id, token=ada["token"])["you"]["seat"] == 0
    assert api.game(game_id, token=bob["token"])["you"]["seat"] == 1
    with psycopg.connect(database_url) as conn:
        seated = conn.execute(
            "SELECT seat, account_id FROM account_seats WHERE game_id = %s ORDER BY seat",
            (game_id,),
        ).fetchall()
    assert seated == [(0, ada["account_id"]), (1, bob["account_id"])]
    # The challenger's stream: `challenge_answered`, with the game.
    [(kind, game, data)] = feed(database_url, ada["account_id"])
    assert (kind, str(game), data["status"], data["game_id"]) == (
        "challenge_answered",
        game_id,
        "accepted",
        game_id,
    )
    # Answered: every further answer is 409 saying how, and it is no longer listed.
    again = expect_problem(
        api.post(f"/challenges/{cid}/accept", token=bob["token"]), 409, "challenge_accepted"
    )
    assert again["errors"] == {"status": "accepted", "game_id": game_id}
    for verb, who in (("decline", bob), ("cancel", ada)):
        response = api.post(f"/challenges/{cid}/{verb}", token=who["token"])
        expect_problem(response, 409, "challenge_accepted")
    assert api.get("/accounts/me/challenges", token=bob["token"]).json()["incoming"] == []
    assert len(feed(database_url, ada["account_id"])) == 1  # refusals write nothing


def test_declined_and_cancelled_challenges_tell_the_other_side(
    api: ApiClient, database_url: str
) -> None:
    ada, bob = account(api), account(api)
    declined = challenge(api, ada, bob)["challenge_id"]
    response = api.post(f"/challenges/{declined}/decline", token=bob["token"])
    expect_status(response, 200)
    assert response.json()["status"] == "declined" and response.json()["answered_at"]
    expect_problem(
        api.post(f"/challenges/{declined}/accept", token=bob["token"]), 409, "challenge_declined"
    )
    cancelled = challenge(api, ada, bob)["challenge_id"]
    expect_problem(
        api.post(f"/challenges/{cancelled}/cancel", token=bob["token"]), 403, "not_your_challenge"
    )
    expect_status(api.post(f"/challenges/{cancelled}/cancel", token=ada["token"]), 200)
    expect_problem(
        api.post(f"/challenges/{cancelled}/accept", token=bob["token"]),
        409,
        "challenge_cancelled",
    )
    answered = [
        (d["challenge_id"], d["status"])
        for t, _, d in feed(database_url, ada["account_id"])
        if t == "challenge_answered"
    ]
    assert answered == [(declined, "declined"), (cancelled, "cancelled")]
    bobs = [
        (t, d["challenge_id"], d["status"]) for t, _, d in feed(database_url, bob["account_id"])
    ]
    assert bobs == [
        ("challenge", declined, "offered"),
        ("challenge", cancelled, "offered"),
        ("challenge_answered", cancelled, "cancelled"),  # a cancel is news to the challenged
    ]


def test_an_unanswered_challenge_expires(api: ApiClient, database_url: str) -> None:
    ada, bob = account(api), account(api)
    offered = challenge(api, ada, bob)
    cid = offered["challenge_id"]
    with psycopg.connect(database_url) as conn:
        (lifetime,) = conn.execute(
            "SELECT extract(epoch FROM expires_at - created_at) FROM challenges WHERE id = %s",
            (cid,),
        ).fetchone()
        assert lifetime == 600  # CARDROOM_CHALLENGE_SECONDS' default
        # Time passes (as the database's clock sees it): the challenge's lifetime is over.
        conn.execute(
            "UPDATE challenges SET expires_at = now() - interval '1 second' WHERE id = %s",
            (cid,),
        )
    expect_problem(
        api.post(f"/challenges/{cid}/accept", token=bob["token"]), 409, "challenge_expired"
    )
    for party in (ada, bob):  # read again and again: the expiry is told once
        assert api.get(f"/challenges/{cid}", token=party["token"]).json()["status"] == "expired"
        assert api.get("/accounts/me/challenges", token=party["token"]).json() == {
            "incoming": [],
            "outgoing": [],
        }
    for party in (ada, bob):
        told = [
            d["status"] for t, _, d in feed(database_url, party["account_id"]) if t != "challenge"
        ]
        assert told == ["expired"]


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ({**TWO, "players": 3}, "seats"),  # a seat for neither account nor bot
        ({**TWO, "players": 1}, None),  # invalid_rules
    ],
)
def test_a_challenge_seats_two_accounts_and_bots(
    api: ApiClient, body: dict[str, Any], reason: str | None
) -> None:
    ada, bob = account(api), account(api)
    response = api.post(f"/accounts/{bob['account_id']}/challenges", body, token=ada["token"])
    if reason is None:
        expect_problem(response, 422, "invalid_rules")
    else:
        assert expect_problem(response, 422, "invalid_challenge")["errors"] == {"reason": reason}


def test_bots_take_the_other_seats(api: ApiClient) -> None:
    ada, bob = account(api), account(api)
    body = {**TWO, "players": 3, "bots": [{"seat": 0, "kind": "greedy"}]}
    cid = challenge(api, ada, bob, body)["challenge_id"]
    seat = api.post(f"/challenges/{cid}/accept", token=bob["token"]).json()
    view = api.game(seat["game_id"])
    assert [(s["name"], s["bot"]) for s in view["seats"]] == [
        ("greedy bot 0", "greedy"),
        (ada["name"], None),
        (bob["name"], None),
    ]
    assert seat["seat"] == 2 and view["status"] == "playing"


def test_what_cannot_be_challenged(api: ApiClient) -> None:
    ada, bob = account(api), account(api)
    itself = api.post(f"/accounts/{ada['account_id']}/challenges", TWO, token=ada["token"])
    assert expect_problem(itself, 422, "invalid_challenge")["errors"] == {"reason": "self"}
    bot = api.post("/accounts/bot:greedy/challenges", TWO, token=ada["token"])
    assert expect_problem(bot, 422, "invalid_challenge")["errors"] == {"reason": "bot"}
    nobody = api.post(f"/accounts/{uuid.uuid4()}/challenges", TWO, token=ada["token"])
    expect_problem(nobody, 404, "account_not_found")
    history_only = account(api, ["history:read"])
    narrow = api.post(f"/accounts/{bob['account_id']}/challenges", TWO, token=history_only["token"])
    assert expect_problem(narrow, 403, "insufficient_scope")["errors"] == {"scope": "play"}
    anonymous = api.get("/accounts/me/challenges", token=None, request_valid=False)
    expect_problem(anonymous, 401, "missing_token")
    expect_problem(
        api.get(f"/challenges/{uuid.uuid4()}", token=ada["token"]), 404, "challenge_not_found"
    )


def _post(api: ApiClient, path: str, token: str) -> Callable[[], Any]:
    client = api.clone()  # one client per thread
    return lambda: client.post(path, token=token)


def _games_of(database_url: str, account_id: str) -> list[Any]:
    with psycopg.connect(database_url) as conn:
        return [
            g
            for (g,) in conn.execute(
                "SELECT DISTINCT game_id FROM account_seats WHERE account_id = %s", (account_id,)
            )
        ]


@pytest.mark.parametrize("rival", ["accept", "cancel"])
def test_answers_at_once_have_one_outcome(api: ApiClient, database_url: str, rival: str) -> None:
    """Two accepts, or an accept and a cancel, at the same moment: one wins, the other is 409,
    and there is at most one game (none if the cancel won)."""
    for _ in range(4):
        ada, bob = account(api), account(api)
        cid = challenge(api, ada, bob)["challenge_id"]
        rival_token = bob["token"] if rival == "accept" else ada["token"]
        results = at_once(
            [
                _post(api, f"/challenges/{cid}/accept", bob["token"]),
                _post(api, f"/challenges/{cid}/{rival}", rival_token),
            ]
        )
        statuses = sorted(r.status_code for r in results)
        assert statuses in ([200, 409], [201, 409]), statuses
        status = api.get(f"/challenges/{cid}", token=ada["token"]).json()
        games = _games_of(database_url, bob["account_id"])
        loser = next(r for r in results if r.status_code == 409).json()
        assert loser["code"] == f"challenge_{status['status']}"
        if status["status"] == "accepted":
            assert [str(g) for g in games] == [status["game_id"]]
            assert _games_of(database_url, ada["account_id"]) == games
        else:
            assert status["status"] == "cancelled" and games == []
        answered = [t for t, _, _ in feed(database_url, ada["account_id"])]
        assert answered == ["challenge_answered"]  # one answer, told once


def test_keyed_challenge_requests_answer_their_retries_as_the_first_time(api: ApiClient) -> None:
    """Offer, accept, decline and quick match with an Idempotency-Key: each retry gets the
    first answer (Idempotent-Replayed), and nothing is done twice."""
    ada, bob = account(api), account(api)

    def keyed() -> dict[str, str]:
        return {"Idempotency-Key": str(uuid.uuid4()), "Idempotency-Secret": str(uuid.uuid4())}

    offer_key = keyed()
    path = f"/accounts/{bob['account_id']}/challenges"
    body = {"game": "sushi-go", "players": 2}
    offered = api.post(path, body, token=ada["token"], headers=offer_key)
    again = api.post(path, body, token=ada["token"], headers=offer_key)
    expect_status(again, 201)
    assert again.json() == offered.json() and again.headers["Idempotent-Replayed"] == "true"
    outgoing = api.get("/accounts/me/challenges", token=ada["token"]).json()["outgoing"]
    assert [c["challenge_id"] for c in outgoing] == [offered.json()["challenge_id"]]
    accept_key = keyed()
    accept = f"/challenges/{offered.json()['challenge_id']}/accept"
    accepted = api.post(accept, {}, token=bob["token"], headers=accept_key)
    expect_status(accepted, 201)
    replayed = api.post(accept, {}, token=bob["token"], headers=accept_key)
    expect_status(replayed, 201)
    assert replayed.json() == accepted.json() and replayed.headers["Idempotent-Replayed"] == "true"
    second = api.post(path, body, token=ada["token"]).json()
    decline_key = keyed()
    decline = f"/challenges/{second['challenge_id']}/decline"
    declined = api.post(decline, {}, token=bob["token"], headers=decline_key)
    redeclined = api.post(decline, {}, token=bob["token"], headers=decline_key)
    assert redeclined.json() == declined.json() and redeclined.headers["Idempotent-Replayed"]
    quick_key = keyed()
    quick = {"game": "sushi-go", "players": 5, "name": f"q{uuid.uuid4().hex[:8]}"}
    first = api.post("/games/quick", quick, token=None, headers=quick_key)
    expect_status(first, 201)
    retried = api.post("/games/quick", quick, token=None, headers=quick_key)
    assert retried.json() == first.json() and retried.headers["Idempotent-Replayed"] == "true"
    seats = api.game(first.json()["game_id"])["seats"]
    assert sum(seat["taken"] for seat in seats) == 1  # one seat, however often asked
