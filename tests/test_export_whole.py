"""An export is whole or refused (service/http/routes/exports.py): with a failure injected in
the middle of an export, the client gets a problem and no part of the game, never a 200; a 200
holds every event, and says its length."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator

import pytest
from api_client import ApiClient, Table, play_to_end
from flask.testing import FlaskClient
from psycopg_pool import ConnectionPool

from service.faults import HEADER
from service.http.app import create_app

pytest_plugins = ["api_fixtures"]


@pytest.fixture(scope="module")
def finished(live_server_api: ApiClient) -> Iterator[Table]:
    table = Table.open(live_server_api, 2)
    play_to_end(table, random.Random(4))
    yield table
    table.close()


@pytest.fixture(scope="module")
def live_server_api(live_server) -> Iterator[ApiClient]:  # type: ignore[no-untyped-def]
    with ApiClient(live_server.url) as api:
        yield api


@pytest.fixture
def client(pool: ConnectionPool, monkeypatch: pytest.MonkeyPatch) -> FlaskClient:
    monkeypatch.setenv("CARDROOM_FAULT_INJECTION", "1")
    return create_app(pool=pool).test_client()


def test_a_whole_export_says_its_length_and_ends_with_the_signature(
    client: FlaskClient, finished: Table
) -> None:
    answer = client.get(f"{finished.path}/export")
    assert answer.status_code == 200
    body = answer.get_data()
    assert int(answer.headers["Content-Length"]) == len(body)
    lines = body.decode().splitlines()
    version = client.get(finished.path).get_json()["version"]
    assert [json.loads(line)["version"] for line in lines[:-1]] == list(range(1, version + 1))
    assert json.loads(lines[-1])["checkpoint"]["version"] == version


@pytest.mark.parametrize("over", [True, False], ids=["finished", "in-play"])
def test_a_read_that_comes_back_short_is_refused_whole(
    client: FlaskClient, finished: Table, live_server_api: ApiClient, over: bool
) -> None:
    path = finished.path if over else Table.open(live_server_api, 2).path
    answer = client.get(f"{path}/export", headers={HEADER: "export_read:short"})
    assert answer.status_code == 503, answer.get_data(as_text=True)[:300]
    assert answer.headers["Content-Type"] == "application/problem+json"
    assert answer.headers["Retry-After"] == "1"
    problem = answer.get_json()
    assert problem["code"] == "export_incomplete" and "nothing of the export" in problem["detail"]
    assert '"version"' not in answer.get_data(as_text=True).replace('"status"', "")


def test_a_failure_halfway_through_the_lines_is_a_problem_not_half_a_game(
    client: FlaskClient, finished: Table
) -> None:
    answer = client.get(f"{finished.path}/export", headers={HEADER: "export_half:fail"})
    assert answer.status_code == 500
    assert answer.headers["Content-Type"] == "application/problem+json"
    assert answer.get_json()["code"] == "internal_error"
    assert "game_created" not in answer.get_data(as_text=True)
