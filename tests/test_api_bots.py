"""Bots and the turn clock over HTTP (service/autoplay.py, service/live/clock.py): people play
against bots to the end; an all-bot game plays itself at creation; the sweeper, with an injected
"now", picks for a seat that never does, once per seat however many sweepers race; every such game
audits ok."""

from __future__ import annotations

import random
import threading
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

import pytest
from api_client import ApiClient, LiveServer, expect_problem, expect_status, random_move
from psycopg_pool import ConnectionPool

from service.live.clock import Sweeper
from service.play import GameService
from service.store.events import EventStore

pytest_plugins = ["api_fixtures"]

LATER = timedelta(minutes=10)  # "now", injected: past every deadline these tests make


def create(api: ApiClient, players: int, bots: list[dict[str, Any]], **extra: Any) -> dict:
    response = api.post("/games", {"game": "sushi-go", "players": players, "bots": bots, **extra})
    expect_status(response, 201)
    return response.json()


def events_of(api: ApiClient, game_id: str) -> list[dict[str, Any]]:
    return api.events(game_id, limit=500)


def own_picks(events: list[dict[str, Any]], seat: int) -> list[dict[str, Any]]:
    """``seat``'s picks that are not automatic (S5)."""
    return [
        e["data"]
        for e in events
        if e["type"] == "card_picked" and e["data"]["seat"] == seat and not e["data"]["auto"]
    ]


def audit_ok(api: ApiClient, game_id: str) -> dict[str, Any]:
    response = api.get(f"/games/{game_id}/audit")
    expect_status(response, 200)
    report = response.json()
    assert report["ok"], report
    return report


def play_seat(client: ApiClient, game_id: str, rng: random.Random) -> bool:
    """One pick for the client's seat if it is to pick; whether it did."""
    view = client.game(game_id)
    if view["status"] != "playing" or view["you"]["pick"] is not None:
        return False
    client.move(game_id, random_move(view, rng))
    return True


# --- bots -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rules", "bots"),
    [
        pytest.param({}, {1: "greedy", 2: "random", 3: "greedy"}, id="gamewright-4"),
        pytest.param({"edition": "zoch"}, {0: "random", 1: "greedy", 3: "random"}, id="zoch-4"),
        pytest.param({"dummy": True}, {0: "greedy"}, id="gamewright-2-dummy"),
    ],
)
def test_a_person_plays_against_bots_to_the_end(
    api: ApiClient, rules: dict[str, Any], bots: dict[int, str]
) -> None:
    players = 2 if rules.get("dummy") else 4
    body = [{"seat": seat, "kind": kind} for seat, kind in bots.items()]
    view = create(api, players, body, rules=rules)
    assert [s["bot"] for s in view["seats"]] == [bots.get(s) for s in range(players)]
    assert view["turn_seconds"] is None and "turn_deadline" not in view
    first_bot_seats = [s for s in range(players) if all(b in bots for b in range(s + 1))]
    assert [s["taken"] for s in view["seats"]][: len(first_bot_seats)] == [True] * len(
        first_bot_seats
    )
    gid = view["game_id"]
    (human,) = set(range(players)) - set(bots)
    granted = api.join(gid, "ann")
    assert granted["seat"] == human and granted["started"] is True
    rng = random.Random(gid)
    with api.clone(token=granted["token"]) as ann:
        view = ann.game(gid)
        assert view["status"] == "playing" and view["you"]["pick"] is None
        assert all(s["picked"] for s in view["seats"] if s["seat"] != human)  # bots at once
        picks = 0
        while play_seat(ann, gid, rng):
            picks += 1
        assert ann.game(gid)["status"] == "over" and picks > 0
    events = events_of(api, gid)
    seats = [e["data"] for e in events if e["type"] == "seat_taken"]
    assert [(s["seat"], s.get("bot")) for s in seats] == [
        (seat, bots.get(seat)) for seat in range(players)
    ]
    assert own_picks(events, human) and all("by" not in p for p in own_picks(events, human))
    for seat in bots:
        assert own_picks(events, seat) and all(p["by"] == "bot" for p in own_picks(events, seat))
    audit_ok(api, gid)


def test_an_all_bot_game_plays_itself_at_creation(api: ApiClient) -> None:
    bots = [{"seat": s, "kind": k} for s, k in enumerate(["greedy", "random", "greedy"])]
    view = create(api, 3, [*bots[:2], {**bots[2], "name": "Gus"}], rules={"edition": "zoch"})
    assert view["status"] == "over" and len(view["winners"]) >= 1
    assert [s["name"] for s in view["seats"]] == ["greedy bot 0", "random bot 1", "Gus"]
    report = audit_ok(api, view["game_id"])
    assert report["seats"] == ["greedy bot 0", "random bot 1", "Gus"]
    assert report["totals"] == [{"seat": t["seat"], "total": t["total"]} for t in view["totals"]]


@pytest.mark.parametrize(
    ("players", "bots", "rules"),
    [
        (3, [{"seat": 3, "kind": "greedy"}], {}),
        (3, [{"seat": 1, "kind": "greedy"}, {"seat": 1, "kind": "random"}], {}),
        (3, [{"seat": 1, "kind": "clever"}], {}),
    ],
)
def test_422_invalid_bots(
    api: ApiClient, players: int, bots: list[dict[str, Any]], rules: dict[str, Any]
) -> None:
    body = {"game": "sushi-go", "players": players, "bots": bots, "rules": rules}
    expect_problem(api.post("/games", body, request_valid=None), 422, "invalid_bots")


