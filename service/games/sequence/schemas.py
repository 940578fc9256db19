"""Sequence's own bodies: its rules at creation, its moves, its view and score sheet."""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, ValidationError, fields, post_load, validate, validates_schema

from domain.sequence import SEQUENCE, Discard, Pass, Play
from domain.sequence.cards import ONE_DECK
from service.bodies import (
    MOVE_SEAT,
    RATED,
    RATED_ACCOUNTS,
    RATING_CHANGES,
    RATING_POOL,
    RECEIPT_DESCRIPTION,
    REMATCH,
    TURN_NUMBER,
    VISIBILITY,
    Invitation,
    Receipt,
    SeatCommon,
    Strict,
    StrictBoolean,
)

CARD = fields.String(
    validate=validate.OneOf(ONE_DECK, error="unknown card {input!r}; cards are {choices}")
)
COORDINATE = fields.Integer(strict=True, validate=validate.Range(min=0, max=9))


class SequenceRules(Strict):
    """Q4: 2 or 3 teams (the player count comes from POST /games); Q11: advanced jacks."""

    class Meta(Strict.Meta):
        description = (
            "Sequence's rules; every field is optional; the player count is `players` of the "
            "request\n"
            "(2, 3, 4, 6, 8, 9, 10 or 12; Q4)."
        )

    teams = fields.Integer(
        strict=True,
        validate=validate.OneOf([2, 3]),
        metadata={
            "description": (
                "2 or 3 teams of equal size (Q4): 3 and 9 players need 3, 2, 4, 8 and 10 need 2;\n"
                "6 and 12 may be either (default 2)."
            )
        },
    )
    advanced_jacks = StrictBoolean(
        metadata={
            "description": "A one-eyed jack may also remove a chip of a completed sequence (Q11)."
        }
    )


class SequenceMove(Strict):
    """One of: ``{"card", "cell"}`` play a card (Q6), ``{"discard"}`` a dead card (Q7), or
    ``{"pass": true}`` (Q8)."""

    class Meta(Strict.Meta):
        description = (
            "Only the seat whose turn it is moves (else `409 not_your_turn`). One of:\n"
            "\n"
            "- `{card, cell}`: play `card` from your hand (Q6). A non-jack card puts your team's\n"
            "  chip on an empty cell showing that card; a two-eyed jack (`JD`, `JC`) on any empty\n"
            "  non-corner cell; a one-eyed jack (`JH`, `JS`) removes the chip on `cell`, another\n"
            "  team's and not in a completed sequence (unless `advanced_jacks`, Q11). The service\n"
            "  then draws your new card. This ends your turn.\n"
            "- `{discard}`: discard a dead card (both its cells taken) and draw a replacement, "
            "once\n"
            "  per turn, before playing (Q7). Your turn goes on: play next, the new card "
            "included.\n"
            "- `{pass: true}`: only when none of your cards can be played (Q8). A seat with no "
            "legal\n"
            "  play and no dead card to discard is passed by the service itself."
        )

    seat = MOVE_SEAT(11)
    turn = TURN_NUMBER("turn")
    card = CARD
    cell = fields.List(COORDINATE, validate=validate.Length(equal=2))
    discard = fields.String(
        validate=CARD.validate, metadata={"pattern": "^(A|[2-9]|10|J|Q|K)[SHDC]$"}
    )
    pass_ = StrictBoolean(data_key="pass", validate=validate.Equal(True), metadata={"enum": [True]})

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
        return {"seat": data.get("seat"), "move": move, "turn": data["turn"]}


# The contract's three shapes of a move (a oneOf that client generators type): each loads as
# SequenceMove does, with only its own fields.


class SequencePlay(SequenceMove):
    class Meta(Strict.Meta):
        exclude = ("discard", "pass_")
        description = (
            "Play `card` from your hand on `cell` (Q6): a non-jack card puts your team's chip on "
            "an empty cell showing that card; a two-eyed jack (`JD`, `JC`) on any empty "
            "non-corner cell; a one-eyed jack (`JH`, `JS`) removes the chip on `cell`. Ends your "
            "turn."
        )

    card = fields.String(required=True, validate=CARD.validate)
    cell = fields.List(
        COORDINATE,
        required=True,
        validate=validate.Length(equal=2),
        metadata={"description": "`[row, column]`, each 0–9; row 0 is the top row (Q1)."},
    )


