"""Webhooks delivered by real processes (issue 36): ``cardroom serve`` delivers with no extra
step (as ``make run`` does); a ``cardroom deliver`` killed with SIGKILL between an attempt and
its record loses nothing (the receiver sees every webhook-id; the one in flight comes again,
the same id); two delivering processes never post one message at the same time, and each
game's versions reach the receiver in order."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import own_database
import pytest
from api_client import ApiClient, Player, Table, expect_status, random_move, wait_until
from patience import scaled
from pytest_httpserver import HTTPServer
from serve_support import ROOT, cardroom_serve
from webhook_support import SETTINGS, Received, Receiver, receiving

pytest_plugins = ["api_fixtures"]

database_url = own_database.database_url  # the delivering processes see these endpoints only
pool = own_database.pool
live_server = own_database.live_server
WAIT = scaled(60.0)


@pytest.fixture(scope="module")
def hooks_server() -> Iterator[HTTPServer]:
    yield from receiving()


@pytest.fixture(autouse=True)
def insecure(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in SETTINGS.items():
        monkeypatch.setenv(name, value)


@contextmanager
def delivering(url: str) -> Iterator[subprocess.Popen[str]]:
    """``cardroom deliver`` on the test database until the block ends (or it is killed)."""
    env = {**os.environ, **SETTINGS, "DATABASE_URL": url}
    process = subprocess.Popen(
        [sys.executable, "-m", "service.cli.main", "deliver"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=WAIT)
        assert "Traceback" not in (err or ""), err


def seated_game(api: ApiClient, players: int = 2) -> Table:
    """A started game whose seats are all taken (not yet moved)."""
    game = api.create_game(players)["game_id"]
    table = Table(api, game, {})
    for seat in range(players):
        granted = api.join(game, f"p{seat}{uuid.uuid4().hex[:6]}")
        table.players.append(
            Player(seat, granted["name"], granted["token"], api.clone(token=granted["token"]))
        )
    return table


def register(client: ApiClient, path: str, receiver: Receiver) -> dict[str, Any]:
    response = client.post(path, {"url": receiver.url})
    expect_status(response, 201)
    return dict(response.json())


def play_turns(table: Table, turns: int, rng: random.Random) -> None:
    for _ in range(turns):
        for player in table.players:
            view = player.client.game(table.game_id)
            if view["status"] != "playing":
                return
            player.client.move(table.game_id, random_move(view, rng))


def test_cardroom_serve_delivers_with_no_extra_step(database_url: str, hooks_server: Any) -> None:
    with cardroom_serve(database_url, env=SETTINGS) as served, ApiClient(served.url) as api:
        game = api.create_game(2)["game_id"]
        first = api.join(game, "Una")
        receiver = Receiver(hooks_server)
        register(api.clone(token=first["token"]), f"/games/{game}/webhooks", receiver)
        api.join(game, "Vic")  # the game starts: game.started, then seat 0's turn
        wait_until(lambda: len(receiver.snapshot()) >= 2, WAIT)
    assert [r.type for r in receiver.snapshot()[:2]] == ["game.started", "game.turn"]


def test_a_deliverer_killed_between_attempt_and_record_loses_nothing(
    api: ApiClient, database_url: str, hooks_server: Any
) -> None:
    """The receiver holds the first delivery until the deliverer is killed (SIGKILL): the
    attempt was made, its record never written. A second deliverer posts it again (the same
    webhook-id) once the lease has run out, then the rest."""
    arrived, release = threading.Event(), threading.Event()
    held: list[str] = []

    def hold_the_first(received: Received) -> int:
        if not held:
            held.append(received.id)
            arrived.set()
            release.wait(WAIT)
            return 204
        return 204

    receiver = Receiver(hooks_server, answer=hold_the_first)
    table = seated_game(api)
    register(table.players[0].client, f"/games/{table.game_id}/webhooks", receiver)
    play_turns(table, 3, random.Random(11))
    with delivering(database_url) as first:
        assert arrived.wait(WAIT), "no delivery came"
        first.kill()  # SIGKILL: no handler, no cleanup, the lease stays
        first.wait(WAIT)
    release.set()
    final = table.players[0].client.game(table.game_id)["version"]
    with delivering(database_url):
        wait_until(lambda: _reached(receiver, final), WAIT)
    got = receiver.snapshot()
    ids = [r.id for r in got]
    assert ids.count(held[0]) == 2  # posted again after the kill, the same webhook-id
    versions = [r.data["version"] for r in got if r.id != held[0]]
    assert versions == sorted(versions) and len(set(ids)) == 3  # the 3 turns opened
    assert receiver.overlaps == 0


def test_two_deliverers_never_post_one_message_at_once_and_keep_each_game_in_order(
    api: ApiClient, database_url: str, hooks_server: Any
) -> None:
    """Two ``cardroom deliver`` processes, three games with an endpoint each, a receiver that
    fails a third of the attempts at random: no webhook-id is ever in flight twice, every
    message arrives, and each game's successes come in version order."""
    rng = random.Random(5)
    lock = threading.Lock()

    def flaky(received: Received) -> int:
        with lock:
            return 500 if rng.random() < 0.33 else 200

    tables = [seated_game(api) for _ in range(3)]
    receivers = [Receiver(hooks_server, answer=flaky) for _ in tables]
    for table, receiver in zip(tables, receivers, strict=True):
        register(table.players[0].client, f"/games/{table.game_id}/webhooks", receiver)
    with delivering(database_url), delivering(database_url):
        for table in tables:
            play_turns(table, 4, random.Random(3))
        for table, receiver in zip(tables, receivers, strict=True):
            final = table.players[0].client.game(table.game_id)["version"]
            wait_until(lambda r=receiver, v=final: _reached(r, v), WAIT)
    for receiver in receivers:
        assert receiver.overlaps == 0
        delivered = receiver.delivered()
        versions = [r.data["version"] for r in delivered]
        assert versions == sorted(versions)
        assert len({r.id for r in delivered}) == len({r.id for r in receiver.snapshot()})


def _reached(receiver: Receiver, version: int) -> bool:
    return any(r.data["version"] == version for r in receiver.delivered())
