"""An HTTP client for the API that checks every request and response against openapi.yaml.

``ApiClient`` wraps a ``requests.Session``. Each call:

- validates the request against the spec with openapi-core: by default it must be valid (so the
  tests exercise the API only as the spec documents it); a test that sends a bad request on
  purpose says ``request_valid=False`` and the spec must then refuse it too (so the spec is as
  strict as the server), or ``None`` when the spec cannot tell (a well-formed request the rules
  refuse, e.g. a card not in hand);
- validates the response against the spec (status code documented, headers, body schema),
  always. Responses to paths or methods the spec does not have (``404 not_found``,
  ``405 method_not_allowed``) are checked against the ``RoutingProblem`` schema.

Any mismatch fails the test with every error openapi-core reports.

The module also has the random legal client used by the end-to-end tests (``random_move``,
``Table``, ``play_to_end``).
"""

from __future__ import annotations

import hashlib
import random
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import requests
import yaml
from flask import Flask
from openapi_core import Config, OpenAPI
from openapi_core.contrib.requests import RequestsOpenAPIRequest, RequestsOpenAPIResponse
from openapi_core.deserializing.media_types.util import json_loads
from openapi_core.templating.paths.exceptions import PathError
from openapi_schema_validator import OAS31Validator
from patience import ANSWER, scaled
from psycopg_pool import ConnectionPool
from werkzeug.serving import WSGIRequestHandler, make_server

from service.http.app import create_app

SPEC_PATH = Path(__file__).resolve().parent.parent / "openapi.yaml"
PROBLEM_JSON = "application/problem+json"
NIGIRI = ("egg_nigiri", "salmon_nigiri", "squid_nigiri")

_UNSET: Any = object()


class SpecMismatch(AssertionError):
    """A request or response does not match openapi.yaml."""


@cache
def spec_dict() -> dict[str, Any]:
    return yaml.safe_load(SPEC_PATH.read_text())


@cache
def openapi() -> OpenAPI:
    config = Config(
        extra_media_type_deserializers={
            PROBLEM_JSON: json_loads,
            "application/yaml": yaml.safe_load,  # a mapping, as schemathesis reads it too
        }
    )
    return OpenAPI.from_file_path(str(SPEC_PATH), config=config)


@cache
def _routing_problem_validator() -> OAS31Validator:
    root = {
        "$ref": "#/components/schemas/RoutingProblem",
        "components": spec_dict()["components"],
    }
    return OAS31Validator(root)


def _describe(error: BaseException) -> str:
    """An openapi-core error with its causes and JSON Schema errors, for a readable failure."""
    lines = [f"{type(error).__name__}: {error}"]
    seen = {id(error)}
    current: BaseException | None = error
    while current is not None:
        for schema_error in getattr(current, "schema_errors", ()) or ():
            path = "/".join(str(p) for p in schema_error.absolute_path)
            lines.append(f"  at /{path}: {schema_error.message}")
        current = current.__cause__ or current.__context__
        if current is None or id(current) in seen:
            break
        seen.add(id(current))
        lines.append(f"  caused by {type(current).__name__}: {current}")
    return "\n".join(lines)


def validate_exchange(
    prepared: requests.PreparedRequest,
    response: requests.Response,
    request_valid: bool | None,
) -> None:
    """Check ``prepared`` (as ``request_valid`` says) and ``response`` against the spec."""
    spec = openapi()
    oa_request = RequestsOpenAPIRequest(prepared)
    where = f"{prepared.method} {prepared.path_url}"
    if request_valid is not None:
        try:
            request_errors = list(spec.iter_request_errors(oa_request))
        except Exception as exc:  # e.g. RecursionError parsing a deeply nested body
            request_errors = [exc]
        if request_valid and request_errors:
            raise SpecMismatch(
                f"request {where} does not match openapi.yaml:\n"
                + "\n".join(_describe(e) for e in request_errors)
            )
        if not request_valid and not request_errors:
            raise SpecMismatch(
                f"request {where} was sent as invalid, but openapi.yaml accepts it "
                f"(the server answered {response.status_code}): the spec is laxer than the server"
            )
    if "" in oa_request.path.split("/")[1:]:
        # openapi-core matches /games/ as /games/{game_id} with an empty id; no route does.
        _validate_routing_problem(where, response)
        return
    errors = list(spec.iter_response_errors(oa_request, RequestsOpenAPIResponse(response)))
    if errors and all(isinstance(e, PathError) for e in errors):
        _validate_routing_problem(where, response)
        return
    if errors:
        raise SpecMismatch(
            f"response {response.status_code} to {where} does not match openapi.yaml:\n"
            + "\n".join(_describe(e) for e in errors)
            + f"\nbody: {response.text[:2000]}"
        )


