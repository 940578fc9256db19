"""The marshmallow building blocks of every body, shared by the HTTP layer and each game's own
schemas (service/games/<game>/schemas.py): strict loading, strict booleans, plain text."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from marshmallow import RAISE, Schema, ValidationError, fields, validate

from domain.ratings import POOLS, PROVISIONAL_GAMES, SIGMA_BOUND

# Text the service stores or filters by: no control characters (C0, DEL, C1; a NUL cannot even
# be stored in PostgreSQL text, and escapes would reach terminals through `cardroom replay`) and
# no lone surrogates (not encodable as UTF-8). openapi.yaml says the same with a `pattern`.
_NOT_TEXT = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


# plain_text as the contract says it (JSON Schema patterns cannot name lone surrogates)
PLAIN_TEXT_PATTERN = "^[^\\x00-\\x1F\\x7F-\\x9F]*$"


def plain_text(value: str) -> None:
    if _NOT_TEXT.search(value):
        raise ValidationError("must not contain control characters or lone surrogates")


# A list, not validate.And: apispec reads the Length into the contract.
GAME_KIND: list[Callable[[Any], Any]] = [validate.Length(min=1, max=40), plain_text]
# A seat's name: the rules check it (domain/names.py: 422 invalid_name says why); the schema
# only bounds the text it hands them.
NAME: list[Callable[[Any], Any]] = [validate.Length(max=128)]
NAME_DESCRIPTION = (
    "NFC-normalised and stripped of surrounding spaces, then 1–32 visible characters with no"
    " control, format (direction overrides, zero-width), separator or invisible characters,"
    " in one script or a mix Unicode UTS #39 allows (else `422 invalid_name`, `details.reason`"
    " says why); two seats of a game cannot have names that look alike, by UTS #39's confusable"
    " skeletons (`409 name_taken`)."
)
TURN_SECONDS = (5, 3600)  # the turn clock's bounds: tests inject "now" rather than wait


class Strict(Schema):
    class Meta:
        unknown = RAISE


def TURN_NUMBER(name: str) -> fields.Integer:  # noqa: N802 (a field factory, named as one)
    """The ``round`` or ``turn`` a move answers, as the game's view shows it: a move counts only
    for that turn (409 ``stale_move`` once the game has moved on)."""
    return fields.Integer(
        required=True,
        strict=True,
        validate=validate.Range(min=0),
        metadata={
            "description": f"The game view's `{name}` this move answers; a move sent for any"
            " other turn is refused with 409 `stale_move` and changes nothing."
        },
        error_messages={
            "required": f"name the turn this move answers: send the game view's '{name}'"
        },
    )


def MOVE_SEAT(most: int) -> fields.Integer:  # noqa: N802 (a field factory, named as one)
    """A move's optional ``seat``: the token decides the seat; a seat named must be its own."""
    return fields.Integer(
        strict=True,
        validate=validate.Range(min=0, max=most),
        metadata={
            "description": (
                "Optional; if given, it must be the token's seat (else `403 not_your_seat`)."
            )
        },
    )


class StrictBoolean(fields.Boolean):
    """JSON true or false only: not "true", 1 or "yes"."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> bool:
        if not isinstance(value, bool):
            raise self.make_error("invalid", input=value)
        return value


class Receipt(Schema):
    """The service's signature over (game_id, version, commitment to the hash) of the last event
    a command appended (domain/receipts.py; the format is in the README)."""

    format = fields.String(
        required=True, metadata={"description": "the receipt format: `cardroom-receipt/1`"}
    )
    game_id = fields.String(required=True, metadata={"description": "the game, a UUID"})
    version = fields.Integer(
        required=True, metadata={"description": "the version of the last event appended"}
    )
    commitment = fields.String(
        required=True,
        metadata={
            "description": "HMAC-SHA256 keyed by the game's seed of 'cardroom-receipt-v1', a"
            " zero byte and that event's hash (64 hex): checkable once the seed is revealed"
        },
    )
    kid = fields.String(
        required=True,
        metadata={"description": "the signing key's id in GET /.well-known/cardroom-keys"},
    )
    signature = fields.String(
        required=True,
        metadata={
            "description": "Ed25519 signature, base64url without padding, over the RFC 8785"
            " canonical JSON of the other five members"
        },
    )


RECEIPT_DESCRIPTION = "the service's signed receipt for this command (keep it: evidence)"

VISIBILITIES = ("public", "private")


def VISIBILITY() -> fields.String:  # noqa: N802 (a field factory, named as one)
    return fields.String(
        metadata={
            "description": "`public`: listed in `GET /games`, anyone may join. `private`: not"
            " listed (only by id, `GET /games?ids=`), joining needs the invitation.",
            "enum": list(VISIBILITIES),
        }
    )


class Invitation(Schema):
    """A private game's secrets, in the answer that creates it only: **shown this once**."""

    token = fields.String(
        required=True,
        metadata={
            "description": "The invitation: send it as `invitation` when joining. Share it (the"
            " web page makes it a link). The service keeps only its hash.",
            "minLength": 32,
        },
    )
    creator_token = fields.String(
        metadata={
            "description": "Yours, the creator's: as `Authorization: Bearer <creator_token>` it"
            " revokes the invitation (`DELETE /games/{id}/invitation`) or issues a new one"
            " (`POST`). Not a seat's token. Only in the answer that creates the game.",
            "minLength": 32,
        },
    )
    link = fields.String(
        required=True,
        metadata={
            "description": "The web page's link that joins with this invitation (relative: put"
            " the service's origin before it). The token is in the fragment: browsers never"
            " send it in a request line or a `Referer`."
        },
    )


