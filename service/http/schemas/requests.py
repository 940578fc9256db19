"""The request bodies every game shares: create a game (with its bots), join it, audit it with
the receipts its players kept. Unknown fields are refused (``Strict``); a game's own bodies (its
options, its moves) are in service/games/<game>/schemas.py."""

from __future__ import annotations

from typing import Any

from marshmallow import fields, post_load, validate

from domain.decider import BotSeat
from service.bodies import (
    GAME_KIND,
    NAME,
    NAME_DESCRIPTION,
    TURN_SECONDS,
    VISIBILITIES,
    Strict,
    StrictBoolean,
)


class CreateGameRequest(Strict):
    game = fields.String(
        required=True, validate=GAME_KIND, metadata={"description": "which game, e.g. sushi-go"}
    )
    players = fields.Integer(
        strict=True,
        required=True,
        validate=validate.Range(min=1, max=12),
        metadata={
            "description": (
                "The number of players. The schema takes 1–12; the game's rules narrow it\n"
                "(Sushi Go!: gamewright 2–5, zoch 3–5; Sequence: 2, 3, 4, 6, 8, 9, 10 or 12, Q4;\n"
                "else `422 invalid_rules`)."
            )
        },
    )
    rules = fields.Dict(
        keys=fields.String(),
        load_default=dict,
        metadata={"description": "The rules of the game named by `game`, in its own schema."},
    )
    bots = fields.List(
        fields.Nested(lambda: BotRequest()),
        load_default=list,
        validate=validate.Length(max=12),
        metadata={
            "description": (
                "Seats played by the service's bots (one per seat). People take the other seats."
            )
        },
    )
    visibility = fields.String(
        load_default="public",
        validate=validate.OneOf(VISIBILITIES),
        metadata={
            "description": (
                "`private`: the game is not listed in `GET /games` and joining needs its\n"
                "invitation, returned once in this answer's `invitation` with a creator token\n"
                "that can revoke it. Default `public`."
            )
        },
    )
    turn_seconds = fields.Integer(
        strict=True,
        validate=validate.Range(*TURN_SECONDS),
        metadata={
            "description": (
                "Seconds each seat has for each move; when "
                "they run out, the `greedy` bot moves for\n"
                "the seat (`by: clock`). Omitted: no clock."
            )
        },
    )
    rated = StrictBoolean(
        load_default=False,
        metadata={
            "description": (
                "`true`: the game counts for its players' ratings once it ends (issue 37;\n"
                "`GET /accounts/{account_id}/ratings`). Every person's seat must be taken with\n"
                "an account token (else `403 account_required`); the built-in bots play as their\n"
                "fixed anchor ratings. A rated game is public and has a seat for a person (else\n"
                "`422 invalid_rated`). Default `false`."
            )
        },
    )


class BotRequest(Strict):
    """A seat for one of the game's bots; the game checks the seat and the kind (422)."""

    class Meta(Strict.Meta):
        description = "A seat for one of the game's bots."

    seat = fields.Integer(
        strict=True,
        required=True,
        validate=validate.Range(min=0, max=11),
        metadata={
            "description": "The bot's seat; it must exist in the game (else `422 invalid_bots`)."
        },
    )
    kind = fields.String(
        required=True,
        validate=validate.Length(min=1, max=40),
        metadata={
            "description": (
                "`random` (a legal move at random, from numbers derived from the game's secret\n"
                "seed) or `greedy` (the move worth the most points now); else `422 invalid_bots`."
            ),
            "examples": ["greedy", "random"],
        },
    )
    name = fields.String(
        validate=NAME,
        metadata={
            "description": f"The seat's name; default `<kind> bot <seat>`. {NAME_DESCRIPTION}"
        },
    )

    @post_load
    def _to_bot(self, data: dict[str, Any], **_: Any) -> BotSeat:
        name = data.get("name", f"{data['kind']} bot {data['seat']}")
        return BotSeat(data["seat"], data["kind"], name)


class JoinRequest(Strict):
    name = fields.String(
        validate=NAME,
        metadata={
            "description": "The name shown for the seat; required, unless an account token takes"
            f" the seat (its name is the account's). {NAME_DESCRIPTION}"
        },
    )
    invitation = fields.String(
        validate=validate.Length(max=128),
        metadata={
            "description": "A private game's invitation (`invitation.token` of the answer that"
            " created it); else `403 invitation_required` or `invalid_invitation`. Ignored by"
            " public games."
        },
    )


class AnonymousJoinRequest(JoinRequest):
    """A join without an account token: the seat's name is required."""

    name = fields.String(required=True, validate=NAME)


class AuditRequest(Strict):
    """POST /games/{id}/audit: the audit, with receipts the players kept."""

    receipts = fields.List(
        fields.Raw(),
        required=True,
        validate=validate.Length(max=10_000),
        metadata={"description": "receipts as the service gave them (`receipt` members)"},
    )
