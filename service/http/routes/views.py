"""A game as one viewer sees it (``GET /games/{id}``): conditional, and a long poll when asked."""

from __future__ import annotations

from flask import Response, request

from service import metrics
from service.http import auth
from service.http.hangup import Hangup
from service.http.rematching import announced
from service.http.routes.common import (
    api,
    game_id_of,
    games,
    hub,
    json_response,
    open_streams,
    read,
    seen_versions,
    view_body,
    view_json,
)
from service.http.schemas import LONG_POLL_MAX_SECONDS, GameQuery
from service.live import hub as live

GAME_QUERY = GameQuery()
NO_QUERY = GAME_QUERY.load({})  # what a GET without a query string loads to, loaded once


@api.get("/games/<game_id>")
def get_game(game_id: str) -> Response:
    """
    ---
    get:
      tags:
      - games
      operationId: getGame
      parameters:
      - GameId
      - in: query
        schema: GameQuery
      - name: If-None-Match
        in: header
        description: An `ETag` of this resource; `304` if the view would be the same.
        schema:
          type: string
      summary: View a game
      description: |
        The game as the caller may see it. Without a token: the spectator's view (public
        information only). With a seat's token: the same plus `you` (that seat's own hand and
        its own unrevealed pick) once the game has started. Nobody sees another seat's hand, an
        unrevealed pick of another seat, the draw pile, the dummy's pile or the seed before the
        game is over; after it, everything is public (`seats[].hand`, `winners`, `totals`,
        `seed`).

        **Polling cheaply.** The answer carries an `ETag` (weak: the game's version and who is
        looking, since a seat and a spectator see different bodies); send it back in
        `If-None-Match` and the answer is `304 Not Modified`, without a body, until the view
        changes.

        **Long poll.** With `wait_after=N` the answer waits until the game's `version` is past
        `N` (it returns at once if it already is), or for `wait_seconds` (default and at most
        30); then it answers as usual: the view, changed or not (or `304` if it matches
        `If-None-Match`). Pass the `version` of the view you have. The answer (or a `503`
        with `Retry-After`) comes within `wait_seconds` plus the request budget (5 s unless
        the operator set `CARDROOM_REQUEST_BUDGET`) of the request's arrival: give your
        client a longer timeout. For every event as it happens, see
        `GET /games/{game_id}/stream`.
      security:
      - {}
      - bearerAuth: []
      responses:
        '200':
          description: The caller's view of the game.
          headers:
            ETag:
              $ref: '#/components/headers/ViewETag'
          content:
            application/json:
              schema: {$ref: '#/components/schemas/GameView'}
        '304':
          description: |
            The view is the one tagged by `If-None-Match`: keep yours. No body.
          headers:
            ETag:
              $ref: '#/components/headers/ViewETag'
        '400': InvalidQuery
        '401': BadToken
        '403': OtherGameToken
        '404': GameNotFound
        '429': TooManyStreams
        '500': InternalError
        '503': DatabaseUnavailable
    """
    gid = game_id_of(game_id)
    query = GAME_QUERY.load(request.args.to_dict()) if request.args else NO_QUERY
    after = query.get("wait_after")
    loaded = read(gid, *seen_versions(query), after or 0)
    seat = auth.optional_seat(games(), gid)
    if after is not None and loaded.version <= after:  # a long poll waits
        # once woken, the answer must be past ``after`` (a standby may not have it yet)
        seconds = query.get("wait_seconds", LONG_POLL_MAX_SECONDS)
        release = open_streams().admit(request.remote_addr or "")
        try:
            gone = Hangup(request.environ.get("gunicorn.socket"))
            reload = lambda: read(gid, after + 1)  # noqa: E731
            with metrics.LONG_POLLS.track_inprogress():
                loaded = live.wait_past(hub(), gid, after, seconds, reload, loaded, gone)
        finally:
            release()
    # A seat and a spectator see different bodies at the same version: the tag names both.
    # A finished game's rematch changes the view, not the version: the tag says it too.
    extra = announced(gid, loaded.adapter.game.is_over(loaded.state))
    tag = f"{loaded.version}-{'spectator' if seat is None else f'seat{seat}'}"
    tag += "-rematch" if extra else ""
    headers = {"ETag": f'W/"{tag}"', "Vary": "Authorization"}
    if request.if_none_match.contains_weak(tag):
        return Response(status=304, headers=headers)
    if extra:  # a rematch announced: the view changed, not the version (view_json's key)
        return json_response(view_body(loaded, seat, **extra), 200, **headers)
    return json_response(view_json(loaded, seat), 200, **headers)
