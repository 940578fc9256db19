"""Seats people can give up, games that never stall (issue 20), over HTTP, on both games:

- leaving before the start (``seat_left``): the seat is free again, its token stops working, the
  next joiner takes it with a new token;
- resigning after it (``seat_taken_over``, reason ``resigned``): the greedy bot plays the seat to
  the end, its moves ``by: resigned``, the audit re-decides them;
- a waiting game that does not fill in time is cancelled (``game_cancelled``), and a turn nobody
  moves in has its seats taken over (reason ``stalled``) — driven by the sweeper with an injected
  "now" (no sleeps), on an app whose limits are set per app.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID, uuid4

import pytest
from api_client import (
    ApiClient,
    LiveServer,
    expect_problem,
    expect_status,
    metric_sample,
    random_move,
    serve,
)
from psycopg_pool import ConnectionPool

from service.http.app import create_app
from service.live.clock import Sweeper

pytest_plugins = ["api_fixtures"]

GAMES = [
    pytest.param("sushi-go", 3, id="sushi-go"),
    pytest.param("sequence", 4, id="sequence"),  # two teams of two
]
STALL, FILL = 60, 600  # seconds, on the app of this module's sweeper tests


@pytest.fixture(scope="module")
def limited(pool: ConnectionPool) -> Iterator[LiveServer]:
    """An app whose stall and fill limits are tiny (set per app, CARDROOM_STALL_SECONDS and
    CARDROOM_FILL_SECONDS), its sweeper driven by the tests."""
    app = create_app(
        pool=pool,
        config={"CARDROOM_STALL_SECONDS": STALL, "CARDROOM_FILL_SECONDS": FILL},
    )
    with serve(app) as url:
        yield LiveServer(url, app)


@pytest.fixture
def lapi(limited: LiveServer) -> Iterator[ApiClient]:
    with ApiClient(limited.url) as client:
        yield client


def sweeper(server: LiveServer) -> Sweeper:
    sweeper: Sweeper = server.app.extensions["cardroom_clock"]
    return sweeper


def later(seconds: float) -> datetime:
    return datetime.now(UTC) + timedelta(seconds=seconds)


def counted(api: ApiClient, name: str, **labels: str) -> float:
    """A counter of ``GET /metrics`` (this process's: the test servers share its registry)."""
    return metric_sample(api.get("/metrics").text, name, **labels)


def audit_ok(api: ApiClient, game_id: str) -> dict[str, Any]:
    response = api.get(f"/games/{game_id}/audit")
    expect_status(response, 200)
    report = response.json()
    assert report["ok"], report
    return report


def legal_move(view: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """A legal move for the viewing seat, from its view alone (either game)."""
    if view["game"] == "sushi-go":
        return random_move(view, rng)
    you = view["you"]
    plays = [(p["card"], cell) for p in you["plays"] for cell in p["cells"]]
    if plays:
        card, cell = rng.choice(plays)
        return {"turn": view["turn"], "card": card, "cell": cell}
    if you["can_discard"]:
        return {"turn": view["turn"], "discard": you["dead_cards"][0]}
    return {"turn": view["turn"], "pass": True}


def my_turn(view: dict[str, Any]) -> bool:
    if view["status"] != "playing":
        return False
    if view["game"] == "sushi-go":
        return bool(view["you"]["awaiting_pick"])
    return bool(view["seat_to_move"] == view["you"]["seat"])


def play_to_end(api: ApiClient, game_id: str, tokens: list[str], seed: int) -> None:
    """The people holding ``tokens`` play until the game is over (bots play the other seats)."""
    rng = random.Random(seed)
    for _ in range(2000):
        moved = False
        for token in tokens:
            view = api.game(game_id, token=token)
            if view["status"] == "over":
                return
            if my_turn(view):
                api.move(game_id, legal_move(view, rng), token=token)
                moved = True
        assert moved, "nobody could move, yet the game is not over"
    raise AssertionError("the game did not end")


def moves_by(events: list[dict[str, Any]], seat: int) -> list[str | None]:
    """``by`` of every move ``seat`` made (automatic Sushi Go! picks and passes left out)."""
    kinds = {"card_picked", "card_played", "dead_card_discarded", "turn_passed"}
    return [
        e["data"].get("by")
        for e in events
        if e["type"] in kinds and e["data"]["seat"] == seat and not e["data"].get("auto")
    ]


# --- leaving before the start -------------------------------------------------------------------


@pytest.mark.parametrize(("game", "players"), GAMES)
def test_a_seat_left_before_the_start_is_free_again_and_its_token_stops(
    api: ApiClient, game: str, players: int
) -> None:
    gid = api.create_game(players, game=game)["game_id"]
    ann, bob = api.join(gid, "Ann"), api.join(gid, "Bob")
    left = counted(api, "cardroom_seats_left_total")
    response = api.post(f"/games/{gid}/leave", token=ann["token"])
    expect_status(response, 200)
    assert counted(api, "cardroom_seats_left_total") >= left + 1
    view = response.json()
    assert "you" not in view  # a spectator's view: the token acts for no seat any more
    assert view["seats"][0]["taken"] is False and view["seats"][0]["name"] is None
    assert view["seats"][1]["name"] == "Bob" and view["status"] == "waiting"
    listed = api.get("/games", params={"status": "waiting", "game": game, "limit": 100}).json()
    row = next(g for g in listed["games"] if g["game_id"] == gid)
    assert row["free_seats"] == players - 1

    for path, method in ((f"/games/{gid}", "GET"), (f"/games/{gid}/leave", "POST")):
        problem = expect_problem(
            api.request(method, path, token=ann["token"]), 401, "invalid_token"
        )
        assert "left" in problem["detail"]

    cid = api.join(gid, "Cid")
    assert cid["seat"] == 0 and cid["token"] != ann["token"]  # the first free seat, anew
    api.game(gid, token=cid["token"])  # both tokens read the game as their seats
    api.game(gid, token=bob["token"])
    for seat in range(2, players):
        api.join(gid, f"P{seat}")
    view = api.game(gid)
    assert view["status"] == "playing"
    assert [s["name"] for s in view["seats"]][:2] == ["Cid", "Bob"]
    events = api.events(gid)
    assert [e["type"] for e in events][:5] == [
        "game_created",
        "seat_taken",
        "seat_taken",
        "seat_left",
        "seat_taken",
    ]
    assert events[3]["data"] == {"seat": 0, "name": "Ann"}
    expect_problem(api.post(f"/games/{gid}/leave", token=bob["token"]), 409, "game_started")
    expect_problem(api.get(f"/games/{gid}", token=ann["token"]), 401, "invalid_token")


def test_leaving_needs_the_seats_token(api: ApiClient) -> None:
    gid = api.create_game(2)["game_id"]
    expect_problem(
        api.post(f"/games/{gid}/leave", token=None, request_valid=False), 401, "missing_token"
    )
    other = api.create_game(2)["game_id"]
    stranger = api.join(other, "Stranger")
    expect_problem(api.post(f"/games/{gid}/leave", token=stranger["token"]), 403, "not_your_game")


# --- resigning after the start ------------------------------------------------------------------


@pytest.mark.parametrize(("game", "players"), GAMES)
def test_a_resigned_seat_is_played_by_the_greedy_bot_to_the_end(
    api: ApiClient, game: str, players: int
) -> None:
    gid = api.create_game(players, game=game)["game_id"]
    seats = [api.join(gid, f"P{seat}") for seat in range(players)]
    quitter = seats[1]
    expect_problem(
        api.post(f"/games/{gid}/resign", token=None, request_valid=False), 401, "missing_token"
    )
    resigned = counted(api, "cardroom_seats_taken_over_total", reason="resigned")
    response = api.post(f"/games/{gid}/resign", token=quitter["token"])
    expect_status(response, 200)
    assert counted(api, "cardroom_seats_taken_over_total", reason="resigned") >= resigned + 1
    view = response.json()
    assert view["you"]["seat"] == 1  # the token still shows the seat's view
    assert view["seats"][1]["taken_over"] == "resigned" and view["seats"][1]["resigned"]
    assert not any(s["resigned"] for i, s in enumerate(view["seats"]) if i != 1)
    expect_problem(api.post(f"/games/{gid}/resign", token=quitter["token"]), 409, "seat_taken_over")
    view = api.game(gid, token=quitter["token"])
    if my_turn(view):  # Sushi Go!: every seat picks each turn; the bot picked for it already
        raise AssertionError("the bot should have moved for the resigned seat")
    others = [s["token"] for i, s in enumerate(seats) if i != 1]
    play_to_end(api, gid, others, seed=players)
    events = api.events(gid)
    taken = [e for e in events if e["type"] == "seat_taken_over"]
    assert [e["data"] for e in taken] == [{"seat": 1, "reason": "resigned"}]
    by = moves_by(events, 1)
    assert by and set(by) == {"resigned"}
    assert all(b is None for seat in (0, 2) for b in moves_by(events, seat))
    audit_ok(api, gid)


@pytest.mark.parametrize(("game", "players"), GAMES)
def test_a_resigned_seats_token_moves_no_more(api: ApiClient, game: str, players: int) -> None:
    gid = api.create_game(players, game=game)["game_id"]
    seats = [api.join(gid, f"P{seat}") for seat in range(players)]
    quitter = seats[0]
    before = api.game(gid, token=quitter["token"])
    move = legal_move(before, random.Random(1))
    api.post(f"/games/{gid}/resign", token=quitter["token"])
    response = api.post(f"/games/{gid}/moves", move, token=quitter["token"], name_turn=False)
    # The seat is the bot's (which moved for it at once), unless the turn is over by now.
    assert response.status_code == 409
    assert response.json()["code"] in {"seat_taken_over", "stale_move"}
    later_view = api.game(gid, token=quitter["token"])
    if later_view["status"] == "playing":
        response = api.post(
            f"/games/{gid}/moves", legal_move(later_view, random.Random(2)), token=quitter["token"]
        )
        assert response.status_code == 409


def test_resigning_before_the_start_is_refused(api: ApiClient) -> None:
    gid = api.create_game(2, game="sequence")["game_id"]
    ann = api.join(gid, "Ann")
    problem = expect_problem(
        api.post(f"/games/{gid}/resign", token=ann["token"]), 409, "game_not_started"
    )
    assert "leave" in problem["detail"]


# --- games that never fill ----------------------------------------------------------------------


@pytest.mark.parametrize(("game", "players"), GAMES)
def test_a_game_that_does_not_fill_in_time_is_cancelled(
    lapi: ApiClient, limited: LiveServer, game: str, players: int
) -> None:
    gid = lapi.create_game(players, game=game)["game_id"]
    ann = lapi.join(gid, "Ann")
    clock = sweeper(limited)
    assert clock.sweep(later(FILL / 2), [UUID(gid)]) == 0  # not due yet
    assert lapi.game(gid)["status"] == "waiting"
    cancelled = counted(lapi, "cardroom_games_cancelled_total")
    assert clock.sweep(later(FILL + 60), [UUID(gid)]) == 1
    assert counted(lapi, "cardroom_games_cancelled_total") >= cancelled + 1
    view = lapi.game(gid)
    assert view["status"] == "cancelled"
    listed = lapi.get("/games", params={"status": "cancelled", "game": game, "limit": 100})
    row = next(g for g in listed.json()["games"] if g["game_id"] == gid)
    assert row["status"] == "cancelled" and row["free_seats"] == 0
    problem = expect_problem(
        lapi.post(f"/games/{gid}/players", {"name": "Late"}), 409, "game_cancelled"
    )
    assert "cancelled" in problem["detail"]
    expect_problem(lapi.post(f"/games/{gid}/leave", token=ann["token"]), 409, "game_cancelled")
    expect_problem(lapi.post(f"/games/{gid}/resign", token=ann["token"]), 409, "game_cancelled")
    cancelled = lapi.events(gid)[-1]
    assert cancelled["type"] == "game_cancelled"
    assert cancelled["data"]["reason"] == "not_filled"
    assert cancelled["data"]["limit_seconds"] == FILL
    assert cancelled["data"]["waited_seconds"] >= FILL
    assert clock.sweep(later(FILL * 10), [UUID(gid)]) == 0  # nothing follows it
    report = audit_ok(lapi, gid)
    assert report["complete"] and report["seats"] == ["Ann"]


# --- turns nobody moves in ----------------------------------------------------------------------


def test_a_stalled_sushi_go_turn_has_its_idle_seats_taken_over(
    lapi: ApiClient, limited: LiveServer
) -> None:
    gid = lapi.create_game(3)["game_id"]
    ann, *idle = [lapi.join(gid, name) for name in ("Ann", "Bob", "Cid")]
    view = lapi.game(gid, token=ann["token"])
    assert "turn_deadline" not in view  # no turn clock: only the stall limit
    lapi.move(gid, legal_move(view, random.Random(3)), token=ann["token"])
    clock = sweeper(limited)
    assert clock.sweep(later(STALL / 2), [UUID(gid)]) == 0
    stalled = counted(lapi, "cardroom_seats_taken_over_total", reason="stalled")
    assert clock.sweep(later(STALL + 60), [UUID(gid)]) == 2  # Bob and Cid, not Ann
    assert counted(lapi, "cardroom_seats_taken_over_total", reason="stalled") >= stalled + 2
    view = lapi.game(gid, token=ann["token"])
    assert [s["taken_over"] for s in view["seats"]] == [None, "stalled", "stalled"]
    assert view["turn"] == 2  # the bot picked for both: the turn is over
    for seat in idle:
        response = lapi.post(f"/games/{gid}/moves", {"cards": ["tempura"]}, token=seat["token"])
        assert response.json()["code"] == "seat_taken_over"
    play_to_end(lapi, gid, [ann["token"]], seed=3)
    events = lapi.events(gid)
    taken = [e["data"] for e in events if e["type"] == "seat_taken_over"]
    assert [(t["seat"], t["reason"], t["limit_seconds"]) for t in taken] == [
        (1, "stalled", STALL),
        (2, "stalled", STALL),
    ]
    assert all(t["idle_seconds"] >= STALL for t in taken)
    assert set(moves_by(events, 1)) == set(moves_by(events, 2)) == {"stalled"}
    assert set(moves_by(events, 0)) == {None}
    audit_ok(lapi, gid)


def test_a_stalled_sequence_turn_is_taken_over_for_its_team(
    lapi: ApiClient, limited: LiveServer
) -> None:
    gid = lapi.create_game(2, game="sequence")["game_id"]
    idle, active = lapi.join(gid, "Idle"), lapi.join(gid, "Active")
    clock = sweeper(limited)
    assert clock.sweep(later(STALL / 2), [UUID(gid)]) == 0
    assert clock.sweep(later(STALL + 60), [UUID(gid)]) == 1  # seat 0 was to move
    view = lapi.game(gid, token=active["token"])
    assert view["seats"][0]["taken_over"] == "stalled" and view["seats"][1]["taken_over"] is None
    assert view["seat_to_move"] == 1  # the bot moved for seat 0 at once
    play_to_end(lapi, gid, [active["token"]], seed=4)
    events = lapi.events(gid)
    assert set(moves_by(events, 0)) == {"stalled"} and set(moves_by(events, 1)) == {None}
    expect_problem(lapi.post(f"/games/{gid}/resign", token=idle["token"]), 409, "game_over")
    audit_ok(lapi, gid)


def test_a_timed_turn_is_left_to_the_turn_clock(lapi: ApiClient, limited: LiveServer) -> None:
    """A turn clock shorter than the stall limit times turns out as before: no take-over."""
    response = lapi.post("/games", {"game": "sushi-go", "players": 2, "turn_seconds": 5})
    gid = response.json()["game_id"]
    lapi.join(gid, "A")
    lapi.join(gid, "B")
    assert sweeper(limited).sweep(later(STALL * 2), [UUID(gid)]) == 2  # two clock picks
    events = lapi.events(gid)
    assert not any(e["type"] == "seat_taken_over" for e in events)
    assert {e["data"].get("by") for e in events if e["type"] == "card_picked"} == {"clock"}


# --- retries ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("game", "players"), GAMES)
def test_a_retried_leave_or_resignation_gets_its_first_answer(
    api: ApiClient, game: str, players: int
) -> None:
    gid = api.create_game(players, game=game)["game_id"]
    ann = api.join(gid, "Ann")
    key = {"Idempotency-Key": str(uuid4())}
    first = api.post(f"/games/{gid}/leave", token=ann["token"], headers=key)
    again = api.post(f"/games/{gid}/leave", token=ann["token"], headers=key)
    expect_status(again, 200)
    assert again.headers["Idempotent-Replayed"] == "true" and again.json() == first.json()
    expect_problem(api.post(f"/games/{gid}/leave", token=ann["token"]), 401, "invalid_token")
    seats = [api.join(gid, f"P{seat}") for seat in range(players)]
    key = {"Idempotency-Key": str(uuid4())}
    first = api.post(f"/games/{gid}/resign", token=seats[0]["token"], headers=key)
    again = api.post(f"/games/{gid}/resign", token=seats[0]["token"], headers=key)
    expect_status(again, 200)
    assert again.headers["Idempotent-Replayed"] == "true" and again.json() == first.json()
    events = api.events(gid)
    assert [e["type"] for e in events].count("seat_left") == 1
    assert [e["type"] for e in events].count("seat_taken_over") == 1


def test_a_retried_join_whose_seat_was_left_since_replays_its_first_answer(
    api: ApiClient,
) -> None:
    """A replay is the first answer as it was (README, "Retrying safely"): a join retried after
    its seat was left gets the token it was first given, which acts for no seat any more; a
    client that wants a seat again joins with a new key."""
    gid = api.create_game(3)["game_id"]
    key = {"Idempotency-Key": str(uuid4())}
    first = api.post(f"/games/{gid}/players", {"name": "Ann"}, headers=key)
    expect_status(first, 201)
    token = first.json()["token"]
    expect_status(api.post(f"/games/{gid}/leave", token=token), 200)
    again = api.post(f"/games/{gid}/players", {"name": "Ann"}, headers=key)
    expect_status(again, 201)
    assert again.headers["Idempotent-Replayed"] == "true" and again.json() == first.json()
    problem = expect_problem(api.get(f"/games/{gid}", token=token), 401, "invalid_token")
    assert "left" in problem["detail"]
    view = api.game(gid)
    assert view["seats"][0]["taken"] is False  # the replay took no seat
    anew = api.join(gid, "Ann")
    assert anew["seat"] == 0 and anew["token"] != token


def test_a_left_token_cannot_move_through_a_process_that_has_not_seen_it_leave(
    api: ApiClient, pool: ConnectionPool, live_server: LiveServer
) -> None:
    """Two processes (two apps, each with its own cache of the game). Ann joins through the
    first, then leaves through the second, where Bob takes her seat and the game starts. The
    first decides a pick on the state it holds (issue 15); were its cache still the waiting
    game (the moment before it reads the appends: held here by putting that state back), her
    old token must still not pick for Bob's seat there (401), and Bob's own token must."""
    games = live_server.app.extensions["cardroom"]
    with serve(create_app(pool=pool)) as other_url, ApiClient(other_url) as other:
        gid = api.create_game(2)["game_id"]
        ann = api.join(gid, "Ann")
        waiting = games.last_seen(UUID(gid))
        assert ann["seat"] == 0 and waiting.state.status == "waiting"
        expect_status(other.post(f"/games/{gid}/leave", token=ann["token"]), 200)
        bob = other.join(gid, "Bob")
        other.join(gid, "Cid")
        view = other.game(gid, token=bob["token"])
        assert bob["seat"] == 0 and view["status"] == "playing"
        move = random_move(view, random.Random(1))  # names its round and turn
        stale = (waiting.adapter.game.name, waiting.state)
        games._states.put(UUID(gid), stale)  # this process has not read the appends yet
        response = api.post(f"/games/{gid}/moves", move, token=ann["token"], name_turn=False)
        expect_problem(response, 401, "invalid_token")
        assert other.game(gid)["version"] == view["version"]  # nothing recorded
        games._states.put(UUID(gid), stale)
        response = api.post(f"/games/{gid}/moves", move, token=bob["token"], name_turn=False)
        expect_status(response, 200)
