"""The responses about games as a whole: the lobby's summaries and list, a seat granted (with its
token and receipt) or a rematch's, a private game's new invitation, and a game's rulings."""

from __future__ import annotations

from marshmallow import Schema, fields

from service.bodies import (
    RATED,
    RATING_POOL,
    RECEIPT_DESCRIPTION,
    VISIBILITY,
    Invitation,
    RatingValue,
    Receipt,
)


class SeatRating(RatingValue):
    """A rated game's seat in the lobby: its player's current rating in the game's pool."""

    anchor = fields.Boolean(
        required=True,
        metadata={"description": "A built-in bot's fixed anchor rating (it never moves)."},
    )


class SeatSummary(Schema):
    seat = fields.Integer(
        required=True, metadata={"description": "The seat's number, from 0.", "minimum": 0}
    )
    name = fields.String(
        allow_none=True,
        required=True,
        metadata={"description": "Who sits there; null while the seat is free."},
    )
    bot = fields.String(
        allow_none=True,
        required=True,
        metadata={"description": "The kind of bot playing the seat (`random`, `greedy`), or null."},
    )
    account_id = fields.String(
        allow_none=True,
        metadata={
            "description": "On a rated game only: who plays the seat in ratings, its account"
            " (`bot:<kind>` for a built-in bot's anchor), null while the seat is free."
        },
    )
    rating = fields.Nested(
        SeatRating,
        allow_none=True,
        metadata={
            "description": "On a rated game only: the seat's player's rating in the game's pool"
            " now (`GET /accounts/{id}/ratings`), null before their first rated game of the"
            " pool or while the seat is free. The lobby's list shows it."
        },
    )


class GameSummary(Schema):
    game_id = fields.UUID(required=True)
    game = fields.String(required=True)
    status = fields.String(
        required=True,
        metadata={
            "enum": ["waiting", "playing", "over", "cancelled"],
            "description": "`cancelled`: its seats did not fill in time (`game_cancelled`).",
        },
    )
    version = fields.Integer(required=True, metadata={"minimum": 0})
    created_at = fields.AwareDateTime(required=True)
    url = fields.String(required=True, metadata={"description": "The game's URL (relative)."})
    seats = fields.List(
        fields.Nested(SeatSummary),
        required=True,
        metadata={"description": "Every seat, in order, with who sits there (null while free)."},
    )
    free_seats = fields.Integer(
        required=True,
        metadata={
            "description": "How many seats a person can still join (seats kept for a bot are not).",
            "minimum": 0,
        },
    )
    visibility = VISIBILITY()
    rated = RATED()
    rating_pool = RATING_POOL()
    waiting_for = fields.List(
        fields.Integer(metadata={"minimum": 0}),
        required=True,
        metadata={
            "description": (
                "The seats whose move the game waits for (empty unless playing): every seat yet "
                "to pick in Sushi Go!, the seat to move in Sequence."
            )
        },
    )


class GameList(Schema):
    games = fields.List(fields.Nested(GameSummary), required=True)
    next_after = fields.String(
        allow_none=True,
        required=True,
        metadata={"description": "Pass as `after` for the next page; null on the last page."},
    )


class NewInvitation(Schema):
    """POST /games/{id}/invitation: the private game's new invitation (the old one no longer
    works)."""

    game_id = fields.UUID(required=True)
    invitation = fields.Nested(Invitation, required=True)


class InvitationStatus(Schema):
    """GET /games/{id}/invitation: whether the invitation a page holds still lets people join."""

    game_id = fields.UUID(required=True)
    active = fields.Boolean(
        required=True,
        metadata={
            "description": (
                "True while the invitation is in force. Asked with the invitation itself it is "
                "always true (one no longer in force is `403 invalid_invitation`); asked with "
                "the creator token, false once the creator revoked it and issued no new one."
            )
        },
    )


class SeatGranted(Schema):
    game_id = fields.UUID(required=True)
    seat = fields.Integer(required=True, metadata={"minimum": 0, "maximum": 11})
    name = fields.String(required=True)
    token = fields.String(
        required=True,
        metadata={
            "description": (
                "The seat's bearer token. **Shown only this "
                "once**: the service keeps only its hash."
            ),
            "minLength": 32,
        },
    )
    token_type = fields.String(required=True, metadata={"enum": ["Bearer"]})
    started = fields.Boolean(
        required=True,
        metadata={"description": "Taking this seat started the game (it was the last free seat)."},
    )
    receipt = fields.Nested(Receipt, metadata={"description": RECEIPT_DESCRIPTION})
    account_id = fields.String(
        metadata={"description": "The account the seat is for, when taken with an account token."}
    )


class RematchGranted(SeatGranted):
    """POST /games/{id}/rematch: your seat in the finished game's rematch (``game_id``)."""

    rematch_of = fields.UUID(
        required=True, metadata={"description": "The finished game this is the rematch of."}
    )


class Ruling(Schema):
    code = fields.String(required=True, metadata={"description": "The rule's code, e.g. `S8`."})
    text = fields.String(required=True, metadata={"description": "The ruling, as plain text."})


class Rulings(Schema):
    """GET /rules/{game}."""

    game = fields.String(required=True, metadata={"description": "The game, e.g. `sushi-go`."})
    rulings = fields.List(
        fields.Nested(Ruling),
        required=True,
        metadata={"description": "Every numbered ruling, in order."},
    )
    markdown = fields.String(
        required=True,
        metadata={"description": "The whole rulings page (tables, notes), as Markdown."},
    )
