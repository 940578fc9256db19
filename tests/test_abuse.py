"""Abuse limits (429 rate_limited on creating and joining games), CORS for an allow-list of
origins, and a server whose logs never hold a seat's bearer token.

The cap on waiting games is counted in the database, per address, and every test's address is
127.0.0.1: the games other tests leave waiting would count against it (test_private_games.py,
test_api_leaving.py, ... leave some). So the module runs on a database of its own
(``own_database``), and each app with limits on has a seed key of its own
(``own_app``), so that its count holds only the seats taken through it, whatever ran before.
"""

from __future__ import annotations

import os
import random
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import own_database
import pytest
import requests
from api_client import (
    ApiClient,
    LiveServer,
    Table,
    expect_problem,
    expect_status,
    play_to_end,
    serving_app,
)
from limits import parse
from limits.storage import MemoryStorage
from limits.strategies import FixedWindowRateLimiter
from patience import ANSWER
from psycopg_pool import ConnectionPool

from service import keys
from service.http import abuse
from service.http.app import create_app
from service.http.limit_storage import SweptMemoryStorage
from service.store.db import ROOT

pytest_plugins = ["api_fixtures"]

ALLOWED = "https://play.example.com"

# A database of the module's own (see the docstring and own_database.py).
database_url = own_database.database_url
pool = own_database.pool
live_server = own_database.live_server


@contextmanager
def own_app(pool: ConnectionPool, config: dict[str, Any]) -> Iterator[str]:
    """``create_app`` with ``config``, served (its URL), on the run's keys rotated to a fresh
    pair (as ``cardroom keys --rotate`` does): it opens the seeds other apps sealed (so it may
    deal their games), and it counts seats afresh (``Keyring.client_hash`` is keyed by the active
    seed key), so not those other apps took from the same address (127.0.0.1)."""
    app = create_app(pool=pool, config=config)
    rotated = [*keys.read_document()["keys"], *keys.new_pair()]
    app.extensions["cardroom"].keys = keys.Keyring.from_jwks({"keys": rotated})
    with serving_app(app) as server:
        yield server.url


# --- rate limits ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def limited(pool: ConnectionPool) -> Iterator[str]:
    config = {
        "RATELIMIT_ENABLED": True,
        "CARDROOM_RATE_LIMIT_CREATE": "3/minute",
        "CARDROOM_RATE_LIMIT_JOIN": "2/minute",
    }
    with own_app(pool, config) as url:
        yield url


def test_creating_games_is_rate_limited(limited: str) -> None:
    with ApiClient(limited) as api:
        for _ in range(3):
            api.create_game(2)
        response = api.post("/games", {"game": "sushi-go", "players": 2})
        problem = expect_problem(response, 429, "rate_limited")
        assert 1 <= int(response.headers["Retry-After"]) <= 61, response.headers
        assert "3 per 1 minute" in problem["detail"]
        expect_status(api.get("/games"), 200)  # reads are not limited


def test_creating_accounts_is_rate_limited_apart_from_games(pool: ConnectionPool) -> None:
    """``POST /accounts`` per address (issue 35), counted apart from ``POST /games``."""
    config = {"RATELIMIT_ENABLED": True, "CARDROOM_RATE_LIMIT_ACCOUNTS": "2/hour"}
    with own_app(pool, config) as url, ApiClient(url) as api:
        for _ in range(2):
            name = f"acct{uuid.uuid4().hex[:12]}"
            expect_status(api.post("/accounts", {"name": name}, token=None), 201)
        refused = api.post("/accounts", {"name": f"acct{uuid.uuid4().hex[:12]}"}, token=None)
        problem = expect_problem(refused, 429, "rate_limited")
        assert "2 per 1 hour" in problem["detail"]
        api.create_game(2)  # games are counted apart


def test_joining_is_rate_limited_apart_from_creating(limited: str, live_server: LiveServer) -> None:
    with ApiClient(live_server.url) as unlimited, ApiClient(limited) as api:
        game = unlimited.create_game(5)
        api.join(game["game_id"], "one")
        api.join(game["game_id"], "two")
        response = api.post(f"/games/{game['game_id']}/players", {"name": "three"})
        expect_problem(response, 429, "rate_limited")
        assert int(response.headers["Retry-After"]) >= 1
        assert unlimited.game(game["game_id"])["version"] == 3  # created, two seats


