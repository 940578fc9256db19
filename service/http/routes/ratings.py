"""Ratings (issue 37): ``GET /accounts/{account_id}/ratings``, ``GET /accounts/{account_id}/
ratings/history?pool=``, ``GET /leaderboards/{pool}`` and ``GET /leaderboards/{pool}/games`` (the
pool's rated games, what a rebuild reads). Public, as an account's history is:
every rated game is public (``POST /games`` refuses a private one), so anyone may recompute them
(``cardroom ratings rebuild``). Storage and why it is exact: service/store/ratings.py."""

from __future__ import annotations

import base64
import binascii
import math
from datetime import datetime
from typing import Any
from urllib.parse import urlencode
from uuid import UUID

from flask import Response, request, url_for

from domain.ratings import POOLS
from service.http.problems import Problem
from service.http.routes.accounts import account_of
from service.http.routes.common import api, game_url, games, json_response, text_args
from service.http.schemas.ratings import (
    AccountRatings,
    Leaderboard,
    LeaderboardQuery,
    PoolGames,
    PoolGamesQuery,
    RatingHistory,
    RatingHistoryQuery,
)
from service.store import ratings

ACCOUNT_RATINGS = AccountRatings()
HISTORY_QUERY = RatingHistoryQuery()
HISTORY = RatingHistory()
LEADERBOARD_QUERY = LeaderboardQuery()
LEADERBOARD = Leaderboard()
POOL_GAMES_QUERY = PoolGamesQuery()
POOL_GAMES = PoolGames()


@api.get("/accounts/<account_id>/ratings")
def account_ratings(account_id: str) -> Response:
    """
    ---
    get:
      tags:
      - ratings
      operationId: getAccountRatings
      parameters:
      - AccountId
      summary: An account's ratings, one per pool
      description: |
        The account's OpenSkill (Plackett-Luce) rating in each pool it has played a rated game
        of: `mu`, `sigma`, the displayed `ordinal` (`mu - 3 * sigma`), its rated `games` and
        whether it is still `provisional` (fewer than 10 rated games, or `sigma` not yet below
        7). A built-in bot (`bot:greedy`, `bot:random`) shows its fixed anchor rating in every
        pool. A rating changes only when a rated game ends, in the same transaction as its last
        event; `cardroom ratings rebuild` recomputes every one from the games' exports, bit for
        bit.
      security: []
      responses:
        '200':
          description: The account's ratings.
          content:
            application/json:
              schema: {$ref: '#/components/schemas/AccountRatings'}
        '404': AccountNotFound
        '500': InternalError
        '503': DatabaseUnavailable
    """
    account = account_of(account_id)
    found = ratings.of_account(games().store, account.id)
    body = {
        "account_id": account.id,
        "ratings": [
            {
                **ratings.shown(held.rating),
                "pool": held.pool,
                "anchor": held.anchor,
                "updated_at": held.updated_at,
            }
            for held in found
        ],
    }
    return json_response(ACCOUNT_RATINGS.dump(body))


@api.get("/accounts/<account_id>/ratings/history")
def rating_history(account_id: str) -> Response:
    """
    ---
    get:
      tags:
      - ratings
      operationId: getRatingHistory
      parameters:
      - AccountId
      - in: query
        schema: RatingHistoryQuery
      summary: An account's rating history in a pool
      description: |
        Every rated game of the pool the account played, with its rating before and after the
        game and its rank, the newest first (`order=oldest`: the oldest first). Keyset pages:
        pass `next_after` as `after` (with the same `pool` and `order`); the `Link` header
        (`rel="next"`) holds the next page's URL.
      security: []
      responses:
        '200':
          description: One page of the history.
          headers:
            Link: {$ref: '#/components/headers/NextPage'}
          content:
            application/json:
              schema: {$ref: '#/components/schemas/RatingHistory'}
        '400': InvalidQuery
        '404': AccountNotFound
        '500': InternalError
        '503': DatabaseUnavailable
    """
    args = HISTORY_QUERY.load(text_args())
    account = account_of(account_id)
    limit, newest = args["limit"], args["order"] == "newest"
    after = int(args["after"]) if "after" in args else None
    rows = ratings.history(games().store, account.id, args["pool"], after, limit + 1, newest)
    shown = rows[:limit]
    next_after = str(shown[-1].after.games) if len(rows) > limit else None
    body = {
        "account_id": account.id,
        "pool": args["pool"],
        "changes": [
            {
                "game_id": row.game_id,
                "url": game_url(row.game_id),
                "seat": row.seat,
                "rank": row.rank,
                "finished_at": row.finished_at,
                "before": ratings.shown(row.before),
                "after": ratings.shown(row.after),
            }
            for row in shown
        ],
        "next_after": next_after,
    }
    return _paged(HISTORY.dump(body), next_after)