def _validate_routing_problem(where: str, response: requests.Response) -> None:
    if response.status_code not in (404, 405):
        raise SpecMismatch(
            f"{where} is not in openapi.yaml, yet it answered {response.status_code}"
        )
    if response.headers.get("Content-Type") != PROBLEM_JSON:
        raise SpecMismatch(f"{where}: a routing error must be problem+json: {response.headers}")
    errors = list(_routing_problem_validator().iter_errors(response.json()))
    if errors:
        raise SpecMismatch(
            f"{where}: not a RoutingProblem: " + "; ".join(e.message for e in errors)
        )


# --- a live server -----------------------------------------------------------------------------


class _QuietHandler(WSGIRequestHandler):
    """No access log line per request (errors are still logged)."""

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        pass


@contextmanager
def serve(app: Flask) -> Iterator[str]:
    """Serve ``app`` over HTTP on 127.0.0.1 and a free port (werkzeug, a thread per request) in a
    background thread; yields its base URL and shuts the server down on exit."""
    server = make_server("127.0.0.1", 0, app, threaded=True, request_handler=_QuietHandler)
    thread = threading.Thread(target=server.serve_forever, name="cardroom-live-server", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(timeout=10)
        server.server_close()


@dataclass(frozen=True)
class LiveServer:
    url: str
    app: Flask


@contextmanager
def serving(pool: ConnectionPool) -> Iterator[LiveServer]:
    """The app on ``pool``, served until the block ends; its hub stops with it (before the
    database may be dropped: the hub would keep reconnecting to it)."""
    with serving_app(create_app(pool=pool)) as server:
        yield server


@contextmanager
def serving_app(app: Flask) -> Iterator[LiveServer]:
    """``app`` served until the block ends, its hub stopped with it (as ``serving``)."""
    try:
        with serve(app) as url:
            yield LiveServer(url, app)
    finally:
        app.extensions["cardroom_live"].stop()


# --- the client -------------------------------------------------------------------------------


class ApiClient:
    """A spec-checking client for one base URL. Not thread-safe: one per thread (``clone``)."""

    def __init__(self, base_url: str, token: str | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.session = requests.Session()

    def clone(self, token: str | None = _UNSET) -> ApiClient:
        return ApiClient(self.base_url, self.token if token is _UNSET else token)

    def close(self) -> None:
        self.session.close()

    def __enter__(self) -> ApiClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = _UNSET,
        data: bytes | str | None = None,
        params: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        token: str | None = _UNSET,
        request_valid: bool | None = True,
    ) -> requests.Response:
        """Send one request; validate it (see module doc) and its response against the spec.

        ``token``: a bearer token for this call (default: the client's; None: no header).
        ``json``: a body sent as JSON; ``data``: raw bytes with the caller's ``headers``.
        """
        all_headers = {"Accept": "application/json, application/problem+json"}
        token = self.token if token is _UNSET else token
        if token is not None:
            all_headers["Authorization"] = f"Bearer {token}"
        all_headers.update(headers or {})
        request = requests.Request(
            method,
            self.base_url + path,
            headers=all_headers,
            params=params,
            json=None if json is _UNSET else json,
            data=data,
        )
        prepared = self.session.prepare_request(request)
        response = self.session.send(prepared, timeout=ANSWER)
        validate_exchange(prepared, response, request_valid)
        return response

    def get(self, path: str, **kwargs: Any) -> requests.Response:
        return self.request("GET", path, **kwargs)

    def post(
        self, path: str, json: Any = _UNSET, *, name_turn: bool = True, **kwargs: Any
    ) -> requests.Response:
        """POST ``json``; a move that names no turn is sent for the game's current one (read
        just before), unless ``name_turn`` is False (tests of the turn check itself)."""
        if name_turn and path.endswith("/moves") and isinstance(json, dict):
            json = self.with_turn(path.removesuffix("/moves"), json)
        return self.request("POST", path, json=json, **kwargs)

    def with_turn(self, game_path: str, body: dict[str, Any]) -> dict:
        """``body`` with the turn fields it lacks, from the game's public view now."""
        response = self.get(game_path, token=None, request_valid=None)
        if response.status_code != 200:
            return body  # no game to name a turn of: the test is about that
        return {**current_turn(response.json()), **body}

    # --- the API's operations, expecting success --------------------------------------------

    def create_game(self, players: int, game: str = "sushi-go", **rules: Any) -> dict[str, Any]:
        body: dict[str, Any] = {"game": game, "players": players}
        if rules:
            body["rules"] = rules
        response = self.post("/games", body)
        expect_status(response, 201)
        view = response.json()
        assert response.headers["Location"] == f"/games/{view['game_id']}"
        return view

    def join(self, game_id: str, name: str) -> dict[str, Any]:
        response = self.post(f"/games/{game_id}/players", {"name": name})
        expect_status(response, 201)
        assert response.headers["Location"] == f"/games/{game_id}"
        return response.json()

    def game(self, game_id: str, token: str | None = _UNSET) -> dict[str, Any]:
        response = self.get(f"/games/{game_id}", token=token)
        expect_status(response, 200)
        return response.json()

    def move(self, game_id: str, body: dict[str, Any], token: str | None = _UNSET) -> dict:
        response = self.post(f"/games/{game_id}/moves", body, token=token)
        expect_status(response, 200)
        return response.json()

    def scores(self, game_id: str, token: str | None = _UNSET) -> dict[str, Any]:
        response = self.get(f"/games/{game_id}/scores", token=token)
        expect_status(response, 200)
        return response.json()

    def event_pages(
        self, game_id: str, *, limit: int | None = None, token: str | None = _UNSET
    ) -> Iterator[dict[str, Any]]:
        """Every page of the game's event log, following ``next_after``."""
        after = 0
        while True:
            params: dict[str, Any] = {"after": after}
            if limit is not None:
                params["limit"] = limit
            response = self.get(f"/games/{game_id}/events", params=params, token=token)
            expect_status(response, 200)
            page = response.json()
            yield page
            if page["next_after"] is None:
                return
            assert page["next_after"] == page["events"][-1]["version"] > after
            after = page["next_after"]

    def events(
        self, game_id: str, *, limit: int | None = None, token: str | None = _UNSET
    ) -> list[dict[str, Any]]:
        """The whole event log, checked to be gapless and in version order."""
        events = [
            e
            for page in self.event_pages(game_id, limit=limit, token=token)
            for e in page["events"]
        ]
        assert [e["version"] for e in events] == list(range(1, len(events) + 1))
        return events


def expect_status(response: requests.Response, status: int) -> None:
    assert response.status_code == status, (
        f"expected {status}, got {response.status_code} for {response.request.method} "
        f"{response.request.path_url}: {response.text[:1000]}"
    )


def expect_problem(response: requests.Response, status: int, code: str) -> dict[str, Any]:
    """``response`` is an RFC 9457 problem with ``status`` and ``code``; returns its body."""
    expect_status(response, status)
    assert response.headers["Content-Type"] == PROBLEM_JSON, response.headers
    body = response.json()
    assert body["code"] == code, body
    assert body["status"] == status
    assert body["type"] == f"urn:cardroom:problem:{code}"
    assert body["instance"] == urlsplit(response.request.url).path
    assert body["detail"]
    return body


# --- random legal play ------------------------------------------------------------------------


def current_turn(view: dict[str, Any]) -> dict[str, int]:
    """The turn fields a move for ``view``'s turn names: Sushi Go!'s round and turn, Sequence's
    turn."""
    fields = ("round", "turn") if view["game"] == "sushi-go" else ("turn",)
    return {name: view[name] for name in fields}


def random_move(view: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """A legal pick for the viewing seat, from its view alone: one card, sometimes two with
    chopsticks (S6), the dummy's card when it controls the dummy (S17), sometimes use_wasabi in
    zoch (S9), sometimes its own seat number."""
    you = view["you"]
    hand = list(you["hand"])
    controls = you["controls_dummy"]
    n = 1
    if you["chopsticks_usable"] and rng.random() < 0.5:
        n = 2
    chosen = rng.sample(hand, n + controls)
    body: dict[str, Any] = {**current_turn(view), "cards": chosen[:n]}
    if controls:
        body["dummy_card"] = chosen[n]
    zoch = view["rules"]["edition"] == "zoch"
    nigiri = any(card in NIGIRI for card in body["cards"])
    if zoch and rng.random() < (0.7 if nigiri else 0.15):
        # S9: true only for a nigiri (the service refuses it for another card).
        body["use_wasabi"] = [card in NIGIRI and rng.random() < 0.6 for card in body["cards"]]
    if rng.random() < 0.2:
        body["seat"] = you["seat"]
    return body


@dataclass
class Player:
    seat: int
    name: str
    token: str
    client: ApiClient


@dataclass
class Table:
    """A game over HTTP with every seat taken; one client per seat (each with its token)."""

    api: ApiClient  # the spectator's client
    game_id: str
    rules: dict[str, Any]
    players: list[Player] = field(default_factory=list)

    @classmethod
    def open(cls, api: ApiClient, players: int, **rules: Any) -> Table:
        view = api.create_game(players, **rules)
        assert view["status"] == "waiting" and view["version"] == 1
        table = cls(api, view["game_id"], view["rules"])
        for seat in range(players):
            granted = api.join(table.game_id, f"player {seat} {rng_name()}")
            assert granted["seat"] == seat
            assert granted["started"] == (seat == players - 1)
            client = api.clone(token=granted["token"])
            table.players.append(Player(seat, granted["name"], granted["token"], client))
        return table

    def close(self) -> None:
        for player in self.players:
            player.client.close()

    @property
    def path(self) -> str:
        return f"/games/{self.game_id}"


_names = random.Random()
_names_lock = threading.Lock()


def rng_name() -> str:
    with _names_lock:
        return f"{_names.randrange(16**6):06x}"


MoveHook = Callable[[Table, Player, dict[str, Any], dict[str, Any]], None]


def play_to_end(table: Table, rng: random.Random, after_move: MoveHook | None = None) -> int:
    """Play random legal picks for every seat until the game is over; return the number of
    picks sent. ``after_move(table, player, body, view)`` runs after every successful pick."""
    picks = 0
    while True:
        progressed = False
        for player in rng.sample(table.players, len(table.players)):
            view = player.client.game(table.game_id)
            if view["status"] == "over":
                return picks
            assert view["status"] == "playing"
            if view["you"]["pick"] is not None:
                continue  # already picked this turn, or picked automatically (S5)
            body = random_move(view, rng)
            after = player.client.move(table.game_id, body)
            picks += 1
            progressed = True
            assert after["you"]["seat"] == player.seat
            if after_move is not None:
                after_move(table, player, body, after)
        assert progressed, "no seat could pick, yet the game is not over"


def seed_matches(seed_hex: str, commitment: str) -> bool:
    return hashlib.sha256(bytes.fromhex(seed_hex)).hexdigest() == commitment


def metric_sample(text: str, name: str, **labels: str) -> float:
    """The value of one sample of Prometheus text (0 if absent; summed over other labels)."""
    total = 0.0
    for line in text.splitlines():
        if not line.startswith(name):
            continue
        match = re.fullmatch(r"([a-z_:]+)(?:\{(.*)\})? (\S+)", line)
        if not match or match[1] != name:
            continue
        have = dict(re.findall(r'(\w+)="([^"]*)"', match[2] or ""))
        if all(have.get(key) == value for key, value in labels.items()):
            total += float(match[3])
    return total


def wait_until(condition: Callable[[], bool], seconds: float = 5.0) -> None:
    """Poll ``condition`` every 5 ms until it holds; fail after ``seconds`` on an idle
    machine, scaled by its load (a bound, never reached when all goes well: patience.py)."""
    done = threading.Event()
    deadline = time.monotonic() + scaled(seconds)
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("the condition never held")
        done.wait(0.005)