@pytest.mark.parametrize("game", ["sushi-go", "sequence"])
def test_joins_into_one_game_are_limited_apart_from_other_games(
    pool: ConnectionPool, game: str
) -> None:
    """Issue 20: per address *and* game, besides per address across games."""
    config = {
        "RATELIMIT_ENABLED": True,
        "CARDROOM_RATE_LIMIT_JOIN": "1000/minute",
        "CARDROOM_RATE_LIMIT_JOIN_GAME": "2/minute",
    }
    with own_app(pool, config) as url, ApiClient(url) as api:
        first, second = (api.create_game(4, game=game) for _ in range(2))
        api.join(first["game_id"], "one")
        api.join(first["game_id"], "two")
        response = api.post(f"/games/{first['game_id']}/players", {"name": "three"})
        problem = expect_problem(response, 429, "rate_limited")
        assert "2 per 1 minute" in problem["detail"]
        assert int(response.headers["Retry-After"]) >= 1
        api.join(second["game_id"], "three")  # another game: its own count
        assert api.game(first["game_id"])["version"] == 3


@pytest.fixture
def capped(pool: ConnectionPool) -> Iterator[str]:
    """An app whose addresses may hold seats in 2 waiting games (and counts only its own)."""
    config = {"RATELIMIT_ENABLED": True, "CARDROOM_WAITING_GAMES_PER_ADDRESS": 2}
    with own_app(pool, config) as url:
        yield url


@pytest.mark.parametrize("game", ["sushi-go", "sequence"])
def test_an_address_holds_seats_in_few_waiting_games(capped: str, game: str) -> None:
    with ApiClient(capped) as api:
        games = [api.create_game(2, game=game)["game_id"] for _ in range(3)]
        api.join(games[0], "one")
        api.join(games[1], "two")
        response = api.post(f"/games/{games[2]}/players", {"name": "three"})
        problem = expect_problem(response, 409, "too_many_waiting_games")
        assert "2 games" in problem["detail"]
        assert api.game(games[2])["version"] == 1  # nothing recorded
        api.join(games[0], "four")  # a game it holds a seat in already: the game starts
        assert api.game(games[0])["status"] == "playing"
        api.join(games[2], "three")  # one waiting game fewer: room for another


@pytest.mark.parametrize("game", ["sushi-go", "sequence"])
def test_a_seat_left_no_longer_counts_against_the_cap(capped: str, game: str) -> None:
    """Issue 20: a seat given up (``seat_left``) is not held; a cancelled game waits no more."""
    with ApiClient(capped) as api:
        games = [api.create_game(2, game=game)["game_id"] for _ in range(3)]
        first = api.join(games[0], "one")
        api.join(games[1], "two")
        expect_problem(
            api.post(f"/games/{games[2]}/players", {"name": "three"}), 409, "too_many_waiting_games"
        )
        left = api.post(f"/games/{games[0]}/leave", token=first["token"])
        assert left.status_code == 200, left.text
        seat = api.join(games[2], "three")  # room again: the seat left is not held
        assert seat["seat"] == 0


def test_an_own_app_counts_none_of_the_seats_taken_through_other_apps(
    pool: ConnectionPool, live_server: LiveServer
) -> None:
    """What keeps these tests apart from the games others leave waiting: seats the address took
    through a server on the run's keys (as every other test's is) fill the cap of an app on the
    same keys, not an ``own_app``'s."""
    with ApiClient(live_server.url) as other:
        for _ in range(2):
            other.join(other.create_game(2)["game_id"], "elsewhere")
    config = {"RATELIMIT_ENABLED": True, "CARDROOM_WAITING_GAMES_PER_ADDRESS": 2}
    with (
        serving_app(create_app(pool=pool, config=config)) as same_keys,
        ApiClient(same_keys.url) as api,
    ):
        game_id = api.create_game(2)["game_id"]
        response = api.post(f"/games/{game_id}/players", {"name": "one"})
        expect_problem(response, 409, "too_many_waiting_games")
    with own_app(pool, config) as url, ApiClient(url) as api:
        seats = [api.join(api.create_game(2)["game_id"], name)["seat"] for name in ("one", "two")]
        assert seats == [0, 0]  # both joins taken (201): the cap counts none of the others


def test_the_waiting_games_cap_is_off_with_the_rate_limits(pool: ConnectionPool) -> None:
    config = {"RATELIMIT_ENABLED": False, "CARDROOM_WAITING_GAMES_PER_ADDRESS": 1}
    with own_app(pool, config) as url, ApiClient(url) as api:
        waiting = [api.create_game(2)["game_id"] for _ in range(3)]
        seats = [api.join(game_id, "one")["seat"] for game_id in waiting]  # 201 each, no 409
        assert seats == [0, 0, 0]
        assert {api.game(game_id)["status"] for game_id in waiting} == {"waiting"}