@api.get("/leaderboards/<pool>")
def leaderboard(pool: str) -> Response:
    """
    ---
    get:
      tags:
      - ratings
      operationId: getLeaderboard
      parameters:
      - Pool
      - in: query
        schema: LeaderboardQuery
      summary: A pool's leaderboard
      description: |
        The pool's accounts whose rating is no longer provisional, the highest `ordinal`
        (`mu - 3 * sigma`) first. Keyset pages: pass `next_after` as `after`; the `Link` header
        (`rel="next"`) holds the next page's URL. A rating that changes while you page moves
        in the list: a walk shows each account at most once per page boundary it did not
        cross.
      security: []
      responses:
        '200':
          description: One page of the leaderboard.
          headers:
            Link: {$ref: '#/components/headers/NextPage'}
          content:
            application/json:
              schema: {$ref: '#/components/schemas/Leaderboard'}
        '400': PageBadRequest
        '404': PoolNotFound
        '500': InternalError
        '503': DatabaseUnavailable
    """
    _check_pool(pool)
    args = LEADERBOARD_QUERY.load(text_args())
    after = _cursor(args["after"]) if "after" in args else None
    limit = args["limit"]
    rows = ratings.leaderboard(games().store, pool, after, limit + 1)
    shown = rows[:limit]
    next_after = _encode(shown[-1].cursor) if len(rows) > limit else None
    players = [
        {"account_id": row.account_id, "name": row.name, **ratings.shown(row.rating)}
        for row in shown
    ]
    body = {"pool": pool, "players": players, "next_after": next_after}
    return _paged(LEADERBOARD.dump(body), next_after)


@api.get("/leaderboards/<pool>/games")
def pool_games(pool: str) -> Response:
    """
    ---
    get:
      tags:
      - ratings
      operationId: listPoolGames
      parameters:
      - Pool
      - in: query
        schema: PoolGamesQuery
      summary: A pool's rated games, in the order a rebuild folds them
      description: |
        Every rated game of the pool that has finished, in finish order (`finished_at`, ties by
        `game_id`): the order the service rated them in, and the order
        `cardroom ratings rebuild` folds their exports in. Each names its game and its export
        (`GET /games/{game_id}/export`), so a player can recompute every rating of the pool
        without walking account histories: `cardroom ratings rebuild --from <this server>
        --pool <pool>` does. Keyset pages: pass `next_after` as `after`; the `Link` header
        (`rel="next"`) holds the next page's URL. Rated finishes of a pool commit in finish
        order, so a walk to the last page sees every game that finished before it began,
        each once; games that finish during the walk only add to its end.
      security: []
      responses:
        '200':
          description: One page of the pool's rated games.
          headers:
            Link: {$ref: '#/components/headers/NextPage'}
          content:
            application/json:
              schema: {$ref: '#/components/schemas/PoolGames'}
        '400': PageBadRequest
        '404': PoolNotFound
        '500': InternalError
        '503': DatabaseUnavailable
    """
    _check_pool(pool)
    args = POOL_GAMES_QUERY.load(text_args())
    after = _game_cursor(args["after"]) if "after" in args else None
    limit = args["limit"]
    rows = ratings.games_of_pool(games().store, pool, after, limit + 1)
    shown = rows[:limit]
    next_after = _encode_game(shown[-1].cursor) if len(rows) > limit else None
    listed = [
        {
            "game_id": row.game_id,
            "finished_at": row.finished_at,
            "url": game_url(row.game_id),
            "export": url_for("api.export", game_id=str(row.game_id)),
        }
        for row in shown
    ]
    body = {"pool": pool, "games": listed, "next_after": next_after}
    return _paged(POOL_GAMES.dump(body), next_after)


def _check_pool(pool: str) -> None:
    if pool not in POOLS:
        raise Problem(
            404, "pool_not_found", f"there is no rating pool {pool!r}; pools: {', '.join(POOLS)}"
        )


def _paged(body: dict[str, Any], next_after: str | None) -> Response:
    response = json_response(body)
    if next_after is not None:
        params = {**request.args.to_dict(), "after": next_after}
        response.headers["Link"] = f'<{request.path}?{urlencode(params)}>; rel="next"'
    return response


def _encode(cursor: tuple[float, str]) -> str:
    """A leaderboard position: the ordinal's exact ``repr`` and the account id, base64url."""
    text = f"{cursor[0]!r} {cursor[1]}"
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def _cursor(text: str) -> tuple[float, str]:
    try:
        decoded = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode()
        ordinal, account = decoded.split(" ", 1)
        value = float(ordinal)
        if not account or not math.isfinite(value):
            raise ValueError(text)
        return value, account
    except (ValueError, UnicodeDecodeError, binascii.Error):
        raise Problem(
            400, "invalid_cursor", "'after' must be the 'next_after' value of a previous page"
        ) from None


def _encode_game(cursor: tuple[datetime, UUID]) -> str:
    """A place in a pool's finish order: the finish time (ISO 8601, to the microsecond, as
    stored) and the game id, base64url."""
    text = f"{cursor[0].isoformat()} {cursor[1]}"
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def _game_cursor(text: str) -> tuple[datetime, UUID]:
    try:
        decoded = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode()
        at, game_id = decoded.split(" ", 1)
        finished_at = datetime.fromisoformat(at)
        if finished_at.tzinfo is None:
            raise ValueError(text)
        return finished_at, UUID(game_id)
    except (ValueError, UnicodeDecodeError, binascii.Error):
        raise Problem(
            400, "invalid_cursor", "'after' must be the 'next_after' value of a previous page"
        ) from None
