"""Exactly once, across crashes (issue 12): a keyed request's receipt is committed with its
events, so whatever the client sees — no answer because the worker died, a reset connection —
resending with the same key either runs the request for the first time or replays its answer,
never runs it twice.

A real ``cardroom serve`` (gunicorn, one worker) runs with test-only fault injection
(service/faults.py): the first send carries ``X-Cardroom-Fault: <point>:<action>`` and meets that
fault at each point between "decided" and "answer sent": the worker exits (``os._exit``, as a
``kill -9``) or the client's connection is dropped. Then the client resends with the same key:
one event, the first answer (each later resend gets the same one, marked replayed)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from patience import ANSWER

from bench.load import Server, free_port
from service import faults

HEADER = "Idempotency-Key"
REPLAYED = "Idempotent-Replayed"
# The faults that lose a pick's answer: a crash or a dropped connection at each step of a pick
# (the export's points and the "fail" and "short" actions are test_export_whole.py's).
PICK_POINTS = ("decided", "appended", "answered")
CASES = [(point, action) for point in PICK_POINTS for action in ("exit", "drop")]
assert set(PICK_POINTS) <= set(faults.POINTS) and {"exit", "drop"} <= set(faults.ACTIONS)


@pytest.fixture(scope="module")
def server(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("exactly-once") / "server.log"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CARDROOM_FAULT_INJECTION", "1")
        patch.setenv("CARDROOM_CLOCK_INTERVAL", "0")
        running = Server(database_url, free_port(), workers=1, threads=4, log=log)
        running.start()
    try:
        yield running.base
    finally:
        running.stop()


def up(base: str, timeout: float = 60.0) -> None:
    """Wait until the server answers again (gunicorn starts a new worker after a crash)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if requests.get(f"{base}/healthz", timeout=ANSWER).status_code == 200:
                return
        except requests.ConnectionError:
            pass
        time.sleep(0.1)
    raise AssertionError("the server did not come back")


def post(base: str, path: str, body: Any, key: str, token: str | None = None, fault: str = ""):
    headers = {HEADER: key}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    if fault:
        headers[faults.HEADER] = fault
    return requests.post(f"{base}{path}", json=body, headers=headers, timeout=ANSWER)


def faulty_send(base: str, path: str, body: Any, key: str, token: str | None, fault: str) -> None:
    """The first send, meeting its fault: the client never gets the answer."""
    with pytest.raises(requests.ConnectionError):
        post(base, path, body, key, token, fault)
    up(base)


def new_game(base: str, players: int = 2) -> tuple[str, list[str]]:
    created = requests.post(
        f"{base}/games", json={"game": "sushi-go", "players": players}, timeout=ANSWER
    )
    game = created.headers["Location"]
    tokens = [
        requests.post(f"{base}{game}/players", json={"name": f"p{i}"}, timeout=ANSWER).json()[
            "token"
        ]
        for i in range(players)
    ]
    return game, tokens


def events(base: str, game: str) -> list[dict[str, Any]]:
    return requests.get(f"{base}{game}/events?limit=500", timeout=ANSWER).json()["events"]


def resent_twice(base: str, path: str, body: Any, key: str, token: str | None, status: int):
    """Resend with the same key (no fault); a third send must replay the same answer."""
    again = post(base, path, body, key, token)
    assert again.status_code == status, again.text
    third = post(base, path, body, key, token)
    assert third.status_code == status and third.headers[REPLAYED] == "true"
    assert third.content == again.content
    return again


@pytest.mark.parametrize(("point", "action"), CASES, ids=[f"{p}-{a}" for p, a in CASES])
def test_a_pick_resent_after_a_fault_counts_once(server: str, point: str, action: str) -> None:
    game, tokens = new_game(server)
    view = requests.get(
        f"{server}{game}", headers={"Authorization": f"Bearer {tokens[0]}"}, timeout=ANSWER
    ).json()
    card = view["you"]["hand"][0]
    body = {"round": view["round"], "turn": view["turn"], "cards": [card]}
    key = str(uuid.uuid4())
    faulty_send(server, f"{game}/moves", body, key, tokens[0], f"{point}:{action}")
    answer = resent_twice(server, f"{game}/moves", body, key, tokens[0], 200)
    took_effect_first = not (point == "decided" and action == "exit")
    assert (answer.headers.get(REPLAYED) == "true") is took_effect_first
    assert answer.json()["you"]["pick"]["cards"] == [card]
    picks = [e for e in events(server, game) if e["type"] == "card_picked"]
    assert [(p["data"]["seat"], p["data"]["turn"]) for p in picks] == [(0, 1)]
    assert answer.json()["version"] == len(events(server, game))


@pytest.mark.parametrize("point", ["appended", "answered"])
def test_a_join_resent_after_a_crash_takes_one_seat_and_gets_its_token(
    server: str, point: str
) -> None:
    game = requests.post(
        f"{server}/games", json={"game": "sushi-go", "players": 3}, timeout=ANSWER
    ).headers["Location"]
    key = str(uuid.uuid4())
    faulty_send(server, f"{game}/players", {"name": "Ada"}, key, None, f"{point}:exit")
    granted = resent_twice(server, f"{game}/players", {"name": "Ada"}, key, None, 201)
    assert granted.headers[REPLAYED] == "true"
    seats = requests.get(f"{server}{game}", timeout=ANSWER).json()["seats"]
    assert [s["taken"] for s in seats] == [True, False, False]
    auth = {"Authorization": f"Bearer {granted.json()['token']}"}
    assert requests.get(f"{server}{game}", headers=auth, timeout=ANSWER).status_code == 200


def test_a_create_resent_after_a_crash_creates_one_game(server: str) -> None:
    key = str(uuid.uuid4())
    body = {"game": "sushi-go", "players": 2}
    faulty_send(server, "/games", body, key, None, "appended:exit")
    # The crashed send created its game: it is listed before the resend.
    listed = requests.get(f"{server}/games?order=newest&limit=50", timeout=ANSWER).json()["games"]
    created = resent_twice(server, "/games", body, key, None, 201)
    assert created.headers[REPLAYED] == "true"
    assert created.json()["game_id"] in {
        g["game_id"] for g in listed
    }  # that game, not a second one
