"""Reads from a hot standby (DATABASE_REPLICA_URL) with read-your-writes: a real primary and
standby (bench/pg_cluster.py, streaming replication) whose replay is paused, so the standby is
behind the primary for as long as a test says. Two apps, as two hosts would be: ``writer``
(no replica) takes the picks, ``reader`` (reads on the standby) answers the reads.

Without the checks of service/play/ (``GameService.read``, ``records``, ``finished_records``)
every read below would answer the standby's older state."""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from api_client import ApiClient, Table, expect_status, play_to_end, serve

from bench.pg_cluster import Cluster, free_port
from service.http.app import create_app
from service.store.db import make_pool


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    with Cluster(sync_commit="on", fsync=False) as built:
        yield built


@contextmanager
def app_client(url: str, replica_urls: list[str]) -> Iterator[ApiClient]:
    with make_pool(url, max_size=4) as pool:
        app = create_app(pool=pool, replica_urls=replica_urls)
        try:
            with serve(app) as base, ApiClient(base) as client:
                yield client
        finally:
            app.extensions["cardroom_live"].stop()
            app.extensions["cardroom"].replicas.close()


@pytest.fixture(scope="module")
def writer(cluster: Cluster) -> Iterator[ApiClient]:
    with app_client(cluster.primary_url(), []) as client:
        yield client


@pytest.fixture(scope="module")
def reader(cluster: Cluster) -> Iterator[ApiClient]:
    with app_client(cluster.primary_url(), [cluster.standby_url()]) as client:
        yield client


def standby_version(cluster: Cluster, game_id: str) -> int:
    rows = cluster.standby.execute(
        f"SELECT coalesce(max(version), 0) FROM events WHERE game_id = '{game_id}'", "cardroom"
    )
    return int(rows[0][0])  # type: ignore[call-overload]


def caught_up(cluster: Cluster, game_id: str, version: int) -> None:
    until = time.monotonic() + 10
    while standby_version(cluster, game_id) < version:
        assert time.monotonic() < until, "the standby did not catch up"
        time.sleep(0.01)


@contextmanager
def replay_paused(cluster: Cluster) -> Iterator[None]:
    """The standby stops applying WAL (it still receives and flushes it: synchronous commits
    go on) until the block ends."""
    cluster.standby.execute("SELECT pg_wal_replay_pause()")
    try:
        yield
    finally:
        cluster.standby.execute("SELECT pg_wal_replay_resume()")


def pick(table: Table, seat: int, rng: random.Random) -> dict[str, Any]:
    client = table.players[seat].client
    view = client.game(table.game_id)
    return client.move(table.game_id, {"cards": [rng.choice(view["you"]["hand"])]})


def test_reads_come_from_the_standby_but_never_older_than_what_the_client_saw(
    cluster: Cluster, writer: ApiClient, reader: ApiClient
) -> None:
    rng = random.Random(19)
    table = Table.open(writer, 2)
    path = table.path
    started = writer.game(table.game_id)["version"]
    caught_up(cluster, table.game_id, started)
    with replay_paused(cluster):
        v1 = pick(table, 0, rng)["version"]
        assert v1 > started
        # No version sent: the standby answers, as it is (this is what shows where reads go).
        assert reader.game(table.game_id)["version"] == started
        lobby = reader.get("/games", params={"order": "newest", "limit": 100}).json()["games"]
        assert [g["version"] for g in lobby if g["game_id"] == table.game_id] == [started]

        # A version the client has seen, in each of the ways a client says so.
        response = reader.get(path, params={"min_version": v1})
        expect_status(response, 200)
        assert response.json()["version"] == v1

        v2 = pick(table, 1, rng)["version"]
        etag = f'W/"{v2}-spectator"'
        response = reader.get(path, headers={"If-None-Match": etag})
        assert response.status_code == 304, response.text  # not the standby's older view

        v3 = pick(table, 0, rng)["version"]
        began = time.monotonic()
        response = reader.get(path, params={"wait_after": v2, "wait_seconds": 5})
        expect_status(response, 200)
        assert response.json()["version"] == v3
        assert time.monotonic() - began < 3  # woken by the append, not by the end of the wait

        page = reader.get(f"{path}/events", params={"after": v3 - 1}).json()
        assert [e["version"] for e in page["events"]] == [v3]
        page = reader.get(f"{path}/events", params={"min_version": v3}).json()
        assert page["version"] == v3 and page["events"][-1]["version"] == v3
        expect_status(reader.get(f"{path}/state", params={"version": v3}), 200)
        assert reader.get(f"{path}/scores", params={"min_version": v3}).json()["version"] == v3
        export = reader.get(f"{path}/export", params={"min_version": v3}).text.splitlines()
        assert len(export) == v3
        assert standby_version(cluster, table.game_id) == started  # still paused all along
    table.close()


def test_what_the_standby_does_not_have_yet_is_read_on_the_primary(
    cluster: Cluster, writer: ApiClient, reader: ApiClient
) -> None:
    table = Table.open(writer, 2)
    started = writer.game(table.game_id)["version"]
    caught_up(cluster, table.game_id, started)
    with replay_paused(cluster):
        created = writer.create_game(2)  # a game the standby has never seen
        expect_status(reader.get(f"/games/{created['game_id']}"), 200)
        play_to_end(table, random.Random(7))
        assert standby_version(cluster, table.game_id) == started
        # Over on the primary only: the audit is there, not a 409 game_not_over.
        response = reader.get(f"{table.path}/audit")
        expect_status(response, 200)
        assert response.json()["ok"] is True
        table.close()


def test_a_standby_that_cannot_be_reached_is_skipped(cluster: Cluster) -> None:
    nowhere = f"postgresql://postgres@127.0.0.1:{free_port()}/cardroom?connect_timeout=1"
    with app_client(cluster.primary_url(), [nowhere]) as client:
        view = client.create_game(2)
        began = time.monotonic()
        assert client.game(view["game_id"])["version"] == view["version"]
        expect_status(client.get("/games"), 200)
        expect_status(client.get(f"/games/{view['game_id']}/events"), 200)
        assert time.monotonic() - began < 5


@pytest.mark.parametrize(
    "tags", ['W/""', '"Rpy)>", W/""', 'W/"\u00b2-spectator"', '"99999999999-x"']
)
def test_if_none_match_tags_not_of_ours_are_not_versions(writer: ApiClient, tags: str) -> None:
    view = writer.create_game(2)
    response = writer.get(f"/games/{view['game_id']}", headers={"If-None-Match": tags})
    expect_status(response, 200)
    assert response.json()["version"] == view["version"]