def test_moves_are_rate_limited_per_token(pool: ConnectionPool) -> None:
    """A flood of moves from one token is cut off; another seat, from the same address, plays
    on (issue 12)."""
    config = {"RATELIMIT_ENABLED": True, "CARDROOM_RATE_LIMIT_MOVES": "3/minute"}
    with own_app(pool, config) as url, ApiClient(url) as api:
        table = Table.open(api, 2)
        flooder, other = table.players
        body = {"round": 1, "turn": 1, "cards": ["tempura"]}
        for _ in range(3):
            answer = flooder.client.post(f"{table.path}/moves", body, request_valid=None)
            assert answer.status_code in (200, 409, 422), answer.text
        flooded = flooder.client.post(f"{table.path}/moves", body, request_valid=None)
        expect_problem(flooded, 429, "rate_limited")
        assert int(flooded.headers["Retry-After"]) >= 1
        hand = other.client.game(table.game_id)["you"]["hand"]
        expect_status(other.client.post(f"{table.path}/moves", {**body, "cards": hand[:1]}), 200)
        table.close()


def test_a_rate_limited_answer_is_not_stored_for_retries(pool: ConnectionPool) -> None:
    """429 asks to be retried: a retry with the same Idempotency-Key runs once the limit allows
    (the 429 was not stored, service/http/idempotency.py), and is stored then."""
    config = {"RATELIMIT_ENABLED": True, "CARDROOM_RATE_LIMIT_CREATE": "2/second"}
    body = {"game": "sushi-go", "players": 2}
    key = {"Idempotency-Key": str(uuid.uuid4())}
    with own_app(pool, config) as url, ApiClient(url) as api:
        while True:  # use up the second's allowance (the window may turn meanwhile)
            response = api.post("/games", body, headers=key)
            if response.status_code == 429:
                break
            expect_status(response, 201)
            key = {"Idempotency-Key": str(uuid.uuid4())}
        expect_problem(response, 429, "rate_limited")
        time.sleep(int(response.headers["Retry-After"]))
        retried = api.post("/games", body, headers=key)
        expect_status(retried, 201)
        assert "Idempotent-Replayed" not in retried.headers
        replayed = api.post("/games", body, headers=key)
        assert replayed.headers["Idempotent-Replayed"] == "true"
        assert replayed.json()["game_id"] == retried.json()["game_id"]


