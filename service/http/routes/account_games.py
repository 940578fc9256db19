"""An account's games (issue 35): ``GET /accounts/{account_id}/games``, a page at a time or, with
``Accept: application/x-ndjson``, streamed. (``routes/history.py`` is one game's own events.)
The reads and why they are made at query time: service/store/account_games.py."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

from flask import Response, current_app, json, request, stream_with_context

from service.http import auth
from service.http.problems import Problem
from service.http.routes.accounts import account_of
from service.http.routes.common import api, game_url, games, json_response
from service.http.schemas import AccountGame, AccountGameList, AccountGamesQuery
from service.http.schemas.account_games import EXPORT_CAP
from service.store import account_games, budget
from service.store.account_games import HistoryQuery, HistoryRow
from service.store.event_types import GameCursor

NDJSON = "application/x-ndjson"
EXPORT_BATCH = 200  # games per statement of an export: its memory, and its first byte's wait
QUERY = AccountGamesQuery()
ITEM = AccountGame()
PAGE = AccountGameList()


@api.get("/accounts/<account_id>/games")
def account_games_list(account_id: str) -> Response:
    """
    ---
    get:
      tags:
      - accounts
      operationId: listAccountGames
      parameters:
      - AccountId
      - in: query
        schema: AccountGamesQuery
      summary: An account's games (its history)
      description: |
        Every game the account sat in (a seat left before the start does not count), oldest
        first (`order=newest`: newest first), filtered by `game`, `status`, creation time
        (`since`, `until`), another account that sat in it too (`vs`) and, for finished games,
        the account's `result`. Each game shows its rules, every seat (names and accounts;
        bots as `bot:<kind>`), its times and, once finished, its final totals, winners and the
        account's result: public facts only, never a hand or a pick.

        **Pages.** Keyset-paginated on the games' creation (a game keeps its place when it
        starts or finishes, so a walk neither repeats nor skips one): pass `next_after` as
        `after`, with the same filters and `order`; the `Link` header (`rel="next"`) holds
        the next page's URL. `next_after` is null on the last page.

        **Export.** With `Accept: application/x-ndjson` the same query is streamed, one
        `AccountGame` per line, up to 10,000 games (`limit` is ignored; every filter and
        `after` apply). To go past the cap, ask again with `since` set to the last line's
        `created_at` (`order=oldest`; that game comes again). The stream starts at once and is
        read from the database in batches, never held whole.

        **Private games** are listed only to their own players: a caller whose account token
        (scope `history:read`) belongs to an account that sat in the game. Anyone else sees
        the public games only.
      security:
      - {}
      - bearerAuth: []
      responses:
        '200':
          description: |
            One page of the account's games; or, asked for, the export: one `AccountGame`
            (an item of `AccountGameList.games`) per line.
          headers:
            Link: {$ref: '#/components/headers/NextPage'}
          content:
            application/json:
              schema: {$ref: '#/components/schemas/AccountGameList'}
            application/x-ndjson: {}
        '400':
          description: |
            - `invalid_request`: an unknown query parameter, or one out of range (see `errors`);
            - `invalid_cursor`: `after` is not the `next_after` value of a previous page.
          content:
            application/problem+json:
              schema: {$ref: '#/components/schemas/ListGamesBadRequest'}
        '401': AccountUnauthorized
        '403': InsufficientScope
        '404': AccountNotFound
        '500': InternalError
        '503': DatabaseUnavailable
    """
    args = QUERY.load(request.args.to_dict())
    account = account_of(account_id)
    viewer = auth.optional_account(games(), "history:read")
    query = HistoryQuery(
        account_id=account.id,
        viewer=None if viewer is None else viewer.account.id,
        game=args.get("game"),
        status=args.get("status"),
        since=args.get("since"),
        until=args.get("until"),
        vs=args.get("vs"),
        result=args.get("result"),
        order=args["order"],
        after=_cursor(args["after"]) if "after" in args else None,
    )
    if _wants_ndjson():
        return _export(query)
    limit = args["limit"]
    rows = account_games.page(games().store, query, limit + 1)
    shown = rows[:limit]
    next_after = shown[-1].cursor.encode() if len(rows) > limit else None
    body = {"games": [item(row) for row in shown], "next_after": next_after}
    response = json_response(PAGE.dump(body))
    if next_after is not None:
        response.headers["Link"] = f'<{_next_url(next_after)}>; rel="next"'
    return response


def _cursor(text: str) -> GameCursor:
    try:
        return GameCursor.decode(text)
    except ValueError:
        raise Problem(
            400, "invalid_cursor", "'after' must be the 'next_after' value of a previous page"
        ) from None


def _wants_ndjson() -> bool:
    return request.accept_mimetypes.best_match(["application/json", NDJSON]) == NDJSON


def _next_url(next_after: str) -> str:
    params = {**request.args.to_dict(), "after": next_after}
    return f"{request.path}?{urlencode(params)}"


def _export(query: HistoryQuery) -> Response:
    """The query's games as JSON Lines, streamed batch by batch (each with a time budget of
    its own: the stream outlives the request's)."""
    cap = int(current_app.config.get("CARDROOM_HISTORY_EXPORT_CAP", EXPORT_CAP))
    store = games().store

    def lines() -> Iterator[str]:
        for row in account_games.walk(store, query, cap, EXPORT_BATCH, start=budget.start):
            yield json.dumps(ITEM.dump(item(row))) + "\n"

    response = Response(stream_with_context(lines()), mimetype=NDJSON)
    response.headers["X-Accel-Buffering"] = "no"  # a proxy passes lines on as they come
    return response


def item(row: HistoryRow) -> dict[str, Any]:
    """A history item: public facts only (``game_ended``'s seed is not among them)."""
    ended = row.ended
    return {
        "game_id": row.game_id,
        "game": row.game,
        "rules": row.rules,
        "turn_seconds": row.turn_seconds,
        "visibility": "private" if row.private else "public",
        "url": game_url(row.game_id),
        "status": row.status,
        "seat": row.seat,
        "seats": [
            {"seat": s.seat, "name": s.name, "bot": s.bot, "account_id": s.account_id}
            for s in row.seats
        ],
        "created_at": row.created_at,
        "started_at": row.started_at,
        "finished_at": row.finished_at,
        "totals": None if ended is None else ended.get("totals", []),
        "winners": None if ended is None else ended.get("winners", []),
        "result": row.result,
    }