@pytest.mark.parametrize(
    "extra",
    [
        {"turn_seconds": 4},
        {"turn_seconds": 3601},
        {"turn_seconds": "30"},
        {"bots": [{"seat": 1}]},
        {"bots": [{"seat": 1, "kind": "greedy", "colour": "red"}]},
    ],
)
def test_400_invalid_bots_or_clock(api: ApiClient, extra: dict[str, Any]) -> None:
    body = {"game": "sushi-go", "players": 3, **extra}
    expect_problem(api.post("/games", body, request_valid=False), 400, "invalid_request")


# --- the turn clock -------------------------------------------------------------------------------


@pytest.fixture
def other_process(pool: ConnectionPool) -> Sweeper:
    """A sweeper with its own game service (own caches): another server process, or this one
    after a restart."""
    return Sweeper(GameService(EventStore(pool)))


def test_the_clock_picks_for_a_seat_that_never_does(
    api: ApiClient, live_server: LiveServer, other_process: Sweeper
) -> None:
    view = create(api, 3, [{"seat": 2, "kind": "random"}], turn_seconds=5)
    gid = view["game_id"]
    assert view["turn_seconds"] == 5 and "turn_deadline" not in view  # nobody to wait for
    active, idle = api.join(gid, "ann"), api.join(gid, "bob")
    assert idle["started"]
    sweepers = [live_server.app.extensions["cardroom_clock"], other_process]
    rng = random.Random(gid)
    with api.clone(token=active["token"]) as ann:
        before = datetime.now(UTC)
        view = ann.game(gid)
        deadline = datetime.fromisoformat(view["turn_deadline"])
        assert before < deadline < datetime.now(UTC) + timedelta(seconds=6)
        now_and_then = ann.get(f"/games/{gid}/state").json()  # time travel to the present
        assert now_and_then["turn_deadline"] == view["turn_deadline"]
        sweeps = 0
        while ann.game(gid)["status"] != "over":
            play_seat(ann, gid, rng)
            assert sweepers[sweeps % 2].sweep(datetime.now(UTC) + LATER, [UUID(gid)]) <= 1
            sweeps += 1
            assert sweeps < 40
    assert "turn_deadline" not in api.game(gid)
    events = events_of(api, gid)
    assert all("by" not in p for p in own_picks(events, 0))
    timed_out = own_picks(events, 1)
    assert len(timed_out) == 24 and all(p["by"] == "clock" for p in timed_out)
    assert all(p["by"] == "bot" for p in own_picks(events, 2))
    audit_ok(api, gid)


def test_a_sweep_leaves_a_turn_that_is_not_due(api: ApiClient, other_process: Sweeper) -> None:
    gid = start_idle_game(api, players=2)
    assert other_process.sweep(datetime.now(UTC), [UUID(gid)]) == 0  # due in 5 s
    assert other_process.sweep(datetime.now(UTC) + LATER, [UUID(gid)]) == 2


def start_idle_game(api: ApiClient, players: int) -> str:
    """A timed game whose people have all joined and never pick."""
    gid = create(api, players, [], turn_seconds=5)["game_id"]
    for seat in range(players):
        api.join(gid, f"idle {seat}")
    return gid


def race(tasks: list[Callable[[], int]]) -> list[int]:
    """Run ``tasks`` in threads released at the same moment; their results."""
    barrier = threading.Barrier(len(tasks))
    results: list[int] = [0] * len(tasks)
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            barrier.wait()
            results[i] = tasks[i]()
        except BaseException as exc:  # reported below, in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(tasks))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert not errors, errors
    return results


def picks_per_turn(api: ApiClient, gid: str) -> Counter[tuple[int, int, int]]:
    """(round, turn, seat) -> the number of picks recorded."""
    events = events_of(api, gid)
    return Counter(
        (e["data"]["round"], e["data"]["turn"], e["data"]["seat"])
        for e in events
        if e["type"] == "card_picked"
    )


def test_two_sweepers_on_the_same_expired_turn_make_one_pick_per_seat(
    api: ApiClient, pool: ConnectionPool
) -> None:
    gid = start_idle_game(api, players=4)
    sweepers = [Sweeper(GameService(EventStore(pool))) for _ in range(2)]
    now = datetime.now(UTC) + LATER
    made = race([lambda s=s: s.sweep(now, [UUID(gid)]) for s in sweepers])
    # One sweeper times the first turn out; the other finds it locked or over, unless it comes
    # so late that it times out the next turn (its deadline is also before the injected now).
    assert 4 in made and sum(made) in (4, 8)
    picks = picks_per_turn(api, gid)
    assert set(picks.values()) == {1} and len(picks) == sum(made)
    assert {seat for (r, t, seat) in picks if (r, t) == (1, 1)} == {0, 1, 2, 3}


def test_racing_time_outs_without_the_lock_still_pick_once_per_seat(
    api: ApiClient, pool: ConnectionPool
) -> None:
    """The advisory lock only saves work: the append conflict alone keeps one pick per seat."""
    gid = start_idle_game(api, players=4)
    services = [GameService(EventStore(pool)) for _ in range(3)]
    row = services[0].deadlines.latest(UUID(gid))
    assert row is not None
    made = race([lambda s=s: s.time_out(UUID(gid), row.version) for s in services])
    assert sorted(made) == [0, 0, 4]
    assert picks_per_turn(api, gid) == {(1, 1, seat): 1 for seat in range(4)}


def test_the_sweeper_thread_starts_and_stops(pool: ConnectionPool) -> None:
    sweeper = Sweeper(GameService(EventStore(pool)), interval=3600)
    sweeper.start()
    sweeper.stop(timeout=5)
    assert sweeper._thread is None
