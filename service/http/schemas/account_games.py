"""The bodies of an account's history (issue 35, ``GET /accounts/{account_id}/games``): its query
string, one game as the history lists it, and a page. Only public facts: seats, names, times,
and for a finished game its final totals and winners (never a hand, a pick or a seed)."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from service.bodies import VISIBILITY, Strict
from service.http.schemas.games import SeatSummary

# The most games one export (``Accept: application/x-ndjson``) streams; the app's
# ``CARDROOM_HISTORY_EXPORT_CAP`` config lowers it (tests).
EXPORT_CAP = 10_000
PAGE_DEFAULT = 20
PAGE_MAX = 100
RESULT_DESCRIPTION = (
    "`win`: the account's seat is among the winners (Sushi Go!: the highest total, a tie going"
    " to the most puddings, still tied the win is shared, S16; Sequence: its team completed the"
    " sequences, Q10); `draw`: a Sequence game that ended with every seat passing (Q8);"
    " `loss`: any other finished game. Cancelled and unfinished games have none."
)


class AccountGamesQuery(Strict):
    """GET /accounts/{account_id}/games's query string."""

    game = fields.String(
        validate=validate.OneOf(["sushi-go", "sequence"]),
        metadata={"description": "Only games of this kind."},
    )
    status = fields.String(
        validate=validate.OneOf(["waiting", "playing", "over", "cancelled"]),
        metadata={"description": "Only games in this status (as it is when the page is read)."},
    )
    since = fields.AwareDateTime(
        metadata={"description": "Only games created at or after this time (RFC 3339)."}
    )
    until = fields.AwareDateTime(
        metadata={"description": "Only games created before this time (RFC 3339)."}
    )
    vs = fields.String(
        validate=validate.Length(min=1, max=64),
        metadata={
            "description": "Only games this other account sat in too (an account id, e.g."
            " `bot:greedy`)."
        },
    )
    result = fields.String(
        validate=validate.OneOf(["win", "loss", "draw"]),
        metadata={"description": "Only finished games with this result. " + RESULT_DESCRIPTION},
    )
    order = fields.String(
        load_default="oldest",
        validate=validate.OneOf(["oldest", "newest"]),
        metadata={
            "description": "`oldest`: by the games' creation, oldest first (ties broken by"
            " `game_id`); `newest`: the reverse. A game keeps its place when it starts or ends."
        },
    )
    after = fields.String(
        validate=validate.Length(max=200),
        metadata={
            "description": "The opaque `next_after` value of the previous page (a position in"
            " the list, as `GET /games`'s): pass the same filters and `order` on every page."
        },
    )
    limit = fields.Integer(
        load_default=PAGE_DEFAULT,
        validate=validate.Range(min=1, max=PAGE_MAX),
        metadata={
            "description": "The most games on one page (ignored by the export, which streams up"
            f" to {EXPORT_CAP:,} games)."
        },
    )


class HistorySeat(SeatSummary):
    account_id = fields.String(
        allow_none=True,
        required=True,
        metadata={
            "description": "The seat's account: a person's account id, `bot:<kind>` for a"
            " built-in bot, null for a seat taken without an account (or free)."
        },
    )


class FinalTotal(Schema):
    seat = fields.Integer(
        metadata={"description": "Sushi Go!: the seat (the dummy is the extra seat, S17)."}
    )
    team = fields.Integer(metadata={"description": "Sequence: the team (Q4)."})
    total = fields.Integer(
        required=True,
        metadata={"description": "Sushi Go!: points with puddings (S16); Sequence: sequences."},
    )


class AccountGame(Schema):
    """One game of an account's history."""

    game_id = fields.UUID(required=True)
    game = fields.String(required=True, metadata={"description": "`sushi-go` or `sequence`."})
    rules = fields.Dict(
        required=True,
        metadata={
            "description": "The game's rules as created (`players` and the game's options, as"
            " `POST /games` took them)."
        },
    )
    turn_seconds = fields.Integer(
        allow_none=True, required=True, metadata={"description": "The turn clock, if any."}
    )
    visibility = VISIBILITY()
    url = fields.String(required=True, metadata={"description": "The game's URL (relative)."})
    status = fields.String(
        required=True, metadata={"enum": ["waiting", "playing", "over", "cancelled"]}
    )
    seat = fields.Integer(
        required=True, metadata={"description": "The account's seat.", "minimum": 0}
    )
    seats = fields.List(
        fields.Nested(HistorySeat),
        required=True,
        metadata={"description": "Every seat, in order (the account's too), who sits there."},
    )
    created_at = fields.AwareDateTime(required=True)
    started_at = fields.AwareDateTime(allow_none=True, required=True)
    finished_at = fields.AwareDateTime(
        allow_none=True,
        required=True,
        metadata={"description": "When it ended or was cancelled; null before."},
    )
    totals = fields.List(
        fields.Nested(FinalTotal),
        allow_none=True,
        required=True,
        metadata={"description": "A finished game's final totals (`game_ended`); else null."},
    )
    winners = fields.List(
        fields.Integer(metadata={"minimum": 0}),
        allow_none=True,
        required=True,
        metadata={"description": "A finished game's winning seats (empty: a draw); else null."},
    )
    result = fields.String(
        allow_none=True,
        required=True,
        metadata={"enum": ["win", "loss", "draw", None], "description": RESULT_DESCRIPTION},
    )


class AccountGameList(Schema):
    games = fields.List(fields.Nested(AccountGame), required=True)
    next_after = fields.String(
        allow_none=True,
        required=True,
        metadata={
            "description": "Pass as `after` (with the same filters) for the next page; null on"
            ' the last page. The `Link` header (`rel="next"`) holds that page\'s URL.'
        },
    )