class SequenceDiscard(SequenceMove):
    class Meta(Strict.Meta):
        exclude = ("card", "cell", "pass_")
        description = (
            "Discard a dead card (both its cells taken) and draw a replacement, once per turn, "
            "before playing (Q7). Your turn goes on."
        )

    discard = fields.String(required=True, validate=CARD.validate)


class SequencePass(SequenceMove):
    class Meta(Strict.Meta):
        exclude = ("card", "cell", "discard")
        description = "Pass: only when none of your cards can be played (Q8)."

    pass_ = StrictBoolean(data_key="pass", required=True, validate=validate.Equal(True))


# --- the view -------------------------------------------------------------------------------------

CELL = fields.List(fields.Integer())


class SequenceRun(Schema):
    class Meta:
        description = (
            "A maximal line of one team's chips (corners count for every team, Q9) holding "
            "`count`\n"
            "sequences: 1 for 5–8 cells, 2 for 9 or 10 (Q10)."
        )

    team = fields.Integer(required=True, metadata={"minimum": 0})
    cells = fields.List(CELL, required=True, metadata={"minItems": 5})
    count = fields.Integer(required=True, metadata={"minimum": 1, "maximum": 2})


class SequenceTeam(Schema):
    team = fields.Integer(required=True, metadata={"minimum": 0})
    seats = fields.List(
        fields.Integer(),
        required=True,
        metadata={"description": "Seat i plays for team i mod teams (Q4)."},
    )
    sequences = fields.Integer(required=True, metadata={"minimum": 0})


class SequenceSeatView(SeatCommon):
    team = fields.Integer(required=True, metadata={"minimum": 0})
    hand_size = fields.Integer(required=True, metadata={"minimum": 0})
    hand = fields.List(
        CARD, metadata={"description": "Once the game is over only."}
    )  # only once the game is over


class SequenceCardPlays(Schema):
    card = fields.String(required=True)
    cells = fields.List(fields.List(fields.Integer()), required=True)


class SequenceYouView(Schema):
    seat = fields.Integer(required=True, metadata={"minimum": 0, "maximum": 11})
    team = fields.Integer(required=True, metadata={"minimum": 0})
    hand = fields.List(CARD, required=True)
    your_turn = fields.Boolean(required=True)
    dead_cards = fields.List(
        CARD,
        required=True,
        metadata={"description": "The cards of your hand that are dead (Q7)."},
    )
    can_discard = fields.Boolean(
        required=True,
        metadata={
            "description": "It is your turn, and you may still discard a dead card this turn (Q7)."
        },
    )
    plays = fields.List(
        fields.Nested(SequenceCardPlays),
        required=True,
        metadata={
            "description": (
                "On your turn, each distinct card of your hand "
                "with every cell it can be played on now\n"
                "(Q6; a one-eyed jack lists the chips it may "
                "remove, Q10/Q11). A dead card lists no\n"
                "cell. Empty when it is not your turn."
            )
        },
    )


class SequenceRulesView(Schema):
    players = fields.Integer(required=True, metadata={"enum": [2, 3, 4, 6, 8, 9, 10, 12]})
    teams = fields.Integer(required=True, metadata={"enum": [2, 3]})
    advanced_jacks = fields.Boolean(required=True)


class TeamTotal(Schema):
    team = fields.Integer(required=True, metadata={"minimum": 0, "maximum": 2})
    total = fields.Integer(
        required=True, metadata={"description": "Sequences (Q12).", "minimum": 0}
    )


