"""The bodies of ratings (issue 37): an account's ratings, its rating history in a pool, a pool's
leaderboard, and a rated game's rating changes in its view. Floats are sent as computed (the
shortest decimal that reads back to the same binary64): a rebuild from exports compares equal."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from domain.ratings import POOLS
from service.bodies import POOL, POOL_DESCRIPTION, RatingValue, Strict

PAGE_DEFAULT = 50
PAGE_MAX = 200


class PoolRating(RatingValue):
    pool = POOL()
    anchor = fields.Boolean(
        required=True,
        metadata={
            "description": "A built-in bot's fixed rating (`bot:greedy`, `bot:random`): it takes"
            " part in every rated game the bot plays and never moves."
        },
    )
    updated_at = fields.AwareDateTime(
        allow_none=True,
        required=True,
        metadata={"description": "When its last rated game finished (null for an anchor)."},
    )


class AccountRatings(Schema):
    account_id = fields.String(required=True)
    ratings = fields.List(
        fields.Nested(PoolRating),
        required=True,
        metadata={"description": "One per pool the account has played a rated game of."},
    )


class RatingHistoryQuery(Strict):
    pool = fields.String(
        required=True,
        validate=validate.OneOf(POOLS),
        metadata={"description": POOL_DESCRIPTION},
    )
    order = fields.String(
        load_default="newest",
        validate=validate.OneOf(["newest", "oldest"]),
        metadata={"description": "`newest` (default): the latest rated game first."},
    )
    after = fields.String(
        validate=validate.Regexp(r"^[0-9]{1,9}$"),
        metadata={"description": "The `next_after` value of the previous page."},
    )
    limit = fields.Integer(load_default=PAGE_DEFAULT, validate=validate.Range(min=1, max=PAGE_MAX))


class RatingChange(Schema):
    """What one rated game did to one account's rating."""

    game_id = fields.UUID(required=True)
    url = fields.String(required=True, metadata={"description": "The game's URL (relative)."})
    seat = fields.Integer(required=True, metadata={"minimum": 0})
    rank = fields.Integer(
        required=True,
        metadata={
            "description": "Its place (1: first; equal ranks are a tie; a seat that resigned"
            " or stalled ranks last).",
            "minimum": 1,
        },
    )
    finished_at = fields.AwareDateTime(
        required=True,
        metadata={
            "description": "When the game finished: the `recorded_at` of its last event in"
            " the export, the order a rebuild folds games in."
        },
    )
    before = fields.Nested(RatingValue, required=True)
    after = fields.Nested(RatingValue, required=True)


class RatingHistory(Schema):
    account_id = fields.String(required=True)
    pool = POOL()
    changes = fields.List(fields.Nested(RatingChange), required=True)
    next_after = fields.String(
        allow_none=True,
        required=True,
        metadata={"description": "Pass as `after` for the next page; null on the last."},
    )


class LeaderboardQuery(Strict):
    after = fields.String(
        validate=validate.Length(max=200),
        metadata={"description": "The opaque `next_after` value of the previous page."},
    )
    limit = fields.Integer(load_default=PAGE_DEFAULT, validate=validate.Range(min=1, max=PAGE_MAX))


class Standing(RatingValue):
    account_id = fields.String(required=True)
    name = fields.String(required=True)


class Leaderboard(Schema):
    pool = POOL()
    players = fields.List(
        fields.Nested(Standing),
        required=True,
        metadata={
            "description": "Non-provisional accounts, the highest `ordinal` first (ties: the"
            " greater `account_id` first)."
        },
    )
    next_after = fields.String(
        allow_none=True,
        required=True,
        metadata={"description": "Pass as `after` for the next page; null on the last."},
    )


POOL_GAMES_DEFAULT = 100
POOL_GAMES_MAX = 1000  # rows of three short fields: a rebuild walks every rated game of a pool


class PoolGamesQuery(Strict):
    after = fields.String(
        validate=validate.Length(max=200),
        metadata={"description": "The opaque `next_after` value of the previous page."},
    )
    limit = fields.Integer(
        load_default=POOL_GAMES_DEFAULT, validate=validate.Range(min=1, max=POOL_GAMES_MAX)
    )


class PoolGame(Schema):
    """A rated game of the pool, in the order a rebuild folds it."""

    game_id = fields.UUID(required=True)
    finished_at = fields.AwareDateTime(
        required=True,
        metadata={
            "description": "When the game finished and was rated: the `recorded_at` of its last"
            " event in its export."
        },
    )
    url = fields.String(required=True, metadata={"description": "The game's URL (relative)."})
    export = fields.String(
        required=True,
        metadata={"description": "Its export's URL (relative): what a rebuild reads."},
    )


class PoolGames(Schema):
    pool = POOL()
    games = fields.List(
        fields.Nested(PoolGame),
        required=True,
        metadata={
            "description": "In finish order (`finished_at`, ties by `game_id`): the order a"
            " rebuild folds them in."
        },
    )
    next_after = fields.String(
        allow_none=True,
        required=True,
        metadata={"description": "Pass as `after` for the next page; null on the last."},
    )


RATING_BODIES = (AccountRatings, RatingHistory, Leaderboard, PoolGames)