def test_limits_are_on_by_default_with_generous_values(
    pool: ConnectionPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in (
        "CARDROOM_RATE_LIMITS",
        "CARDROOM_RATE_LIMIT_CREATE",
        "CARDROOM_RATE_LIMIT_JOIN",
        "CARDROOM_RATE_LIMIT_JOIN_GAME",
        "CARDROOM_WAITING_GAMES_PER_ADDRESS",
    ):
        monkeypatch.delenv(name, raising=False)
    app = create_app(pool=pool)
    assert app.config["RATELIMIT_ENABLED"] is True
    assert app.config["CARDROOM_RATE_LIMIT_CREATE"] == abuse.DEFAULT_CREATE_LIMIT == "30/minute"
    assert app.config["CARDROOM_RATE_LIMIT_JOIN"] == abuse.DEFAULT_JOIN_LIMIT == "60/minute"
    assert app.config["CARDROOM_RATE_LIMIT_JOIN_GAME"] == abuse.DEFAULT_JOIN_GAME_LIMIT
    assert app.config["CARDROOM_WAITING_GAMES_PER_ADDRESS"] == 10
    monkeypatch.setenv("CARDROOM_RATE_LIMITS", "off")
    assert create_app(pool=pool).config["RATELIMIT_ENABLED"] is False


# --- where the limits count ----------------------------------------------------------------------


def test_limited_hits_start_no_timer_threads() -> None:
    """limits' MemoryStorage starts a timer thread on a hit once its last one has ended (about
    0.23 ms of CPU each under gevent); the app's storage sweeps inline instead
    (service/http/limit_storage.py). The same steps on MemoryStorage show the test can fail."""
    item = parse("5/second")
    for storage_class, starts_timers in ((MemoryStorage, True), (SweptMemoryStorage, False)):
        storage = storage_class()
        storage.timer.join()  # the one each storage starts when made ends after 10 ms
        first = storage.timer
        assert FixedWindowRateLimiter(storage).hit(item, "address")
        assert (storage.timer is not first) is starts_timers, storage_class


def test_the_swept_storage_still_drops_expired_counters() -> None:
    storage = SweptMemoryStorage()
    storage.incr("old", expiry=60)
    storage.expirations["old"] = time.time() - 1  # its window is over; nobody reads it again
    storage._next_sweep = 0.0  # a second has passed since the last sweep
    storage.incr("new", expiry=60)
    assert "old" not in storage.storage and storage.get("new") == 1


def test_the_app_counts_its_limits_in_the_swept_storage(pool: ConnectionPool) -> None:
    app = create_app(pool=pool, config={"RATELIMIT_ENABLED": True})
    assert isinstance(app.extensions["cardroom_limiter"].storage, SweptMemoryStorage)


def test_the_limiter_adds_no_work_to_every_request(pool: ConnectionPool) -> None:
    """Only the limited routes' wrappers count (the limits above pass through them): none of
    Flask-Limiter's own hooks runs on each request (service/http/abuse.py, _without_hooks)."""
    app = create_app(pool=pool, config={"RATELIMIT_ENABLED": True})
    limiter = app.extensions["cardroom_limiter"]
    hooks = [
        hook
        for table in (app.before_request_funcs, app.after_request_funcs, app.teardown_request_funcs)
        for functions in table.values()
        for hook in functions
    ]
    assert hooks and not [hook for hook in hooks if abuse._of(hook, limiter)]
    assert limiter in app.extensions["limiter"]  # still the app's: its wrappers count the limits


# --- CORS ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cors(pool: ConnectionPool) -> Iterator[str]:
    config = {"CARDROOM_CORS_ORIGINS": f"{ALLOWED}, https://bots.example.org"}
    with serving_app(create_app(pool=pool, config=config)) as server:
        yield server.url


def test_cors_answers_allowed_origins_only(cors: str) -> None:
    with ApiClient(cors) as api:
        response = api.get("/games", headers={"Origin": ALLOWED})
        assert response.headers["Access-Control-Allow-Origin"] == ALLOWED
        assert "Location" in response.headers["Access-Control-Expose-Headers"]
        assert "Access-Control-Allow-Credentials" not in response.headers
        created = api.post(
            "/games", {"game": "sushi-go", "players": 2}, headers={"Origin": ALLOWED}
        )
        assert created.headers["Access-Control-Allow-Origin"] == ALLOWED
        # A page of another origin may read the receipt header too (tests/test_receipts.py).
        assert "Cardroom-Receipt" in created.headers["Access-Control-Expose-Headers"]
        for origin in ("https://evil.example.com", "null", "https://play.example.com.evil.net"):
            response = api.get("/games", headers={"Origin": origin})
            assert "Access-Control-Allow-Origin" not in response.headers, origin


def test_cors_preflight_for_a_move(cors: str) -> None:
    # A preflight (OPTIONS) is CORS machinery, not an operation of openapi.yaml: plain requests.
    path = "/games/00000000-0000-4000-8000-000000000000/moves"
    response = requests.options(
        cors + path,
        headers={
            "Origin": ALLOWED,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type, idempotency-key",
        },
        timeout=ANSWER,
    )
    assert response.status_code == 200
    assert response.headers["Access-Control-Allow-Origin"] == ALLOWED
    allowed = response.headers["Access-Control-Allow-Headers"].lower()
    assert {"authorization", "content-type", "idempotency-key"} <= {
        h.strip() for h in allowed.split(",")
    }
    assert "POST" in response.headers["Access-Control-Allow-Methods"]
    refused = requests.options(
        cors + path,
        headers={"Origin": "https://evil.example.com", "Access-Control-Request-Method": "POST"},
        timeout=ANSWER,
    )
    assert "Access-Control-Allow-Origin" not in refused.headers


def test_no_cors_headers_by_default(api: ApiClient) -> None:
    response = api.get("/games", headers={"Origin": ALLOWED})
    assert not [h for h in response.headers if h.lower().startswith("access-control-")]


# --- tokens never reach the logs -----------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_server_logs_never_hold_a_token(database_url: str, tmp_path: Path) -> None:
    """``cardroom serve`` with its access log and app logs in a file: a whole game, and errors
    made with tokens (a pick after the end, another game's token), leave no token in it."""
    log_path = tmp_path / "server.log"
    port = _free_port()
    command = [sys.executable, "-m", "service.cli.main", "serve", "--port", str(port)]
    command += ["--workers", "1", "--threads", "4"]
    env = {**os.environ, "DATABASE_URL": database_url}
    with log_path.open("w") as log:
        server = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=log)
    base = f"http://127.0.0.1:{port}"
    tokens: list[str] = []
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if requests.get(f"{base}/healthz", timeout=ANSWER).status_code == 200:
                    break
            except requests.ConnectionError:
                pass
            assert time.monotonic() < deadline, log_path.read_text()
            assert server.poll() is None, log_path.read_text()
            time.sleep(0.1)
        with ApiClient(base) as api:
            table = Table.open(api, 2)
            other = Table.open(api, 2)
            tokens = [p.token for p in table.players + other.players]
            play_to_end(table, random.Random(5))
            player = table.players[0]
            expect_problem(
                player.client.post(f"{table.path}/moves", {"cards": ["tempura"]}), 409, "game_over"
            )
            expect_problem(api.get(other.path, token=tokens[0]), 403, "not_your_game")
            expect_problem(api.get(table.path, token=tokens[0] + "x"), 401, "invalid_token")
            table.close()
            other.close()
    finally:
        server.terminate()
        server.wait(30)
    text = log_path.read_text()
    assert f'"POST /games/{table.game_id}/moves HTTP/1.1" 200' in text  # the access log is there
    for token in tokens:
        assert token not in text
        assert token[:16] not in text
