"""Sushi Go!'s own bodies: its rules at creation, its move (a pick), its view and score sheet."""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, ValidationError, fields, post_load, validate, validates_schema

from domain.sushigo import SUSHI_GO, Pick
from domain.sushigo.cards import KINDS, NIGIRI_POINTS
from domain.sushigo.rules import EDITIONS, PASS_DIRECTIONS
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
    validate=validate.OneOf(KINDS, error="unknown card {input!r}; cards are {choices}")
)


class SushiGoRules(Strict):
    class Meta(Strict.Meta):
        description = "The game's rules; every field is optional. Fixed once the game is created."

    edition = fields.String(validate=validate.OneOf(EDITIONS))
    pass_direction = fields.String(validate=validate.OneOf(PASS_DIRECTIONS))
    dummy = StrictBoolean(
        metadata={
            "description": "The 2-player dummy variant (S17), `gamewright` with 2 players only."
        }
    )


class SushiGoMove(Strict):
    """A pick (S4): one card, or two in order with chopsticks (S6); ``dummy_card`` when you control
    the dummy (S17); ``use_wasabi`` per card in the zoch edition (S9)."""

    class Meta(Strict.Meta):
        description = (
            "A pick (S4): one card, or two in order with chopsticks (S6); `dummy_card` when you\n"
            "control the dummy (S17); `use_wasabi` per card in the zoch edition only (S9)."
        )

    seat = MOVE_SEAT(4)
    round = TURN_NUMBER("round")
    turn = TURN_NUMBER("turn")
    cards = fields.List(
        CARD,
        required=True,
        validate=validate.Length(min=1, max=2),
        metadata={
            "description": (
                "One card from your hand; or two, in the order they are placed, when using a\n"
                "chopsticks card placed in an earlier turn (S6)."
            )
        },
    )
    dummy_card = fields.String(
        allow_none=True,
        validate=CARD.validate,
        metadata={
            "description": (
                "The dummy's card, from your hand: required when you control the dummy\n"
                "(`you.controls_dummy`), forbidden otherwise (S17)."
            )
        },
    )
    use_wasabi = fields.List(
        StrictBoolean(),
        allow_none=True,
        validate=validate.Length(min=1, max=2),
        metadata={
            "description": (
                "Zoch edition only (S9): per card of `cards`, "
                "in the same order, whether a nigiri\n"
                "goes onto a free wasabi. Must have as many "
                "entries as `cards`. Omitted or null: yes."
            )
        },
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
        return {"seat": data.get("seat"), "move": pick, "turn": (data["round"], data["turn"])}


# --- the view -------------------------------------------------------------------------------------


class Tableau(Schema):
    class Meta:
        description = (
            "The cards placed this round, in order, and the nigiri that went onto a wasabi."
        )

    cards = fields.List(CARD, required=True)
    on_wasabi = fields.List(
        CARD,
        required=True,
        metadata={
            "description": "The nigiri placed onto a wasabi (S8/S9); they are in `cards` too."
        },
    )


class PickView(Schema):
    cards = fields.List(CARD, required=True)
    chopsticks = fields.Boolean(
        required=True, metadata={"description": "Two cards were picked with chopsticks (S6)."}
    )
    dummy_card = fields.String(validate=CARD.validate)
    use_wasabi = fields.List(fields.Boolean())
    auto = fields.Boolean(
        required=True,
        metadata={"description": "The service picked the last card automatically (S5)."},
    )
    by = fields.String(
        metadata={
            "description": (
                "Who picked, when not the seat's player: `bot` (a bot's seat), `clock` (the\n"
                "seat's time ran out; the `greedy` bot picked), `resigned` or `stalled` (the\n"
                "greedy bot plays the seat since). Absent for a player's own pick."
            ),
            "enum": ["bot", "clock", "resigned", "stalled"],
        }
    )  # "bot" or "clock": the service picked for the seat


class SeatView(SeatCommon):
    class Meta:
        description = "What everybody may see of a seat."

    hand_size = fields.Integer(
        required=True,
        metadata={
            "description": (
                "The number of cards the seat held when the turn began: a pick, even one of two\n"
                "cards with chopsticks, does not change it until the reveal (S4)."
            ),
            "minimum": 0,
        },
    )
    picked = fields.Boolean(
        required=True,
        metadata={"description": "Whether the seat has picked this turn (not what it picked, S4)."},
    )
    tableau = fields.Nested(Tableau, required=True)
    puddings = fields.Integer(
        required=True,
        metadata={"description": "Puddings kept from earlier rounds (S3).", "minimum": 0},
    )
    score = fields.Integer(
        required=True,
        metadata={"description": "Points from the rounds scored so far (and puddings, once over)."},
    )
    hand = fields.List(
        CARD,
        metadata={"description": "Once the game is over only. The seat's last hand."},
    )  # only once the game is over
    pick = fields.Nested(
        PickView,
        allow_none=True,
        metadata={
            "description": (
                "Once the game is over only (replays of its past states): the seat's recorded,\n"
                "unrevealed pick of that turn, or null."
            )
        },
    )  # only once the game is over


class DummyView(Schema):
    class Meta:
        description = "The dummy (2-player dummy variant, S17). Its pile is face down."

    controller = fields.Integer(
        allow_none=True,
        required=True,
        metadata={
            "description": "The seat controlling the dummy this turn (null unless playing).",
            "minimum": 0,
            "maximum": 1,
        },
    )
    pile_size = fields.Integer(required=True, metadata={"minimum": 0})
    pile = fields.List(
        CARD,
        metadata={
            "description": (
                "Once the game is over only (replays of its past states), top card first."
            )
        },
    )  # only once the game is over
    tableau = fields.Nested(Tableau, required=True)
    puddings = fields.Integer(required=True, metadata={"minimum": 0})
    score = fields.Integer(required=True)


class YouView(Schema):
    class Meta:
        description = "The viewing seat's own secrets."

    seat = fields.Integer(required=True, metadata={"minimum": 0, "maximum": 11})
    hand = fields.List(
        CARD,
        required=True,
        metadata={"description": "Your hand (after your pick, if you have picked this turn)."},
    )
    pick = fields.Nested(
        PickView,
        allow_none=True,
        required=True,
        metadata={"description": "Your pick of this turn, null until you pick."},
    )
    controls_dummy = fields.Boolean(
        required=True,
        metadata={
            "description": "You control the dummy this turn; name `dummy_card` in your pick (S17)."
        },
    )
    chopsticks_available = fields.Boolean(
        required=True,
        metadata={
            "description": (
                "A chopsticks card placed in an earlier turn "
                "lies in front of you: you may pick two\n"
                "cards (S6), if your hand holds enough."
            )
        },
    )
    awaiting_pick = fields.Boolean(
        required=True,
        metadata={"description": "The game waits for your pick this turn (S4, S5, S9)."},
    )
    chopsticks_usable = fields.Boolean(
        required=True,
        metadata={"description": "You may pick two cards now with your chopsticks (S6, S17)."},
    )
    free_wasabi = fields.Integer(
        required=True,
        metadata={"description": "Wasabi in front of you with no nigiri on them yet (S8)."},
    )


class LastRoundSeat(Schema):
    seat = fields.Integer(
        required=True,
        metadata={
            "description": "The scored seat: a player's, or the dummy's (`players`, S17).",
            "minimum": 0,
            "maximum": 4,
        },
    )
    tableau = fields.Nested(Tableau, required=True)
    points = fields.Integer(required=True, metadata={"description": "What the round gave it."})


class LastRound(Schema):
    class Meta:
        description = (
            "The round scored last, as its last reveal left the table (the current `seats[]`\n"
            "tableaux are the next round's): each scored seat's final tableau and that round's\n"
            "points. Per category: GET /games/{id}/scores."
        )

    round = fields.Integer(required=True, metadata={"minimum": 1, "maximum": 3})
    seats = fields.List(fields.Nested(LastRoundSeat), required=True, metadata={"maxItems": 5})


class RulesView(Schema):
    players = fields.Integer(required=True, metadata={"minimum": 2, "maximum": 5})
    edition = fields.String(required=True, validate=validate.OneOf(EDITIONS))
    pass_direction = fields.String(required=True, validate=validate.OneOf(PASS_DIRECTIONS))
    dummy = fields.Boolean(required=True)


class SeatTotal(Schema):
    seat = fields.Integer(required=True, metadata={"minimum": 0, "maximum": 4})
    name = fields.String(required=True)
    total = fields.Integer(required=True)


class SushiGoView(Schema):
    class Meta:
        description = (
            "A game as one viewer may see it. Present only in some views: `dummy` (dummy "
            "variant),\n"
            "`you` (a seat's own view, once the game has started), `winners`/`totals`/`seed` and\n"
            "`seats[].hand` (once the game is over)."
        )

    game_id = fields.UUID(required=True)
    game = fields.String(required=True, metadata={"const": SUSHI_GO.name})
    status = fields.String(
        required=True,
        metadata={
            "enum": ["waiting", "playing", "over", "cancelled"],
            "description": "`cancelled`: the seats did not fill in time (`game_cancelled`).",
        },
    )
    version = fields.Integer(
        required=True,
        metadata={"description": "The number of events recorded so far.", "minimum": 1},
    )
    rules = fields.Nested(RulesView, required=True)
    card_names = fields.Dict(
        keys=fields.String(),
        values=fields.String(),
        required=True,
        metadata={"description": "Card kind → the name this edition prints on it."},
    )
    seed_commitment = fields.String(
        required=True,
        metadata={
            "description": "SHA-256 of the game's secret seed, published at creation (S18).",
            "pattern": "^[0-9a-f]{64}$",
        },
    )
    round = fields.Integer(
        required=True,
        metadata={
            "description": "The current round, 1–3 (0 before the game starts).",
            "minimum": 0,
            "maximum": 3,
        },
    )
    turn = fields.Integer(
        required=True,
        metadata={
            "description": "The current turn within the round, from 1 (0 before the game starts).",
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
        metadata={
            "description": (
                "When the current turn times out: then the "
                "`greedy` bot picks for every seat that\n"
                "has not (`by: clock`). Only with a clock, "
                "while a turn waits for someone; in a past\n"
                "state (`/state`), the deadline that turn had."
            )
        }
    )  # set by the service while a timed turn waits
    seats = fields.List(fields.Nested(SeatView), required=True, metadata={"maxItems": 5})
    last_round = fields.Nested(
        LastRound,
        allow_none=True,
        required=True,
        metadata={"description": "Null until the first round is scored."},
    )
    dummy = fields.Nested(DummyView)
    you = fields.Nested(YouView)
    winners = fields.List(
        fields.Integer(),
        metadata={
            "description": "Once over. The winning seats; several when they share the win (S16).",
            "minItems": 1,
        },
    )
    totals = fields.List(
        fields.Nested(SeatTotal),
        metadata={
            "description": (
                "Once over. Final totals per scored seat (the dummy, named `dummy`, last, S17),\n"
                "as in `/scores`."
            )
        },
    )
    seed = fields.String(
        metadata={
            "description": (
                "Once over. The secret seed, hex; `sha256(seed) == seed_commitment` and it\n"
                "reproduces every deal (S18)."
            ),
            "pattern": "^[0-9a-f]{64}$",
        }
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


def _category(description: str) -> fields.Dict:
    """One category of a seat's round: the counts behind its points, and the points."""
    return fields.Dict(
        keys=fields.String(),
        values=fields.Integer(),
        required=True,
        metadata={"description": description},
    )


class SeatRound(Schema):
    class Meta:
        description = "One scored seat's round, per category with the counts behind the points."

    seat = fields.Integer(required=True, metadata={"minimum": 0, "maximum": 4})
    name = fields.String(required=True)
    maki = _category("`{icons, points}` (S11/S12).")
    tempura = _category("`{count, points}`.")
    sashimi = _category("`{count, points}`.")
    dumpling = _category("`{count, points}`.")
    nigiri = fields.Dict(
        keys=fields.String(),
        values=fields.Raw(),
        required=True,
        metadata={
            "description": "`{plain: {kind: count}, on_wasabi: {kind: count}, points}` (S8–S10)."
        },
    )
    wasabi = _category("`{count, unused, points}`.")
    pudding = _category("`{count, points}`; puddings score at the end of the game (S13).")
    total = fields.Integer(required=True)


class RoundSheet(Schema):
    round = fields.Integer(required=True, metadata={"minimum": 1, "maximum": 3})
    seats = fields.List(fields.Nested(SeatRound), required=True)


class PuddingScore(Schema):
    seat = fields.Integer(required=True, metadata={"minimum": 0, "maximum": 4})
    name = fields.String(required=True)
    count = fields.Integer(required=True, metadata={"minimum": 0})
    points = fields.Integer(required=True)


class SushiGoScoreSheet(Schema):
    game_id = fields.UUID(required=True)
    version = fields.Integer(required=True, metadata={"minimum": 1})
    categories = fields.List(fields.String(), required=True)
    rounds = fields.List(
        fields.Nested(RoundSheet),
        required=True,
        metadata={"description": "The rounds scored so far (S10–S12).", "maxItems": 3},
    )
    puddings = fields.List(
        fields.Nested(PuddingScore),
        allow_none=True,
        required=True,
        metadata={
            "description": "Pudding scores per scored seat (S13–S15); null until the game is over."
        },
    )
    totals = fields.List(
        fields.Nested(SeatTotal),
        required=True,
        metadata={"description": "Totals so far per scored seat (the dummy, named `dummy`, last)."},
    )
    winners = fields.List(
        fields.Integer(),
        allow_none=True,
        required=True,
        metadata={"description": "The winning seats (S16); null until the game is over."},
    )
