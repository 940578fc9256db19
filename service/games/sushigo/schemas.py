"""Sushi Go!'s own bodies: its rules at creation, its move (a pick), its view and score sheet."""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, ValidationError, fields, post_load, validate, validates_schema

from domain.sushigo import Pick
from domain.sushigo.cards import KINDS, NIGIRI_POINTS
from domain.sushigo.rules import EDITIONS, PASS_DIRECTIONS
from service.http.schemas import Strict, StrictBoolean

CARD = fields.String(
    validate=validate.OneOf(KINDS, error="unknown card {input!r}; cards are {choices}")
)


class SushiGoRules(Strict):
    edition = fields.String(validate=validate.OneOf(EDITIONS))
    pass_direction = fields.String(validate=validate.OneOf(PASS_DIRECTIONS))
    dummy = StrictBoolean()


class SushiGoMove(Strict):
    """A pick (S4): one card, or two in order with chopsticks (S6); ``dummy_card`` when you control
    the dummy (S17); ``use_wasabi`` per card in the zoch edition (S9)."""

    seat = fields.Integer(strict=True, validate=validate.Range(min=0, max=4))
    cards = fields.List(CARD, required=True, validate=validate.Length(min=1, max=2))
    dummy_card = fields.String(allow_none=True, validate=CARD.validate)
    use_wasabi = fields.List(
        StrictBoolean(), allow_none=True, validate=validate.Length(min=1, max=2)
    )

    @validates_schema
    def _wasabi_per_card(self, data: dict[str, Any], **_: Any) -> None:
        wasabi = data.get("use_wasabi")
        cards = data.get("cards", [])
        if wasabi is not None and len(wasabi) != len(cards):
            raise ValidationError("give one true/false per card, in order", "use_wasabi")
        for card, dip in zip(cards, wasabi or (), strict=False):
            if dip and card not in NIGIRI_POINTS:  # S8/S9: only a nigiri goes onto a wasabi
                raise ValidationError(
                    f"only a nigiri can go onto a wasabi: give false for {card}", "use_wasabi"
                )

    @post_load
    def _to_pick(self, data: dict[str, Any], **_: Any) -> dict[str, Any]:
        wasabi = data.get("use_wasabi")
        pick = Pick(
            tuple(data["cards"]),
            data.get("dummy_card"),
            None if wasabi is None else tuple(wasabi),
        )
        return {"seat": data.get("seat"), "move": pick}


# --- the view -------------------------------------------------------------------------------------


class Tableau(Schema):
    cards = fields.List(fields.String(), required=True)
    on_wasabi = fields.List(fields.String(), required=True)


class PickView(Schema):
    cards = fields.List(fields.String(), required=True)
    chopsticks = fields.Boolean(required=True)
    dummy_card = fields.String()
    use_wasabi = fields.List(fields.Boolean())
    auto = fields.Boolean(required=True)
    by = fields.String()  # "bot" or "clock": the service picked for the seat


class SeatView(Schema):
    seat = fields.Integer(required=True)
    name = fields.String(allow_none=True, required=True)
    taken = fields.Boolean(required=True)
    bot = fields.String(allow_none=True, required=True)  # the kind of bot playing the seat
    hand_size = fields.Integer(required=True)
    picked = fields.Boolean(required=True)
    tableau = fields.Nested(Tableau, required=True)
    puddings = fields.Integer(required=True)
    score = fields.Integer(required=True)
    hand = fields.List(fields.String())  # only once the game is over
    pick = fields.Nested(PickView, allow_none=True)  # only once the game is over


class DummyView(Schema):
    controller = fields.Integer(allow_none=True, required=True)
    pile_size = fields.Integer(required=True)
    pile = fields.List(fields.String())  # only once the game is over
    tableau = fields.Nested(Tableau, required=True)
    puddings = fields.Integer(required=True)
    score = fields.Integer(required=True)


class YouView(Schema):
    seat = fields.Integer(required=True)
    hand = fields.List(fields.String(), required=True)
    pick = fields.Nested(PickView, allow_none=True, required=True)
    controls_dummy = fields.Boolean(required=True)
    chopsticks_available = fields.Boolean(
        required=True,
        metadata={"description": "a chopsticks card placed earlier lies in front of you (S6)"},
    )
    awaiting_pick = fields.Boolean(
        required=True,
        metadata={"description": "the game waits for your pick this turn (S4, S5, S9)"},
    )
    chopsticks_usable = fields.Boolean(
        required=True,
        metadata={"description": "you may pick two cards now with your chopsticks (S6, S17)"},
    )
    free_wasabi = fields.Integer(
        required=True,
        metadata={"description": "wasabi in front of you with no nigiri on them yet (S8)"},
    )


class RulesView(Schema):
    players = fields.Integer(required=True)
    edition = fields.String(required=True)
    pass_direction = fields.String(required=True)
    dummy = fields.Boolean(required=True)


class SushiGoView(Schema):
    id = fields.UUID(required=True)
    game = fields.String(required=True)
    status = fields.String(required=True)
    version = fields.Integer(required=True)
    rules = fields.Nested(RulesView, required=True)
    card_names = fields.Dict(keys=fields.String(), values=fields.String(), required=True)
    seed_commitment = fields.String(required=True)
    round = fields.Integer(required=True)
    turn = fields.Integer(required=True)
    turn_seconds = fields.Integer(allow_none=True, required=True)
    turn_deadline = fields.AwareDateTime()  # set by the service while a timed turn waits
    seats = fields.List(fields.Nested(SeatView), required=True)
    dummy = fields.Nested(DummyView)
    you = fields.Nested(YouView)
    winners = fields.List(fields.Integer())
    totals = fields.List(fields.Integer())
    seed = fields.String()


# --- the score sheet ------------------------------------------------------------------------------


class SeatRound(Schema):
    seat = fields.Integer(required=True)
    name = fields.String(required=True)
    maki = fields.Dict(keys=fields.String(), values=fields.Integer(), required=True)
    tempura = fields.Dict(keys=fields.String(), values=fields.Integer(), required=True)
    sashimi = fields.Dict(keys=fields.String(), values=fields.Integer(), required=True)
    dumpling = fields.Dict(keys=fields.String(), values=fields.Integer(), required=True)
    nigiri = fields.Dict(keys=fields.String(), values=fields.Raw(), required=True)
    wasabi = fields.Dict(keys=fields.String(), values=fields.Integer(), required=True)
    pudding = fields.Dict(keys=fields.String(), values=fields.Integer(), required=True)
    total = fields.Integer(required=True)


class RoundSheet(Schema):
    round = fields.Integer(required=True)
    seats = fields.List(fields.Nested(SeatRound), required=True)


class PuddingScore(Schema):
    seat = fields.Integer(required=True)
    name = fields.String(required=True)
    count = fields.Integer(required=True)
    points = fields.Integer(required=True)


class SeatTotal(Schema):
    seat = fields.Integer(required=True)
    name = fields.String(required=True)
    total = fields.Integer(required=True)


class SushiGoScoreSheet(Schema):
    game_id = fields.UUID(required=True)
    version = fields.Integer(required=True)
    categories = fields.List(fields.String(), required=True)
    rounds = fields.List(fields.Nested(RoundSheet), required=True)
    puddings = fields.List(fields.Nested(PuddingScore), allow_none=True, required=True)
    totals = fields.List(fields.Nested(SeatTotal), required=True)
    winners = fields.List(fields.Integer(), allow_none=True, required=True)
