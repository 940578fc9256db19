"""Sequence's own bodies: its rules at creation, its moves, its view and score sheet."""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, ValidationError, fields, post_load, validate, validates_schema

from domain.sequence import Discard, Pass, Play
from domain.sequence.cards import ONE_DECK
from service.http.schemas import RECEIPT_DESCRIPTION, Receipt, Strict, StrictBoolean

CARD = fields.String(
    validate=validate.OneOf(ONE_DECK, error="unknown card {input!r}; cards are {choices}")
)
COORDINATE = fields.Integer(strict=True, validate=validate.Range(min=0, max=9))


class SequenceRules(Strict):
    """Q4: 2 or 3 teams (the player count comes from POST /games); Q11: advanced jacks."""

    teams = fields.Integer(strict=True, validate=validate.OneOf([2, 3]))
    advanced_jacks = StrictBoolean()


class SequenceMove(Strict):
    """One of: ``{"card", "cell"}`` play a card (Q6), ``{"discard"}`` a dead card (Q7), or
    ``{"pass": true}`` (Q8)."""

    seat = fields.Integer(strict=True, validate=validate.Range(min=0, max=11))
    card = CARD
    cell = fields.List(COORDINATE, validate=validate.Length(equal=2))
    discard = fields.String(validate=CARD.validate)
    pass_ = StrictBoolean(data_key="pass", validate=validate.Equal(True))

    @validates_schema
    def _one_kind(self, data: dict[str, Any], **_: Any) -> None:
        kinds = [k for k in ("card", "discard", "pass_") if k in data]
        if len(kinds) != 1:
            raise ValidationError(
                "send exactly one of {card, cell}, {discard} or {pass: true}", "_schema"
            )
        if ("card" in data) != ("cell" in data):
            raise ValidationError("a card is played on a cell: send both", "cell")

    @post_load
    def _to_move(self, data: dict[str, Any], **_: Any) -> dict[str, Any]:
        move: Play | Discard | Pass
        if "card" in data:
            move = Play(data["card"], (data["cell"][0], data["cell"][1]))
        elif "discard" in data:
            move = Discard(data["discard"])
        else:
            move = Pass()
        return {"seat": data.get("seat"), "move": move}


# --- the view -------------------------------------------------------------------------------------

CELL = fields.List(fields.Integer())


class RunView(Schema):
    team = fields.Integer(required=True)
    cells = fields.List(CELL, required=True)
    count = fields.Integer(required=True)


class TeamView(Schema):
    team = fields.Integer(required=True)
    seats = fields.List(fields.Integer(), required=True)
    sequences = fields.Integer(required=True)


class SeatView(Schema):
    seat = fields.Integer(required=True)
    name = fields.String(allow_none=True, required=True)
    taken = fields.Boolean(required=True)
    bot = fields.String(allow_none=True, required=True)  # the kind of bot playing the seat
    team = fields.Integer(required=True)
    hand_size = fields.Integer(required=True)
    hand = fields.List(fields.String())  # only once the game is over


class CardPlays(Schema):
    card = fields.String(required=True)
    cells = fields.List(fields.List(fields.Integer()), required=True)


class YouView(Schema):
    seat = fields.Integer(required=True)
    team = fields.Integer(required=True)
    hand = fields.List(fields.String(), required=True)
    your_turn = fields.Boolean(required=True)
    dead_cards = fields.List(fields.String(), required=True)
    can_discard = fields.Boolean(required=True)
    plays = fields.List(fields.Nested(CardPlays), required=True)


class RulesView(Schema):
    players = fields.Integer(required=True)
    teams = fields.Integer(required=True)
    advanced_jacks = fields.Boolean(required=True)


class SequenceView(Schema):
    id = fields.UUID(required=True)
    game = fields.String(required=True)
    status = fields.String(required=True)
    version = fields.Integer(required=True)
    rules = fields.Nested(RulesView, required=True)
    seed_commitment = fields.String(required=True)
    turn = fields.Integer(required=True)
    turn_seconds = fields.Integer(allow_none=True, required=True)
    turn_deadline = fields.AwareDateTime(allow_none=True)  # set by the service (the clock)
    seat_to_move = fields.Integer(allow_none=True, required=True)
    board = fields.List(fields.List(fields.String()), required=True)
    chips = fields.List(fields.List(fields.Integer(allow_none=True)), required=True)
    sequences = fields.List(fields.Nested(RunView), required=True)
    teams = fields.List(fields.Nested(TeamView), required=True)
    to_win = fields.Integer(required=True)
    discard_pile = fields.List(fields.String(), required=True)
    draw_pile_size = fields.Integer(required=True)
    passes_in_a_row = fields.Integer(required=True)
    seats = fields.List(fields.Nested(SeatView), required=True)
    you = fields.Nested(YouView)
    result = fields.String()  # the rest only once the game is over
    winning_team = fields.Integer(allow_none=True)
    winners = fields.List(fields.Integer())
    totals = fields.List(fields.Integer())
    seed = fields.String()
    draw_pile = fields.List(fields.String())
    receipt = fields.Nested(Receipt, metadata={"description": RECEIPT_DESCRIPTION})


# --- the score sheet ------------------------------------------------------------------------------


class TeamSheet(TeamView):
    names = fields.List(fields.String(allow_none=True), required=True)
    runs = fields.List(fields.Nested(RunView), required=True)


class SequenceScoreSheet(Schema):
    game_id = fields.UUID(required=True)
    version = fields.Integer(required=True)
    to_win = fields.Integer(required=True)
    teams = fields.List(fields.Nested(TeamSheet), required=True)
    result = fields.String(allow_none=True, required=True)
    winning_team = fields.Integer(allow_none=True, required=True)
    winners = fields.List(fields.Integer(), allow_none=True, required=True)
