"""A move counts only for the turn it names (issue 12): a pick from a second device still showing
an old turn, a pick that races the turn clock, and copies of one pick sent with different keys are
refused with 409 ``stale_move`` (or ``already_picked``, S4) and change nothing; a move that names
no turn is a 400 saying what to add. Every refusal says where the game is (its version, round,
turn)."""

from __future__ import annotations

import threading
import uuid
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

import requests
from api_client import ApiClient, LiveServer, Table, current_turn, expect_problem, expect_status

pytest_plugins = ["api_fixtures"]

LATER = timedelta(minutes=10)  # "now" injected into the sweeper: past every deadline


def hand(player_client: ApiClient, game_id: str) -> list[str]:
    return list(player_client.game(game_id)["you"]["hand"])


def picks(api: ApiClient, game_id: str) -> Counter[tuple[int, int, int]]:
    """(round, turn, seat) -> the number of card_picked events."""
    return Counter(
        (e["data"]["round"], e["data"]["turn"], e["data"]["seat"])
        for e in api.events(game_id)
        if e["type"] == "card_picked"
    )


def test_a_pick_for_a_turn_that_is_over_is_refused_and_changes_nothing(api: ApiClient) -> None:
    """A second device still shows turn 1 after it ended; its pick names turn 1: refused, even
    though the card is in the seat's turn-2 hand (it would have become that turn's pick)."""
    table = Table.open(api, 2)
    alice, bob = table.players
    alice.client.move(
        table.game_id, {"round": 1, "turn": 1, "cards": hand(alice.client, table.game_id)[:1]}
    )
    bob.client.move(
        table.game_id, {"round": 1, "turn": 1, "cards": hand(bob.client, table.game_id)[:1]}
    )
    now = alice.client.game(table.game_id)
    assert (now["round"], now["turn"]) == (1, 2)
    card = now["you"]["hand"][0]  # in the hand the second device never saw
    stale = alice.client.post(
        f"{table.path}/moves", {"round": 1, "turn": 1, "cards": [card]}, name_turn=False
    )
    problem = expect_problem(stale, 409, "stale_move")
    assert (problem["version"], problem["round"], problem["turn"]) == (now["version"], 1, 2)
    assert "round 1, turn 2" in problem["detail"]
    after = alice.client.game(table.game_id)
    assert after["version"] == now["version"] and after["you"]["pick"] is None
    # A move for a turn not yet reached is no better.
    ahead = alice.client.post(
        f"{table.path}/moves", {"round": 1, "turn": 3, "cards": [card]}, name_turn=False
    )
    expect_problem(ahead, 409, "stale_move")
    assert alice.client.game(table.game_id)["version"] == now["version"]
    table.close()


def test_a_move_that_names_no_turn_is_a_400_saying_what_to_add(api: ApiClient) -> None:
    table = Table.open(api, 2)
    alice = table.players[0]
    view = alice.client.game(table.game_id)
    response = alice.client.post(
        f"{table.path}/moves",
        {"cards": view["you"]["hand"][:1]},
        name_turn=False,
        request_valid=False,
    )
    problem = expect_problem(response, 400, "missing_turn")
    assert '"round": 1, "turn": 1' in problem["detail"]
    assert problem["version"] == view["version"]
    # Only the turn's fields missing is missing_turn; a move also wrong otherwise is the usual 400.
    other = alice.client.post(
        f"{table.path}/moves", {"cards": ["no_such_card"]}, name_turn=False, request_valid=False
    )
    assert expect_problem(other, 400, "invalid_request")["errors"].keys() >= {"cards", "turn"}
    assert alice.client.game(table.game_id)["version"] == view["version"]
    table.close()


