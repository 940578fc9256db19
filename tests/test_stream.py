"""Live play: the event stream (SSE), ETags and long polls on the view, across server processes.

Streams are read with ``requests`` as they arrive and checked against openapi.yaml once read
(status, headers, and each message's ``data`` against ``EventRecord``). Nothing here sleeps:
every wait is on a condition, an event or a server's answer, with a timeout.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import requests
from api_client import (
    ApiClient,
    LiveServer,
    Player,
    Table,
    expect_problem,
    expect_status,
    play_to_end,
    serve,
    spec_dict,
    validate_exchange,
)
from flask import Flask
from openapi_schema_validator import OAS31Validator
from patience import scaled
from psycopg_pool import ConnectionPool
from serve_support import cardroom_serve
from test_api_no_leaks import HIDDEN_PICK_KEYS, Truth, check_no_secret_hands, check_no_seed

from domain.sushigo.game import CARD_PICKED, ROUND_DEALT
from service.http.app import create_app
from service.store.events import EventStore

pytest_plugins = ["api_fixtures"]

ROOT = Path(__file__).resolve().parent.parent
WAIT = scaled(20.0)  # seconds: the most any wait here may take (a failing test, not a slow one)


# --- reading a stream ---------------------------------------------------------------------------


@dataclass
class Message:
    id: int
    event: str
    data: dict[str, Any]


@dataclass
class Stream:
    """One SSE response, parsed as it arrives."""

    response: requests.Response
    messages: list[Message] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)
    retry: int | None = None
    raw: list[bytes] = field(default_factory=list)

    def __iter__(self) -> Iterator[Message]:
        """Each message as it arrives, until the server ends the stream."""
        fields: dict[str, str] = {}
        buffer = b""
        for chunk in self.response.iter_content(chunk_size=None):
            self.raw.append(chunk)
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                text = line.decode()
                if text.startswith(":"):
                    self.comments.append(text[1:].strip())
                elif text:
                    name, _, value = text.partition(":")
                    fields[name] = value.removeprefix(" ")
                elif "retry" in fields and len(fields) == 1:
                    self.retry = int(fields.pop("retry"))
                elif fields:
                    message = Message(
                        int(fields["id"]), fields["event"], json.loads(fields["data"])
                    )
                    fields = {}
                    self.messages.append(message)
                    yield message

    def check_against_spec(self) -> None:
        """The response as read so far matches openapi.yaml, and so does every message."""
        self.response._content = b"".join(self.raw)
        self.response._content_consumed = True
        validate_exchange(self.response.request, self.response, request_valid=True)
        validator = OAS31Validator(
            {"$ref": "#/components/schemas/EventRecord", "components": spec_dict()["components"]}
        )
        for message in self.messages:
            validator.validate(message.data)
            assert (message.id, message.event) == (message.data["version"], message.data["type"])


@contextmanager
def open_stream(
    base: str, game_id: str, token: str | None = None, last_id: int | None = None, **params: Any
) -> Iterator[Stream]:
    headers = {"Accept": "text/event-stream"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    if last_id is not None:
        headers["Last-Event-ID"] = str(last_id)
    with requests.Session() as session:
        response = session.get(
            f"{base}/games/{game_id}/stream",
            headers=headers,
            params=params,
            stream=True,
            timeout=WAIT,  # between two chunks: a heartbeat comes every 15 s
        )
        try:
            yield Stream(response)
        finally:
            response.close()


class Follower(threading.Thread):
    """Follows a game's stream as an EventSource would: reconnects with ``Last-Event-ID``
    whenever the stream ends (or, with ``drop_every``, after that many messages) until the game
    is over."""

    def __init__(self, base: str, game_id: str, token: str | None = None, drop_every: int = 0):
        super().__init__(name="stream-follower", daemon=True)
        self.base, self.game_id, self.token, self.drop_every = base, game_id, token, drop_every
        self.messages: list[Message] = []
        self.connections = 0
        self.error: BaseException | None = None
        self.done = False
        self._changed = threading.Condition()

    def run(self) -> None:
        last = None
        try:
            while True:
                with open_stream(self.base, self.game_id, self.token, last) as stream:
                    if stream.response.status_code == 204:
                        return
                    expect_status(stream.response, 200)
                    self.connections += 1
                    for message in stream:
                        with self._changed:
                            self.messages.append(message)
                            self._changed.notify_all()
                        last = message.id
                        if message.event == "game_ended":
                            break
                        if self.drop_every and len(stream.messages) == self.drop_every:
                            break  # a client that goes away and comes back
                    stream.check_against_spec()
                if self.messages and self.messages[-1].event == "game_ended":
                    return
        except BaseException as exc:
            self.error = exc
        finally:
            with self._changed:
                self.done = True
                self._changed.notify_all()

    def wait_for(self, version: int) -> list[Message]:
        """Every message so far, once the one with ``version`` has arrived."""
        with self._changed:
            arrived = self._changed.wait_for(
                lambda: self.done or (self.messages and self.messages[-1].id >= version), WAIT
            )
            assert self.error is None, f"the follower failed: {str(self.error)[:1000]}"
            assert arrived and self.messages and self.messages[-1].id >= version, (
                f"version {version} never came: {[m.id for m in self.messages][-5:]}"
            )
            return list(self.messages)

    def finish(self) -> list[Message]:
        self.join(WAIT)
        assert not self.is_alive(), "the stream did not end after the game"
        assert self.error is None, f"the follower failed: {str(self.error)[:1000]}"
        return self.messages


# --- the stream --------------------------------------------------------------------------------


def test_a_stream_delivers_every_event_of_a_game_in_order(api: ApiClient) -> None:
    table = Table.open(api, 2, dummy=True)
    follower = Follower(api.base_url, table.game_id, drop_every=25)
    follower.start()
    try:
        play_to_end(table, random.Random(11))
        messages = follower.finish()
    finally:
        table.close()
    log = api.events(table.game_id, limit=500)
    assert [m.id for m in messages] == [e["version"] for e in log]  # no gap, no duplicate
    assert [m.event for m in messages] == [e["type"] for e in log]
    assert messages[-1].event == "game_ended" and "seed" in messages[-1].data["data"]
    assert follower.connections >= len(log) // 25  # it resumed from the middle, many times
    # A spectator's stream hides what the log hid from a spectator at the time, nothing else.
    for message, event in zip(messages, log, strict=True):
        assert message.data["recorded_at"] == event["recorded_at"]
        if "redacted" not in message.data["data"]:
            assert message.data == event


def test_resuming_from_the_middle_gets_exactly_the_rest(api: ApiClient) -> None:
    table = Table.open(api, 2)
    play_to_end(table, random.Random(12))
    table.close()
    versions = [e["version"] for e in api.events(table.game_id, limit=500)]
    last, middle = versions[-1], versions[len(versions) // 2]
    for resume in ({"last_id": middle}, {"after": middle}, {"last_id": middle, "after": 2}):
        with open_stream(api.base_url, table.game_id, **resume) as stream:
            ids = [m.id for m in stream]  # the server ends it after game_ended
            stream.check_against_spec()
        assert ids == list(range(middle + 1, last + 1)), resume
        assert stream.retry is not None and stream.retry > 0
        assert stream.response.headers["Content-Type"].startswith("text/event-stream")
    # Nothing after the end: 204 tells an EventSource to stop reconnecting.
    done = api.get(f"{table.path}/stream", headers={"Last-Event-ID": str(last)})
    assert done.status_code == 204 and done.content == b""


def test_stream_errors_are_problems(api: ApiClient) -> None:
    table = Table.open(api, 2)
    table.close()
    bad = api.get(f"{table.path}/stream", headers={"Last-Event-ID": "x"}, request_valid=False)
    problem = expect_problem(bad, 400, "invalid_request")
    assert "Last-Event-ID" in problem["errors"]
    expect_problem(
        api.get(f"{table.path}/stream", params={"since": 1}, request_valid=None),
        400,
        "invalid_request",
    )
    expect_problem(
        api.get("/games/3f0b1c9e-0000-4000-8000-000000000000/stream"), 404, "game_not_found"
    )
    unknown = api.get(f"{table.path}/stream", token="not-a-token")
    expect_problem(unknown, 401, "invalid_token")


def test_a_seats_stream_never_shows_another_seats_secrets(
    api: ApiClient, store: EventStore
) -> None:
    """Checked after every pick, once the stream has caught up with it (like test_api_no_leaks,
    but for what the stream sent at the time: a pick sent hidden stays hidden in it)."""
    table = Table.open(api, 2, dummy=True)
    viewer = table.players[1]
    follower = Follower(api.base_url, table.game_id, viewer.token, drop_every=30)
    follower.start()
    hidden_picks = 0

    def check(table: Table, player: Player, body: dict[str, Any], view: dict[str, Any]) -> None:
        nonlocal hidden_picks
        messages = follower.wait_for(view["version"])
        truth = Truth.read(store, table.game_id)
        events = [m.data for m in messages]
        assert [e["version"] for e in events] == list(range(1, len(events) + 1))
        if truth.over:
            return
        check_no_seed(json.dumps(events), truth)
        allowed = set()
        for i, event in enumerate(events):
            data = event["data"]
            if event["type"] == ROUND_DEALT:
                assert data["dummy_pile"] is None
                for seat, hand in enumerate(data["hands"]):
                    assert (hand is None) == (seat != viewer.seat), f"hand {seat} shown"
                allowed.add(f"/{i}/data/hands/{viewer.seat}")
            elif event["type"] == CARD_PICKED and data["seat"] != viewer.seat:
                unrevealed = (data["round"], data["turn"]) == (truth.state.round, truth.state.turn)
                if unrevealed:
                    assert set(data) <= HIDDEN_PICK_KEYS, f"an unrevealed pick is shown: {data}"
                    hidden_picks += 1
        check_no_secret_hands(events, viewer.seat, truth, allowed)

    try:
        play_to_end(table, random.Random(13), after_move=check)
        messages = follower.finish()
    finally:
        table.close()
    assert hidden_picks > 0, "the check saw an unrevealed pick"
    assert messages[-1].event == "game_ended"


def test_a_stream_lives_a_bounded_time_with_heartbeats(
    pool: ConnectionPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A stream lives 80-100 % of STREAM_SECONDS (jittered, service/http/routes/stream.py): pin the
    # jitter at its top so that the lifetime measured is the whole STREAM_SECONDS.
    monkeypatch.setattr(random, "uniform", lambda low, high: high)
    config = {"STREAM_SECONDS": 0.6, "STREAM_HEARTBEAT_SECONDS": 0.1, "STREAM_RETRY_MS": 250}
    app = create_app(pool=pool, config=config)
    try:
        with serve(app) as url, ApiClient(url) as api:
            game = api.create_game(3)  # waiting for its players: nothing more will happen
            started = time.monotonic()
            with open_stream(url, game["game_id"]) as stream:
                ids = [m.id for m in stream]
                stream.check_against_spec()
            took = time.monotonic() - started
    finally:
        app.extensions["cardroom_live"].stop()
    assert ids == [1]  # game_created; then silence until the server ends the stream
    assert 0.6 <= took < 5
    assert stream.retry == 250
    assert stream.comments.count("heartbeat") >= 2


# --- ETag and long polls -------------------------------------------------------------------------


def test_the_view_has_an_etag_per_viewer(api: ApiClient) -> None:
    table = Table.open(api, 2)
    try:
        seat = table.players[0].client
        as_seat = seat.get(table.path)
        as_spectator = api.get(table.path)
        seat_tag, spectator_tag = as_seat.headers["ETag"], as_spectator.headers["ETag"]
        assert seat_tag != spectator_tag and seat_tag.startswith('W/"')
        same = seat.get(table.path, headers={"If-None-Match": seat_tag})
        assert same.status_code == 304 and same.content == b""
        assert same.headers["ETag"] == seat_tag
        assert api.get(table.path, headers={"If-None-Match": spectator_tag}).status_code == 304
        # Another viewer's tag, or a stale one, gets the whole view.
        expect_status(seat.get(table.path, headers={"If-None-Match": spectator_tag}), 200)
        hand = seat.game(table.game_id)["you"]["hand"]
        seat.move(table.game_id, {"cards": hand[:1]})
        changed = seat.get(table.path, headers={"If-None-Match": seat_tag})
        expect_status(changed, 200)
        assert changed.headers["ETag"] != seat_tag
    finally:
        table.close()


def _parked(monkeypatch: pytest.MonkeyPatch, app: Flask) -> threading.Event:
    """Set once a request of the live server waits on the hub."""
    hub = app.extensions["cardroom_live"]
    parked = threading.Event()
    original: Callable[..., bool] = hub.wait

    def wait(*args: Any, **kwargs: Any) -> bool:
        parked.set()
        return original(*args, **kwargs)

    monkeypatch.setattr(hub, "wait", wait)
    return parked


def test_a_long_poll_returns_as_soon_as_another_client_picks(
    api: ApiClient, live_server: LiveServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = Table.open(api, 2)
    try:
        alice, bob = table.players
        version = alice.client.game(table.game_id)["version"]
        parked = _parked(monkeypatch, live_server.app)
        answer: dict[str, Any] = {}

        def poll() -> None:
            with alice.client.clone() as client:
                started = time.monotonic()
                params = {"wait_after": version, "wait_seconds": 25}
                answer["response"] = client.get(table.path, params=params)
                answer["took"] = time.monotonic() - started

        poller = threading.Thread(target=poll)
        poller.start()
        assert parked.wait(WAIT), "the long poll never waited"
        hand = bob.client.game(table.game_id)["you"]["hand"]
        bob.client.move(table.game_id, {"cards": hand[:1]})
        poller.join(WAIT)
        assert not poller.is_alive()
        response = answer["response"]
        expect_status(response, 200)
        assert response.json()["version"] == version + 1
        assert response.json()["seats"][1]["picked"] is True
        assert answer["took"] < 10
    finally:
        table.close()


def test_a_long_poll_answers_at_its_timeout_otherwise(api: ApiClient) -> None:
    table = Table.open(api, 2)
    try:
        view = api.game(table.game_id)
        started = time.monotonic()
        response = api.get(table.path, params={"wait_after": view["version"], "wait_seconds": 0.3})
        took = time.monotonic() - started
        expect_status(response, 200)
        assert response.json() == view and 0.3 <= took < 5
        tagged = api.get(
            table.path,
            params={"wait_after": view["version"], "wait_seconds": 0.2},
            headers={"If-None-Match": response.headers["ETag"]},
        )
        assert tagged.status_code == 304
        # Already past: at once.
        expect_status(api.get(table.path, params={"wait_after": 0, "wait_seconds": 30}), 200)
        too_long = api.get(
            table.path, params={"wait_after": 1, "wait_seconds": 31}, request_valid=False
        )
        expect_problem(too_long, 400, "invalid_request")
        # Without wait_after there is nothing to wait for (generated clients send the rest).
        alone = api.get(table.path, params={"wait_seconds": 30})
        assert alone.status_code == 200 and alone.json() == view
    finally:
        table.close()


# --- two server processes ---------------------------------------------------------------------


@contextmanager
def cardroom_server(database_url: str) -> Iterator[str]:
    """``cardroom serve`` in its own process (one gunicorn worker) on the test database."""
    with cardroom_serve(database_url) as served:
        yield served.url


def test_a_pick_through_one_server_reaches_a_stream_of_another(database_url: str) -> None:
    with cardroom_server(database_url) as one, cardroom_server(database_url) as other:
        with ApiClient(one) as api:
            table = Table.open(api, 2)
            try:
                version = api.game(table.game_id)["version"]
                with open_stream(other, table.game_id, after=version) as stream:
                    expect_status(stream.response, 200)
                    alice = table.players[0]
                    hand = alice.client.game(table.game_id)["you"]["hand"]
                    started = time.monotonic()
                    alice.client.move(table.game_id, {"cards": hand[:1]})
                    message = next(iter(stream))
                    took = time.monotonic() - started
                    stream.check_against_spec()
            finally:
                table.close()
        assert (message.id, message.event) == (version + 1, CARD_PICKED)
        assert message.data["data"]["seat"] == 0
        assert set(message.data["data"]) <= HIDDEN_PICK_KEYS  # hidden from a spectator
        assert took < 10  # woken by the hub, not found at the next heartbeat (15 s)
