"""Giving a seat up: leaving it before the start (``seat_left``), resigning after it
(``seat_taken_over``: the greedy bot plays the seat from then on). Both act for the token's seat;
neither takes a body. Games that stall or never fill are handled by the sweeper
(service/live/clock.py), not here."""

from __future__ import annotations

from collections.abc import Callable

from flask import Blueprint, Response

from service.http import auth, idempotency
from service.http.routes.common import as_it_was, game_id_of, games, load, view_body, with_receipt

leaving_api = Blueprint("leaving", __name__)


@leaving_api.post("/games/<game_id>/leave")
def leave_game(game_id: str) -> Response:
    """
    ---
    post:
      tags:
      - play
      operationId: leaveGame
      parameters:
      - GameId
      - IdempotencyKey
      - IdempotencySecret
      summary: Leave your seat before the start
      description: |
        Gives the token's seat up while the game waits for its seats (`seat_left`): the seat is
        free again, the next person to join takes it (with a new token), and **this token acts
        for no seat any more** (`401 invalid_token` from then on). Once the game has started,
        resign instead (`POST /games/{game_id}/resign`). The answer is the game as a spectator
        sees it now. A retry with the same `Idempotency-Key` gets that first answer again (the
        token is still recognised for it).
      security:
      - bearerAuth: []
      responses:
        '200':
          description: The seat is free again. The game as a spectator sees it.
          headers:
            Idempotent-Replayed:
              $ref: '#/components/headers/IdempotentReplayed'
            Cardroom-Receipt:
              $ref: '#/components/headers/Receipt'
          content:
            application/json:
              schema: {$ref: '#/components/schemas/GameView'}
        '401':
          description: |
            - `missing_token`: no `Authorization` header;
            - `invalid_token`: the header is not `Bearer <token>`, the token is unknown, or its
              seat was left already.
          headers:
            WWW-Authenticate:
              $ref: '#/components/headers/WWWAuthenticate'
          content:
            application/problem+json:
              schema: {$ref: '#/components/schemas/MoveUnauthorized'}
        '403': NotYourGame
        '404': GameNotFound
        '409':
          description: |
            - `game_started`: the game has started (or is over): resign instead;
            - `game_cancelled`: the game was cancelled (its seats did not fill in time);
            - `too_many_conflicts`: the game changed under this request too many times in a
              row; send it again after `Retry-After` seconds;
            - `idempotency_key_in_use`: a request with this `Idempotency-Key` is still
              running; send it again after `Retry-After` seconds.
          headers:
            Retry-After:
              $ref: '#/components/headers/RetryAfter'
          content:
            application/problem+json:
              schema: {$ref: '#/components/schemas/LeaveConflict'}
        '400': BadBody
        '422': IdempotencyKeyReused
        '429': RateLimited
        '500': InternalError
        '503': DatabaseUnavailable
    """
    gid = game_id_of(game_id)
    load(gid)
    auth.require_seat(games(), gid, held=False)  # a retry's token has left its seat already
    keyed = idempotency.begin()

    def run() -> Response:
        seat = auth.require_seat(games(), gid)
        left = games().leave(gid, seat, None if keyed is None else keyed.record())
        return with_receipt(view_body(left, None), left, 200)

    return idempotency.once(keyed, run, _as_it_was_for(None))


@leaving_api.post("/games/<game_id>/resign")
def resign_game(game_id: str) -> Response:
    """
    ---
    post:
      tags:
      - play
      operationId: resignGame
      parameters:
      - GameId
      - IdempotencyKey
      - IdempotencySecret
      summary: Resign (the greedy bot plays your seat)
      description: |
        Gives the token's seat up once the game has started (`seat_taken_over`, reason
        `resigned`): from now on the greedy bot plays it (Sequence: for its team), at once if
        the game waits for it; its moves say `by: resigned`, and the audit re-decides them like
        any other. The view marks the seat `taken_over: resigned`. The token still shows the
        seat's view (its hand), but makes no more moves (`409 seat_taken_over`). Before the
        start, leave instead (`POST /games/{game_id}/leave`). A resignation is final.
      security:
      - bearerAuth: []
      responses:
        '200':
          description: The seat is the greedy bot's now. The seat's view.
          headers:
            Idempotent-Replayed:
              $ref: '#/components/headers/IdempotentReplayed'
            Cardroom-Receipt:
              $ref: '#/components/headers/Receipt'
          content:
            application/json:
              schema: {$ref: '#/components/schemas/GameView'}
        '401':
          description: |
            - `missing_token`: no `Authorization` header;
            - `invalid_token`: the header is not `Bearer <token>`, or the token is unknown.
          headers:
            WWW-Authenticate:
              $ref: '#/components/headers/WWWAuthenticate'
          content:
            application/problem+json:
              schema: {$ref: '#/components/schemas/MoveUnauthorized'}
        '403': NotYourGame
        '404': GameNotFound
        '409':
          description: |
            - `game_not_started`: not every seat is taken yet: leave instead;
            - `game_over`: the game has ended;
            - `game_cancelled`: the game was cancelled;
            - `seat_taken_over`: the seat is the greedy bot's already (resigned, or taken over
              because it stalled the game);
            - `too_many_conflicts`: the game changed under this request too many times in a
              row; send it again after `Retry-After` seconds;
            - `idempotency_key_in_use`: a request with this `Idempotency-Key` is still
              running; send it again after `Retry-After` seconds.
          headers:
            Retry-After:
              $ref: '#/components/headers/RetryAfter'
          content:
            application/problem+json:
              schema: {$ref: '#/components/schemas/ResignConflict'}
        '400': BadBody
        '422': IdempotencyKeyReused
        '429': RateLimited
        '500': InternalError
        '503': DatabaseUnavailable
    """
    gid = game_id_of(game_id)
    load(gid)
    seat = auth.require_seat(games(), gid)
    keyed = idempotency.begin()

    def run() -> Response:
        resigned = games().resign(gid, seat, None if keyed is None else keyed.record())
        return with_receipt(view_body(resigned, seat), resigned, 200)

    return idempotency.once(keyed, run, _as_it_was_for(seat))


def _as_it_was_for(seat: int | None) -> Callable[[idempotency.Keyed], Response]:
    """The first answer again: ``seat``'s view of the game as the request left it."""

    def replay(keyed: idempotency.Keyed) -> Response:
        past = as_it_was(keyed)
        return with_receipt(view_body(past, seat, past=True), past, 200)

    return replay
