"""service/http/dumping.py gives exactly ``schema.dump``: for every state of random games of both
games, seen from every seat and by a spectator, with the members the API adds (a UUID, an aware
deadline, the visibility, a receipt); and for the marshmallow features it leaves to marshmallow
(hooks, defaults, ``attribute``/``data_key``, other field types, values that are not dicts)."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

import pytest
from marshmallow import Schema, fields, post_dump, pre_dump

from domain.decider import SPECTATOR, Viewer
from domain.sequence.randomplay import play_random_game as random_sequence
from domain.sushigo.randomplay import play_random_game as random_sushi_go
from service.bodies import Receipt
from service.games.registry import load_games
from service.http.dumping import planned

GAME_ID = UUID("12345678-1234-4234-8234-123456789abc")
DEADLINE = datetime(2026, 11, 25, 18, 0, 1, 250000, tzinfo=UTC)


def views(name: str, events: list[Any], players: int) -> list[dict[str, Any]]:
    """The API's view bodies of every state after each event, from each seat and a spectator."""
    game = load_games()[name].game
    state, bodies = game.initial_state(), []
    for number, event in enumerate(events):
        state = game.evolve(state, event)
        for viewer in (SPECTATOR, *(Viewer(seat) for seat in range(players))):
            extra: dict[str, Any] = {"game_id": GAME_ID, "visibility": "public"}
            if number % 3 == 0:
                extra["turn_deadline"] = DEADLINE
            bodies.append({**game.view(state, viewer), **extra})
    return bodies


SUSHI_GO_OPTIONS = [
    {"players": 2, "dummy": True},
    {"players": 3, "edition": "zoch"},
    {"players": 4},
    {"players": 5, "edition": "zoch", "pass_direction": "alternate"},
]


@pytest.mark.parametrize("options", SUSHI_GO_OPTIONS, ids=lambda o: str(o["players"]))
def test_sushi_go_views(options: dict[str, Any]) -> None:
    schema = load_games()["sushi-go"].view
    events, _, _ = random_sushi_go(options, random.Random(options["players"]))
    bodies = views("sushi-go", events, options["players"])
    assert any(b["status"] == "over" for b in bodies) and any("you" in b for b in bodies)
    for body in bodies:
        assert planned(schema)(body) == schema.dump(body)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_sequence_views(players: int) -> None:
    schema = load_games()["sequence"].view
    events, _ = random_sequence({"players": players}, random.Random(players))
    for body in views("sequence", events, players)[::7]:
        assert planned(schema)(body) == schema.dump(body)


def test_receipt() -> None:
    receipt = {
        "format": "cardroom-receipt/1",
        "game_id": str(GAME_ID),
        "version": 7,
        "commitment": "ab" * 32,
        "kid": "k",
        "signature": "s",
        "extra": "not in the schema",
    }
    schema = Receipt()
    assert planned(schema)(receipt) == schema.dump(receipt)


class Inner(Schema):
    n = fields.Integer()
    s = fields.String()

    @post_dump
    def _mark(self, data: dict[str, Any], **_: Any) -> dict[str, Any]:
        return {**data, "hooked": True}


class Plain(Schema):
    n = fields.Integer()


class Odd(Schema):
    renamed = fields.Integer(data_key="outName")
    source = fields.String(attribute="src")
    dotted = fields.Integer(attribute="a.b")
    defaulted = fields.Integer(dump_default=5)
    method = fields.Method("_double")
    text_int = fields.Integer(as_string=True)
    decimal = fields.Float()
    text = fields.String()
    flag = fields.Boolean()
    when = fields.DateTime()
    hooked = fields.Nested(Inner)
    hooked_many = fields.List(fields.Nested(Inner))
    plain_many = fields.Nested(Plain, many=True)
    plain_list = fields.List(fields.Nested(Plain), allow_none=True)
    mapping = fields.Dict(keys=fields.String(), values=fields.Integer())
    nested_values = fields.Dict(keys=fields.Integer(), values=fields.Nested(Plain))
    untyped = fields.Dict()
    keys = fields.Raw()  # a dict attribute when absent: marshmallow reads dict.keys

    def _double(self, obj: Any) -> Any:
        return 2 * (obj.get("renamed") or 0)


ODD_VALUES = [
    {},
    {"renamed": 3, "src": "x", "a": {"b": 4}, "defaulted": 9, "text_int": 12, "decimal": 1},
    {"text": b"bytes", "flag": 1, "when": DEADLINE, "hooked": {"n": "7", "s": 5}},
    {"hooked_many": [{"n": 1}, {"n": True}], "plain_many": [{"n": 2.9}], "plain_list": None},
    {"plain_list": [{"n": None}, {}, {"n": 2.9}, {"n": True}], "mapping": {"a": "1", 2: 3.5}},
    {"nested_values": {"1": {"n": 2.5}, 1: {"n": 3}}, "untyped": {"a": [1]}, "mapping": None},
    {"text": None, "hooked": None, "defaulted": 3.7, "flag": "yes", "text_int": False},
    {"keys": "given", "renamed": None, "outName": 1},
]


@pytest.mark.parametrize("value", ODD_VALUES)
def test_what_marshmallow_does_itself(value: dict[str, Any]) -> None:
    schema = Odd()
    assert planned(schema)(value) == schema.dump(value)


def test_not_a_dict_and_hooked_schemas() -> None:
    class Obj:
        n, s = 4, "four"

    assert planned(Plain())(Obj()) == Plain().dump(Obj()) == {"n": 4}
    assert planned(Inner())({"n": 1}) == Inner().dump({"n": 1}) == {"n": 1, "hooked": True}

    class Before(Schema):
        n = fields.Integer()

        @pre_dump
        def _add(self, data: dict[str, Any], **_: Any) -> dict[str, Any]:
            return {"n": 1}

    assert planned(Before())({}) == {"n": 1}


def test_planned_once_per_schema() -> None:
    schema = Plain()
    assert planned(schema) is planned(schema)
    assert planned(Plain()) is not planned(schema)
