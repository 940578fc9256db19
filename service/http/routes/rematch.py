"""``POST /games/{id}/rematch``: a player of a finished game takes a seat in its rematch, which
the first to ask creates (service/rematch.py). The finished game's view and stream announce it
(service/http/rematching.py)."""

from __future__ import annotations

from uuid import UUID

from flask import Response, request

from service.http import abuse, auth, idempotency
from service.http.rematching import rematches
from service.http.routes.common import (
    api,
    as_it_was,
    game_id_of,
    game_url,
    games,
    load,
    with_receipt,
)
from service.http.schemas import RematchGranted
from service.play import Loaded

REMATCH_GRANTED = RematchGranted()


@api.post("/games/<game_id>/rematch")
def rematch(game_id: str) -> Response:
    """
    ---
    post:
      tags:
      - play
      operationId: rematch
      parameters:
      - GameId
      - IdempotencyKey
      - IdempotencySecret
      summary: Play the same game again, with the same table
      description: |
        For a player of a finished game (`status: over`), with that game's seat token: a seat
        in its **rematch**, a new game with the same rules, the same bots at the same seats
        (same kinds, same names), the same turn clock and the same visibility. The first
        player to ask creates it; every other player who asks takes a seat in that same game,
        however many ask at once, on whichever server (the database allows one rematch per
        game). Each gets the first free seat under the name they had, and a new token for it
        in this answer (**shown only once**, as when joining). The rematch starts when its
        last seat is taken, as any game.

        **Announced to everyone.** Once proposed, the finished game's view has `rematch`
        (`game_id`, `proposed_by`: the seat that asked first, `proposed_at`), and its event
        stream sends a `rematch` message (see `GET /games/{game_id}/stream`,
        `follow_rematch`): the other players can ask for their seat too.

        **Private games.** The rematch of a private game is private, and its invitation is
        shown to nobody: only the finished game's players take its seats, through this route.
        The rematch of a public game is public: anyone may join its free seats, as any game's.

        No body. A retry with the same `Idempotency-Key` gets the first answer again, its
        token included; asking again without it is `409 already_in_rematch`.
      security:
      - bearerAuth: []
      responses:
        '201':
          description: Your seat in the rematch. Keep the token.
          headers:
            Location:
              $ref: '#/components/headers/GameLocation'
            Idempotent-Replayed:
              $ref: '#/components/headers/IdempotentReplayed'
            Cardroom-Receipt:
              $ref: '#/components/headers/Receipt'
          content:
            application/json:
              schema: {$ref: '#/components/schemas/RematchGranted'}
          links:
            GetRematchAsSeat:
              operationId: getGame
              parameters:
                game_id: $response.body#/game_id
                header.Authorization: Bearer {$response.body#/token}
        '401':
          description: |
            - `missing_token`: no `Authorization` header (only the game's players may ask);
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
            - `game_not_over`: the game has not ended (or was cancelled): no rematch yet;
            - `already_in_rematch`: this seat has its seat in the rematch already (the
              answer that gave it had its token; the same `Idempotency-Key` gets it again);
            - `game_full`: the (public) rematch has no free seat left;
            - `name_taken`: someone else took a seat in the (public) rematch under a name like
              yours (`details.seat`);
            - `too_many_waiting_games`: your address holds seats in as many games that have
              not started as it may (`CARDROOM_WAITING_GAMES_PER_ADDRESS`, default 10);
            - `game_cancelled`: the rematch was cancelled, its seats did not fill in time;
            - `too_many_conflicts`: the rematch changed under this request too many times in
              a row; send it again after `Retry-After` seconds;
            - `idempotency_key_in_use`: a request with this `Idempotency-Key` is still
              running; send it again after `Retry-After` seconds.
          headers:
            Retry-After:
              $ref: '#/components/headers/RetryAfter'
          content:
            application/problem+json:
              schema: {$ref: '#/components/schemas/RematchConflict'}
        '400': BadBody
        '422':
          description: |
            - `invalid_name`: your name in the finished game is not a name by today's rules
              (a game created before names were checked);
            - `idempotency_key_reused`: this `Idempotency-Key` came with another request.
          content:
            application/problem+json:
              schema: {$ref: '#/components/schemas/JoinUnprocessable'}
        '429': RateLimited
        '500': InternalError
        '503': DatabaseUnavailable
    """
    gid = game_id_of(game_id)
    load(gid)
    seat = auth.require_seat(games(), gid)
    keyed = idempotency.begin()

    def run() -> Response:
        token = auth.new_token()
        record = None if keyed is None else keyed.record(secret=token)
        client = games().keys.client_hash(request.remote_addr or "")
        _, new_seat, loaded = rematches().ask(
            gid, seat, auth.token_hash(token), record, client, abuse.waiting_games_limit()
        )
        return _granted(gid, new_seat, token, loaded)

    return idempotency.once(keyed, run, lambda keyed: _granted_again(gid, keyed))


def _granted_again(gid: UUID, keyed: idempotency.Keyed) -> Response:
    """The first answer again: its token was kept, sealed under the key, with its receipt."""
    token, stored = keyed.stored_secret(), keyed.stored
    assert token is not None and stored is not None
    seat = games().store.seat_for_token(stored.game_id, auth.token_hash(token))
    assert seat is not None  # the receipt was written with the seat's row
    return _granted(gid, seat, token, as_it_was(keyed))


def _granted(finished: UUID, seat: int, token: str, loaded: Loaded) -> Response:
    granted = {
        "game_id": loaded.id,
        "rematch_of": finished,
        "seat": seat,
        "name": loaded.state.names[seat],
        "token": token,
        "token_type": "Bearer",
        "started": games().started(loaded),
    }
    body = REMATCH_GRANTED.dump(granted)
    return with_receipt(body, loaded, 201, Location=game_url(loaded.id))
