"""Replay over HTTP: any version of a game (time travel) and its export, as JSON Lines.

Every response is checked against openapi.yaml by ``ApiClient``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator

import pytest
from api_client import ApiClient, Table, expect_problem, play_to_end

from domain.chain import first_break
from domain.decider import Viewer, fold
from domain.sushigo import SUSHI_GO
from service.store.events import EventStore

pytest_plugins = ["api_fixtures"]


@pytest.fixture
def finished(api: ApiClient) -> Iterator[Table]:
    table = Table.open(api, 2, dummy=True)
    play_to_end(table, random.Random(7))
    yield table
    table.close()


def export_lines(client: ApiClient, table: Table) -> list[dict]:
    response = client.get(f"{table.path}/export")
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("application/x-ndjson")
    lines = [json.loads(line) for line in response.text.splitlines()]
    if lines and "checkpoint" in lines[-1]:  # a finished game's signature: tests/test_receipts.py
        lines.pop()
    return lines


def test_every_version_of_a_finished_game_is_the_fold_of_its_prefix(
    finished: Table, store: EventStore
) -> None:
    """Once over, the state at version N is public and equals folding the first N events."""
    import uuid

    records = store.load_records(uuid.UUID(finished.game_id), 0, 1000)
    events = [r.event for r in records]
    for version in range(1, len(events) + 1):
        past = finished.api.get(f"{finished.path}/state", params={"version": version}).json()
        state = fold(SUSHI_GO, events[:version])
        expected = SUSHI_GO.view(state, Viewer(everything=True))
        # ``visibility`` is the service's (a private game's row), not the game's state
        assert past == {"game_id": finished.game_id, **expected, "visibility": "public"}, version
    assert past["status"] == "over"


def test_time_travel_while_playing_is_redacted_like_the_live_view(api: ApiClient) -> None:
    table = Table.open(api, 3)
    try:
        alice = table.players[0].client
        first = alice.get(f"{table.path}/state", params={"version": 6}).json()  # after the deal
        assert first["version"] == 6 and first["round"] == 1
        assert first["you"]["hand"] and all("hand" not in seat for seat in first["seats"])
        spectator = api.get(f"{table.path}/state", params={"version": 6}).json()
        assert "you" not in spectator and all("hand" not in s for s in spectator["seats"])
        assert api.get(f"{table.path}/state").json() == api.game(table.game_id)
    finally:
        table.close()


def test_time_travel_beyond_the_log_is_not_found(finished: Table) -> None:
    now = finished.api.game(finished.game_id)["version"]
    response = finished.api.get(f"{finished.path}/state", params={"version": now + 1})
    problem = expect_problem(response, 404, "version_not_found")
    assert str(now) in problem["detail"]
    too_early = finished.api.get(
        f"{finished.path}/state", params={"version": 0}, request_valid=False
    )
    expect_problem(too_early, 400, "invalid_request")


def test_a_finished_game_exports_every_event_with_an_intact_hash_chain(finished: Table) -> None:
    lines = export_lines(finished.api, finished)
    assert [line["version"] for line in lines] == list(range(1, len(lines) + 1))
    assert lines[0]["type"] == "game_created" and lines[-1]["type"] == "game_ended"
    assert all(line["game_id"] == finished.game_id for line in lines)
    assert first_break(lines) is None
    assert "seed" in lines[-1]["data"]
    deals = [line for line in lines if line["type"] == "round_dealt"]
    assert all(line["data"]["dummy_pile"] is not None for line in deals)


def test_an_export_before_the_end_is_redacted_and_carries_no_hashes(api: ApiClient) -> None:
    """A hash of a hidden hand or pick would let anyone test guesses of it."""
    table = Table.open(api, 2)
    try:
        bob = table.players[1]
        lines = export_lines(bob.client, table)
        deal = next(line for line in lines if line["type"] == "round_dealt")
        assert deal["data"]["hands"][0] is None and deal["data"]["hands"][1]
        assert all(line["hash"] is None for line in lines)
        assert all("seed" not in line["data"] for line in lines)  # revealed by game_ended only
    finally:
        table.close()
