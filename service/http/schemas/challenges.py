"""The bodies of challenges and quick match (issue 35). Requests refuse unknown fields
(``Strict``); answers carry only what is declared."""

from __future__ import annotations

from marshmallow import Schema, fields

from service.bodies import NAME, NAME_DESCRIPTION, TURN_SECONDS, VISIBILITIES
from service.http.schemas.games import SeatGranted
from service.http.schemas.requests import CreateGameRequest

STATUSES = ["offered", "accepted", "declined", "cancelled", "expired"]


class ChallengeRequest(CreateGameRequest):
    """POST /accounts/{account_id}/challenges: the game offered, as ``POST /games`` takes it.
    The challenger and the challenged take two seats; every other seat must be a bot's."""


class QuickMatchRequest(CreateGameRequest):
    """POST /games/quick: the rules of the game to be seated in (as ``POST /games`` takes
    them; quick match games are public, so no ``visibility``), and the seat's name."""

    class Meta(CreateGameRequest.Meta):
        exclude = ("visibility",)

    name = fields.String(
        validate=NAME,
        metadata={
            "description": "The seat's name: required without an account token; with one, the"
            f" account's name (leave it out). {NAME_DESCRIPTION}"
        },
    )


class AccountRef(Schema):
    account_id = fields.String(required=True)
    name = fields.String(required=True)


class ChallengeBot(Schema):
    seat = fields.Integer(required=True)
    kind = fields.String(required=True)
    name = fields.String(required=True)


class ChallengeLinks(Schema):
    self = fields.String(required=True, metadata={"description": "`GET` this challenge."})
    accept = fields.String(required=True, metadata={"description": "`POST`: the challenged."})
    decline = fields.String(required=True, metadata={"description": "`POST`: the challenged."})
    cancel = fields.String(required=True, metadata={"description": "`POST`: the challenger."})
    game = fields.String(
        allow_none=True, required=True, metadata={"description": "The game, once accepted."}
    )


class Challenge(Schema):
    """A challenge, as its parties read it (and as its stream items' ``data`` carry it, without
    ``links``)."""

    challenge_id = fields.UUID(required=True)
    status = fields.String(
        required=True,
        metadata={
            "enum": STATUSES,
            "description": "`offered` until answered; `expired` once `expires_at` has passed"
            " unanswered.",
        },
    )
    from_ = fields.Nested(AccountRef, data_key="from", required=True)
    to = fields.Nested(AccountRef, required=True)
    game = fields.String(required=True)
    players = fields.Integer(required=True)
    rules = fields.Dict(keys=fields.String(), required=True)
    bots = fields.List(fields.Nested(ChallengeBot), required=True)
    turn_seconds = fields.Integer(metadata={"minimum": TURN_SECONDS[0]})
    visibility = fields.String(required=True, metadata={"enum": list(VISIBILITIES)})
    rated = fields.Boolean(
        metadata={
            "description": "Present (`true`) when the game offered is rated (issue 37); an"
            " unrated challenge has no `rated`."
        }
    )
    created_at = fields.DateTime(required=True)
    expires_at = fields.DateTime(required=True)
    answered_at = fields.DateTime(allow_none=True, required=True)
    game_id = fields.UUID(
        allow_none=True, required=True, metadata={"description": "The game, once accepted."}
    )
    links = fields.Nested(ChallengeLinks, required=True)


class ChallengeList(Schema):
    """GET /accounts/me/challenges: the open ones, newest first."""

    incoming = fields.List(
        fields.Nested(Challenge), required=True, metadata={"description": "Offered to you."}
    )
    outgoing = fields.List(
        fields.Nested(Challenge), required=True, metadata={"description": "Offered by you."}
    )


class ChallengeAccepted(SeatGranted):
    """POST /challenges/{id}/accept: your seat in the new game (``game_id``)."""

    challenge = fields.Nested(Challenge, required=True)


class QuickSeat(SeatGranted):
    """POST /games/quick: your seat."""

    created = fields.Boolean(
        required=True,
        metadata={"description": "This request created the game (no waiting game had a seat)."},
    )


CHALLENGE_BODIES = (
    ChallengeRequest,
    Challenge,
    ChallengeList,
    ChallengeAccepted,
    QuickMatchRequest,
    QuickSeat,
)
