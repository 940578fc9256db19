"""Caches never outlive the truth (issue 27, point 3): a ``cardroom serve`` whose database server
is restarted onto an older copy of its files (a restore that lacks the last commits, as a
failover to a standby that had not received them is) drops what it remembers of the games, so
that no answer shows an event the database does not hold (the view, the events, the stream),
and none is a 500; play goes on from what the database holds."""

from __future__ import annotations

import random
import shutil
import subprocess
import time
from typing import Any

import requests
from api_client import ApiClient, Table, random_move
from patience import ANSWER
from serve_support import cardroom_serve
from solo_postgres import solo_postgres

from bench.pg_cluster import Node


def pick_all(table: Table, rng: random.Random) -> int:
    """One pick for every seat (a whole turn); the game's version after it."""
    version = 0
    for player in table.players:
        view = player.client.game(table.game_id)
        version = player.client.move(table.game_id, random_move(view, rng))["version"]
    return version


def copy_files(node: Node, to: str) -> None:
    """The server's files as they are (it is stopped), owners kept (cp -a)."""
    subprocess.run(["cp", "-a", str(node.directory), to], check=True)


def restore_files(node: Node, copy: str) -> None:
    shutil.rmtree(node.directory)
    subprocess.run(["cp", "-a", copy, str(node.directory)], check=True)


def served_again(base: str, path: str) -> requests.Response:
    """The first answer that is not a 503 (a connection to the stopped server is dropped and
    made again); a 500 fails at once."""
    until = time.monotonic() + 20
    while True:
        response = requests.get(base + path, timeout=ANSWER)
        assert response.status_code != 500, response.text
        if response.status_code != 503:
            return response
        assert time.monotonic() < until, response.text


def stream_versions(base: str, path: str, quiet: float = 1.0) -> list[int]:
    """The event ids a stream from the start sends before it goes quiet for ``quiet`` s."""
    ids = []
    with requests.get(f"{base}{path}/stream?after=0", stream=True, timeout=quiet) as response:
        assert response.status_code == 200, response.text
        try:
            for line in response.iter_lines(decode_unicode=True):
                if line.startswith("id: "):
                    ids.append(int(line[4:]))
        except requests.ConnectionError:  # read timed out: quiet
            pass
    return ids


def test_a_restart_onto_an_older_copy_drops_the_caches(tmp_path: Any) -> None:
    rng = random.Random(27)
    with solo_postgres() as node, cardroom_serve(node.url()) as served:
        api = ApiClient(served.url)
        table = Table.open(api, 2)
        held = pick_all(table, rng)  # what the copy will hold
        node.stop()
        copy = str(tmp_path / "copy")
        copy_files(node, copy)
        node.start()
        # Play on: these commits are lost by the restore. Read them all, so they are cached.
        served_again(served.url, table.path)
        lost = pick_all(table, rng)
        lost = pick_all(table, rng)
        assert lost > held
        assert api.game(table.game_id)["version"] == lost
        assert api.events(table.game_id)[-1]["version"] == lost
        assert max(stream_versions(served.url, table.path)) == lost
        node.stop()
        restore_files(node, copy)
        node.start()

        view = served_again(served.url, table.path).json()
        assert view["version"] == held, view  # not `lost`: the database holds `held`
        events = served_again(served.url, f"{table.path}/events").json()["events"]
        assert [event["version"] for event in events] == list(range(1, held + 1))
        assert max(stream_versions(served.url, table.path)) == held
        for player in table.players:
            assert player.client.game(table.game_id)["version"] == held
        # Play goes on from what the database holds.
        assert pick_all(table, rng) > held
        assert "every cache is dropped" in "".join(served.log)
        table.close()
        api.close()