class SequenceView(Schema):
    class Meta:
        description = (
            "A Sequence game as one viewer may see it. Public: the board, the chips, the "
            "sequences,\n"
            "the discard pile, whose turn it is and every hand's size. `you` (a seat's own view, "
            "once\n"
            "the game has started) holds your hand only. Once over: `result`, `winning_team`,\n"
            "`winners`, `totals`, `seed`, `draw_pile` and `seats[].hand`."
        )

    game_id = fields.UUID(required=True)
    game = fields.String(required=True, metadata={"const": SEQUENCE.name})
    status = fields.String(
        required=True,
        metadata={
            "enum": ["waiting", "playing", "over", "cancelled"],
            "description": "`cancelled`: the seats did not fill in time (`game_cancelled`).",
        },
    )
    version = fields.Integer(required=True, metadata={"minimum": 1})
    rules = fields.Nested(SequenceRulesView, required=True)
    seed_commitment = fields.String(required=True, metadata={"pattern": "^[0-9a-f]{64}$"})
    turn = fields.Integer(
        required=True,
        metadata={
            "description": (
                "The current turn, from 1 (0 before the deal); a play or a pass ends one."
            ),
            "minimum": 0,
        },
    )
    turn_seconds = fields.Integer(
        allow_none=True,
        required=True,
        metadata={
            "description": "The turn clock's seconds per turn; null when the game has no clock.",
            "minimum": 1,
        },
    )
    turn_deadline = fields.AwareDateTime(
        allow_none=True,
        metadata={
            "description": (
                "When the current turn times out: then the "
                "`greedy` bot moves for the seat to move\n"
                "(`by: clock`). Null without a clock. Not in past states (`/state`)."
            )
        },
    )  # set by the service (the clock)
    seat_to_move = fields.Integer(
        allow_none=True,
        required=True,
        metadata={"description": "Whose turn it is (Q4), null unless playing."},
    )
    board = fields.List(
        fields.List(fields.String()),
        required=True,
        metadata={
            "description": "The 10×10 layout (Q1), row 0 first; `XX` marks the corners.",
            "minItems": 10,
            "maxItems": 10,
        },
    )
    chips = fields.List(
        fields.List(fields.Integer(allow_none=True)),
        required=True,
        metadata={
            "description": "Per row and column, the team whose chip is on the cell, or null.",
            "minItems": 10,
            "maxItems": 10,
        },
    )
    sequences = fields.List(
        fields.Nested(SequenceRun),
        required=True,
        metadata={"description": "Every run holding a sequence (Q9/Q10); its chips are locked."},
    )
    teams = fields.List(fields.Nested(SequenceTeam), required=True)
    to_win = fields.Integer(
        required=True,
        metadata={
            "description": "Sequences a team needs to win (Q12).",
            "minimum": 0,
            "maximum": 2,
        },
    )
    discard_pile = fields.List(
        CARD,
        required=True,
        metadata={
            "description": "Cards played or discarded since the last reshuffle, oldest first (Q8)."
        },
    )
    draw_pile_size = fields.Integer(required=True, metadata={"minimum": 0, "maximum": 104})
    passes_in_a_row = fields.Integer(
        required=True,
        metadata={
            "description": "Seats that passed in a row; when every seat has, it is a draw (Q8).",
            "minimum": 0,
        },
    )
    seats = fields.List(fields.Nested(SequenceSeatView), required=True, metadata={"maxItems": 12})
    you = fields.Nested(SequenceYouView)
    result = fields.String(
        metadata={"description": "Once over. `win` (Q12) or `draw` (Q8).", "enum": ["win", "draw"]}
    )  # the rest only once the game is over
    winning_team = fields.Integer(
        allow_none=True, metadata={"description": "Once over. The winning team, null after a draw."}
    )
    winners = fields.List(
        fields.Integer(),
        metadata={"description": "Once over. The seats of the winning team (none after a draw)."},
    )
    totals = fields.List(
        fields.Nested(TeamTotal),
        metadata={"description": "Once over. Sequences per team (Q12), as `game_ended` has them."},
    )
    seed = fields.String(metadata={"pattern": "^[0-9a-f]{64}$"})
    draw_pile = fields.List(
        CARD,
        metadata={"description": "Once over. What was left of the draw pile, top first."},
    )
    receipt = fields.Nested(Receipt, metadata={"description": RECEIPT_DESCRIPTION})
    visibility = VISIBILITY()
    invitation = fields.Nested(Invitation)  # a private game's, in the answer creating it
    rematch = REMATCH()
    rated = RATED()
    rating_pool = RATING_POOL()
    rated_accounts = RATED_ACCOUNTS()
    rating_changes = RATING_CHANGES()


# --- the score sheet ------------------------------------------------------------------------------


class SequenceTeamSheet(SequenceTeam):
    names = fields.List(fields.String(allow_none=True), required=True)
    runs = fields.List(fields.Nested(SequenceRun), required=True)


class SequenceScoreSheet(Schema):
    game_id = fields.UUID(required=True)
    version = fields.Integer(required=True, metadata={"minimum": 1})
    to_win = fields.Integer(required=True, metadata={"minimum": 0, "maximum": 2})
    teams = fields.List(fields.Nested(SequenceTeamSheet), required=True)
    result = fields.String(allow_none=True, required=True, metadata={"enum": ["win", "draw", None]})
    winning_team = fields.Integer(allow_none=True, required=True)
    winners = fields.List(fields.Integer(), allow_none=True, required=True)
