"""A game is one package per layer, registered in one call: a minimal game defined only here
("race to 5": two seats take turns adding 1 or 2 to a running total; who reaches 5 wins) is
registered by this test and played through the real stack over HTTP — create, join, move,
stream, events, state at a version, export, audit — with no change to shared service code. It
also appears in the generated contract, as one more member of each union on ``game``."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

import pytest
import requests
from api_client import serve
from marshmallow import Schema, fields, post_load, validate
from patience import ANSWER
from psycopg_pool import ConnectionPool

from domain import games as domain_games
from domain import lifecycle
from domain.audit import audit_export
from domain.decider import (
    GAME_CREATED,
    GAME_ENDED,
    GAME_STARTED,
    SEAT_TAKEN,
    Command,
    CreateGame,
    Event,
    MakeMove,
    TakeSeat,
    Viewer,
    conflict,
    rule_broken,
)
from service.bodies import Strict
from service.games import registry
from service.http import contract
from service.http.app import create_app

NAME, GOAL = "race", 5

# --- the domain: rules on the decider shape --------------------------------------------------


class Rules(NamedTuple):
    players: int

    def to_json(self) -> dict[str, Any]:
        return {"players": self.players}


def parse_rules(options: Any) -> Rules:
    if options.get("players") != 2:
        raise rule_broken("invalid_rules", "a race has 2 players")
    return Rules(2)


class State(NamedTuple):
    version: int = 0
    rules: Rules | None = None
    seed_commitment: str = ""
    bot_seats: tuple[Any, ...] = ()
    turn_seconds: int | None = None
    name_rule: int = 0  # the lifecycle's (domain/names.py), like names, bots and the clock
    names: tuple[str, ...] = ()
    started: bool = False
    over: bool = False
    total: int = 0
    moves: int = 0
    winner: int | None = None


def decide(state: State, command: Command) -> list[Event]:
    return execute(state, command)[0]


def execute(state: State, command: Command) -> tuple[list[Event], State]:
    log: lifecycle.Log[State] = lifecycle.Log(state, evolve)
    start = lambda log, seed: None  # noqa: E731  # nothing is dealt
    if isinstance(command, CreateGame):
        lifecycle.create(
            log,
            command,
            game=NAME,
            parse_rules=parse_rules,
            bot_kinds=(),
            shuffle="none",
            start=start,
        )
    elif isinstance(command, TakeSeat):
        lifecycle.take_seat(log, command, start)
    else:
        seat, step = command.seat, command.move
        if not state.started or state.over:
            raise conflict("game_not_started", "the race is not on")
        if seat != state.moves % 2:
            raise conflict("not_your_turn", "the other seat is to move")
        total = state.total + step
        log.record(Event("counted", {"seat": seat, "step": step, "total": total}))
        if total >= GOAL:
            data = {
                "winners": [seat],
                "totals": [{"seat": seat, "total": total}],
                "seed": command.seed.hex(),
            }
            log.record(Event(GAME_ENDED, data))
    return log.events, log.state


def evolve(state: State, event: Event) -> State:
    version, data = state.version + 1, event.data
    if event.type == GAME_CREATED:
        return lifecycle.on_created(state, data, version, parse_rules=parse_rules)
    if event.type == SEAT_TAKEN:
        return lifecycle.on_seat_taken(state, data, version)
    if event.type == GAME_STARTED:
        return state._replace(version=version, started=True)
    if event.type == "counted":
        return state._replace(version=version, total=data["total"], moves=state.moves + 1)
    if event.type == GAME_ENDED:
        return state._replace(version=version, over=True, winner=data["winners"][0])
    raise ValueError(f"unknown race event {event.type!r}")


class Race:
    """The Game protocol (domain/decider.py), without bots or a clock."""

    name = NAME
    decide, execute, evolve = staticmethod(decide), staticmethod(execute), staticmethod(evolve)

    @staticmethod
    def initial_state() -> State:
        return State()

    @staticmethod
    def view(state: State, viewer: Viewer) -> dict[str, Any]:
        status = "over" if state.over else "playing" if state.started else "waiting"
        seats = list(state.names)
        return {
            "game": NAME,
            "status": status,
            "version": state.version,
            "total": state.total,
            "seats": seats,
            "winner": state.winner,
        }

    @staticmethod
    def visible_event(state: State, event: Event, viewer: Viewer) -> Event:
        return event  # nothing is secret in a race

    @staticmethod
    def score_sheet(state: State) -> dict[str, Any]:
        return {"total": state.total, "winner": state.winner}

    @staticmethod
    def is_over(state: State) -> bool:
        return state.over

    @staticmethod
    def seat_count(state: State) -> int:
        return 2

    @staticmethod
    def upcast(event: Event) -> Event:
        return event

    @staticmethod
    def commands(events: Sequence[Event], seed: bytes) -> Iterator[tuple[int, Command]]:
        for index, event in enumerate(events):
            if event.type == GAME_CREATED:
                data = event.data
                yield index, CreateGame(data["rules"], data["seed_commitment"], seed)
            elif event.type == SEAT_TAKEN:
                yield index, TakeSeat(event.data["name"], seed)
            elif event.type == "counted":
                yield index, MakeMove(event.data["seat"], event.data["step"], seed)

    @staticmethod
    def provenance(events: Sequence[Event]) -> list[dict[str, Any]]:
        return []


# --- the service: its bodies, registered in one call -----------------------------------------


class RaceRules(Strict):
    pass


class RaceMove(Strict):
    seat = fields.Integer(strict=True, metadata={"description": "Optional: the token's seat."})
    step = fields.Integer(
        strict=True,
        required=True,
        validate=validate.OneOf([1, 2]),
        metadata={"description": "How much to add to the total."},
    )

    @post_load
    def _to_move(self, data: dict[str, Any], **_: Any) -> dict[str, Any]:
        return {"seat": data.get("seat"), "move": data["step"]}


class RaceView(Schema):
    game_id = fields.UUID(required=True)
    game = fields.String(required=True, metadata={"const": NAME})
    status = fields.String(required=True)
    version = fields.Integer(required=True)
    total = fields.Integer(required=True)
    seats = fields.List(fields.String(), required=True)
    winner = fields.Integer(allow_none=True, required=True)


class RaceScoreSheet(Schema):
    game_id = fields.UUID(required=True)
    version = fields.Integer(required=True)
    total = fields.Integer(required=True)
    winner = fields.Integer(allow_none=True, required=True)


@pytest.fixture
def race() -> Iterator[registry.GameAdapter]:
    registry.load_games()  # the hosted games first, as a server has them
    adapter = registry.register(
        registry.GameAdapter(Race(), RaceRules(), RaceMove(), RaceView(), RaceScoreSheet())
    )
    try:
        yield adapter
    finally:
        registry.unregister(NAME)
        domain_games.GAMES.pop(NAME, None)


@pytest.fixture
def url(race: registry.GameAdapter, pool: ConnectionPool) -> Iterator[str]:
    app = create_app(pool=pool, config={"CARDROOM_CLOCK_INTERVAL": 0})
    with serve(app) as base:
        yield base
    app.extensions["cardroom_live"].stop()  # its reader's connection, before the database goes


def ok(response: requests.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    json_body = response.headers.get("Content-Type", "").startswith("application/json")
    return response.json() if json_body else response


def test_a_game_defined_in_a_test_is_played_through_the_whole_stack(url: str) -> None:
    http = requests.Session()
    created = ok(http.post(f"{url}/games", json={"game": NAME, "players": 2}), 201)
    assert (created["game"], created["status"], created["total"]) == (NAME, "waiting", 0)
    game = f"{url}/games/{created['game_id']}"
    tokens = []
    for name in ("Ada", "Bob"):
        seat = ok(http.post(f"{game}/players", json={"name": name}), 201)
        tokens.append({"Authorization": f"Bearer {seat['token']}"})
    assert seat["started"] is True

    refused = http.post(f"{game}/moves", json={"step": 3}, headers=tokens[0])
    assert refused.status_code == 400 and refused.json()["code"] == "invalid_request"
    wrong_turn = http.post(f"{game}/moves", json={"step": 1}, headers=tokens[1])
    assert wrong_turn.status_code == 409 and wrong_turn.json()["code"] == "not_your_turn"
    for seat, step in [(0, 2), (1, 2), (0, 1)]:  # 2, 4, 5: seat 0 wins
        view = ok(http.post(f"{game}/moves", json={"step": step}, headers=tokens[seat]))
    assert (view["status"], view["total"], view["winner"]) == ("over", 5, 0)

    with http.get(f"{game}/stream", stream=True, timeout=ANSWER) as stream:
        assert stream.status_code == 200
        kinds = [
            line[6:] for line in stream.iter_lines(decode_unicode=True) if line.startswith("event:")
        ]
    assert kinds[0].strip() == GAME_CREATED and kinds[-1].strip() == GAME_ENDED

    events = ok(http.get(f"{game}/events"))["events"]
    assert [e["type"] for e in events].count("counted") == 3
    assert ok(http.get(f"{game}/state", params={"version": 5}))["total"] == 2
    assert ok(http.get(f"{game}/scores")) == {
        "game_id": created["game_id"],
        "version": 8,
        "total": 5,
        "winner": 0,
    }

    export = ok(http.get(f"{game}/export")).text
    lines = [json.loads(line) for line in export.splitlines()]
    events, checkpoint = lines[:-1], lines[-1]  # a finished game's export ends signed
    assert len(events) == 8 and all(line["hash"] for line in events)
    assert checkpoint["checkpoint"]["version"] == 8
    report = ok(http.get(f"{game}/audit"))
    assert report["ok"] is True and report["replay"]["ok"] is True, report
    assert report["seed"]["matches_commitment"] is True
    assert audit_export(export)["ok"] is True  # `cardroom audit` offline: the same verdict


def test_a_registered_game_is_in_the_contract(race: registry.GameAdapter) -> None:
    document = contract.build(contract.routes_app())
    schemas = document["components"]["schemas"]
    assert "RaceView" in schemas and "RaceMove" in schemas and "RaceCreateGameRequest" in schemas
    mapping = schemas["GameView"]["discriminator"]["mapping"]
    assert mapping[NAME] == "#/components/schemas/RaceView"
    assert {"$ref": "#/components/schemas/RaceMove"} in schemas["Move"]["oneOf"]
    assert schemas["RaceCreateGameRequest"]["properties"]["game"]["const"] == NAME