def test_sequence_moves_name_their_turn(api: ApiClient) -> None:
    view = api.create_game(2, game="sequence")
    tokens = [api.join(view["game_id"], name)["token"] for name in ("ann", "bob")]
    path = f"/games/{view['game_id']}"
    mover = api.game(view["game_id"])["seat_to_move"]
    with api.clone(token=tokens[mover]) as client:
        now = client.game(view["game_id"])
        missing = client.post(f"{path}/moves", {"pass": True}, name_turn=False, request_valid=False)
        assert expect_problem(missing, 400, "missing_turn")["turn"] == now["turn"]
        stale = client.post(
            f"{path}/moves", {"turn": now["turn"] - 1, "pass": True}, name_turn=False
        )
        problem = expect_problem(stale, 409, "stale_move")
        assert (problem["version"], problem["turn"]) == (now["version"], now["turn"])
        assert "round" not in problem
        assert client.game(view["game_id"])["version"] == now["version"]


def test_a_pick_that_races_the_turn_clock_is_refused_not_moved_to_the_next_turn(
    api: ApiClient, live_server: LiveServer
) -> None:
    """The clock picks for a timed turn just before the seat's own pick for it arrives: the pick
    is refused (409 stale_move), not recorded as the next turn's, nor a misleading 422."""
    created = api.post("/games", {"game": "sushi-go", "players": 2, "turn_seconds": 5})
    gid = expect_json(created, 201)["game_id"]
    tokens = [api.join(gid, f"p{seat}")["token"] for seat in range(2)]
    with api.clone(token=tokens[0]) as alice:
        seen = alice.game(gid)
        chosen = seen["you"]["hand"][0]
        clock = live_server.app.extensions["cardroom_clock"]
        assert clock.sweep(datetime.now(UTC) + LATER, [uuid.UUID(gid)]) == 2  # both timed out
        now = alice.game(gid)
        assert (now["round"], now["turn"]) == (1, 2)
        late = alice.post(f"/games/{gid}/moves", {**current_turn(seen), "cards": [chosen]})
        problem = expect_problem(late, 409, "stale_move")
        assert (problem["round"], problem["turn"], problem["version"]) == (1, 2, now["version"])
    counted = picks(api, gid)
    assert counted == {(1, 1, 0): 1, (1, 1, 1): 1}  # the clock's two, nothing in turn 2


def expect_json(response: requests.Response, status: int) -> Any:
    expect_status(response, status)
    return response.json()


def send_copy(
    client: ApiClient,
    path: str,
    body: dict[str, Any],
    barrier: threading.Barrier,
    answers: list[requests.Response],
) -> None:
    """One copy of a pick, with a key of its own, released with the others by ``barrier``."""
    with client.clone() as copy:
        barrier.wait()
        key = {"Idempotency-Key": str(uuid.uuid4())}
        answers.append(copy.post(f"{path}/moves", body, headers=key, request_valid=None))


def test_copies_of_a_pick_with_different_keys_count_once(api: ApiClient) -> None:
    """A client resends its pick without its key, at once, while the other seat has picked: one
    copy ends the turn; the other must not become the next turn's pick (S4)."""
    for _ in range(5):
        table = Table.open(api, 2)
        alice, bob = table.players
        bob.client.move(
            table.game_id, {"round": 1, "turn": 1, "cards": hand(bob.client, table.game_id)[:1]}
        )
        body = {"round": 1, "turn": 1, "cards": hand(alice.client, table.game_id)[:1]}
        barrier = threading.Barrier(2)
        answers: list[requests.Response] = []

        threads = [
            threading.Thread(
                target=send_copy, args=(alice.client, table.path, body, barrier, answers)
            )
            for _ in range(2)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        statuses = sorted(a.status_code for a in answers)
        assert statuses == [200, 409], [a.text for a in answers]
        refused = next(a for a in answers if a.status_code == 409)
        assert refused.json()["code"] in ("stale_move", "already_picked")
        assert picks(api, table.game_id) == {(1, 1, 0): 1, (1, 1, 1): 1}
        expect_status(api.get(table.path), 200)
        table.close()