class SeatCommon(Schema):
    """What everybody may see of any game's seat; each game's seat view adds its own fields."""

    seat = fields.Integer(required=True, metadata={"minimum": 0, "maximum": 11})
    name = fields.String(
        allow_none=True,
        required=True,
        metadata={"description": "The seat's name, null while the seat is free."},
    )
    taken = fields.Boolean(required=True)
    bot = fields.String(
        allow_none=True,
        required=True,
        metadata={
            "description": (
                "The kind of bot playing the seat (`random`, "
                "`greedy`), from the game's creation on;\n"
                "null for a person's seat."
            )
        },
    )
    taken_over = fields.String(
        allow_none=True,
        required=True,
        metadata={
            "description": (
                "Why the greedy bot plays this person's seat from now on: `resigned` (its\n"
                "player resigned) or `stalled` (the game waited too long for it); null otherwise."
            ),
            "enum": ["resigned", "stalled", None],
        },
    )
    resigned = fields.Boolean(
        required=True,
        metadata={"description": "The seat's player resigned (`taken_over` is `resigned`)."},
    )


class RematchView(Schema):
    """A finished game's rematch, once a player proposed it (``POST /games/{id}/rematch``)."""

    game_id = fields.UUID(
        required=True,
        metadata={
            "description": "The rematch: a new game with the same rules, bots, clock and"
            " visibility. Each player of this game takes a seat in it with"
            " `POST /games/{id}/rematch` (this game's id and seat token)."
        },
    )
    proposed_by = fields.Integer(
        required=True,
        metadata={"description": "The seat of this game that proposed it.", "minimum": 0},
    )
    proposed_at = fields.AwareDateTime(required=True)


def REMATCH() -> fields.Nested:  # noqa: N802 (a field factory, named as one)
    return fields.Nested(
        RematchView,
        metadata={
            "description": "Once over, and once a player proposed it: this game's rematch."
            " The event stream announces it too (a `rematch` message)."
        },
    )


# --- ratings (issue 37): shared by the ratings routes and the rated games' views ---------------

POOL_DESCRIPTION = (
    "The rating pool: one per game and edition (`sushi-go-gamewright`, `sushi-go-zoch`,"
    " `sequence`)."
)
PROVISIONAL_DESCRIPTION = (
    f"True until the account has played at least {PROVISIONAL_GAMES} rated games of the pool"
    f" and its `sigma` is below {SIGMA_BOUND}; provisional ratings are not on the leaderboard."
)


def POOL() -> fields.String:  # noqa: N802 (a field factory, named as one)
    return fields.String(
        required=True, metadata={"enum": list(POOLS), "description": POOL_DESCRIPTION}
    )


class RatingValue(Schema):
    """A rating: OpenSkill's (Plackett-Luce) mu and sigma, the displayed ordinal mu - 3 sigma."""

    mu = fields.Float(required=True, metadata={"description": "The skill estimate (starts at 25)."})
    sigma = fields.Float(
        required=True,
        metadata={"description": "Its uncertainty (starts at 25/3 and shrinks with games)."},
    )
    ordinal = fields.Float(
        required=True,
        metadata={"description": "The displayed rating, `mu - 3 * sigma` (starts at 0)."},
    )
    games = fields.Integer(
        required=True, metadata={"description": "Rated games of the pool played.", "minimum": 0}
    )
    provisional = fields.Boolean(required=True, metadata={"description": PROVISIONAL_DESCRIPTION})


class SeatRatingChange(Schema):
    """A seat's rating change, in a finished rated game's view."""

    seat = fields.Integer(required=True, metadata={"minimum": 0})
    account_id = fields.String(required=True)
    pool = POOL()
    rank = fields.Integer(required=True, metadata={"minimum": 1})
    before = fields.Nested(RatingValue, required=True)
    after = fields.Nested(RatingValue, required=True)


def RATED() -> fields.Boolean:  # noqa: N802 (a field factory, named as one)
    return fields.Boolean(
        metadata={
            "description": "Present (true) on a rated game (`rated: true` at creation): every"
            " person's seat is an account's, and it counts for their ratings once it ends."
        }
    )


def RATING_POOL() -> fields.String:  # noqa: N802 (a field factory, named as one)
    return fields.String(
        metadata={
            "enum": list(POOLS),
            "description": "On a rated game: the rating pool it counts in (`GET /leaderboards/"
            "{pool}`).",
        }
    )


def RATED_ACCOUNTS() -> fields.List:  # noqa: N802 (a field factory, named as one)
    return fields.List(
        fields.String(allow_none=True),
        metadata={
            "description": "On a rated game: each seat's account, in seat order (`bot:<kind>` for"
            " a built-in bot's fixed anchor, null while the seat is free), whose ratings"
            " `GET /accounts/{account_id}/ratings` shows."
        },
    )


def RATING_CHANGES() -> fields.List:  # noqa: N802 (a field factory, named as one)
    return fields.List(
        fields.Nested(SeatRatingChange),
        metadata={
            "description": "Once a rated game is over: each rated seat's rating change (the"
            " built-in bots' fixed ratings do not change), in seat order."
        },
    )
