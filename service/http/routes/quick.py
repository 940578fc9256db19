"""Quick match (issue 35): ``POST /games/quick`` seats the caller in the waiting public game with
exactly these rules, or creates one (service/play/quick.py holds how races end)."""

from __future__ import annotations

import json

from flask import Response, current_app, request

from service.http import abuse, auth, idempotency
from service.http.problems import Problem
from service.http.routes.common import (
    api,
    as_it_was,
    game_url,
    games,
    json_body,
    with_receipt,
)
from service.http.routes.seats import account_name
from service.http.schemas.challenges import QuickMatchRequest, QuickSeat
from service.play import Loaded, adapter_for
from service.play.commands import Creation, Seating
from service.play.quick import QuickMatch
from service.store.idempotency_records import IdempotencyRecord

QUICK_REQUEST = QuickMatchRequest()
QUICK_SEAT = QuickSeat()


def matcher() -> QuickMatch:
    return current_app.extensions["cardroom_quick"]


@api.post("/games/quick")
def quick_match() -> Response:
    """
    ---
    post:
      tags:
      - play
      operationId: quickMatch
      parameters:
      - IdempotencyKey
      - IdempotencySecret
      summary: Seat me in any waiting game with these rules
      description: |
        Takes a seat in the waiting public game with exactly these rules (`game`, `players`,
        `rules` with the game's defaults filled in, `bots`, `turn_seconds`, `rated`), or creates
        one with you seated in it (`created: true`). The answer is your seat, as
        `POST /games/{id}/players` gives it: the seat token is **shown only once**. The game
        starts when its last seat is taken, as any game.

        **Races are part of the contract.** However many ask at once, on however many
        servers, a game is created only once the one before it is full: N requests at once
        for a 4-player game fill N/4 games (rounded up), all full but the last. Games with
        other rules never share: a game with a turn clock is not one without, nor a 3-player
        game a 4-player one, nor a rated game an unrated one.

        **Rated** (`rated: true`, issue 37): only with an account token (else
        `403 account_required`); you are paired only with accounts that asked for a rated game
        of the same pool (the game and its edition) and the same rules. It counts for every
        account's rating once it ends; its bots play as their fixed anchors.

        **Who.** With an account token (`play`) the seat is the account's (leave `name` out);
        without one, `name` is required. Quick match games are public (`visibility` is
        refused) and have bots only if `bots` asks for them. As for any join: names must not
        look like another seat's (`409 name_taken`), an account holds one seat a game
        (`409 already_seated`), and one address holds seats in at most
        `CARDROOM_WAITING_GAMES_PER_ADDRESS` waiting games. Rate limited per address like
        game creation.
      security: []
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: '#/components/schemas/QuickMatchRequest'}
            examples:
              anonymous:
                summary: A 4-player game of Sushi Go!, anonymously
                value: {game: sushi-go, players: 4, name: Ada}
              account:
                summary: With an account token (the seat takes the account's name)
                value: {game: sushi-go, players: 2}
              rated:
                summary: A rated 3-player game, with an account token
                value: {game: sushi-go, players: 3, rated: true}
      responses:
        '201':
          description: Your seat. Keep the token.
          headers:
            Location:
              $ref: '#/components/headers/GameLocation'
            Cardroom-Receipt:
              $ref: '#/components/headers/Receipt'
          content:
            application/json:
              schema: {$ref: '#/components/schemas/QuickSeat'}
          links:
            GetGameAsSeat:
              operationId: getGame
              parameters:
                game_id: $response.body#/game_id
                header.Authorization: Bearer {$response.body#/token}
        '400': BadBody
        '401': AccountUnauthorized
        '403':
          description: |
            - `insufficient_scope`: the account token lacks `play` (`errors.scope`);
            - `account_required`: `rated: true` without an account token (every person's seat
              of a rated game is an account's).
          content:
            application/problem+json:
              schema: {$ref: '#/components/schemas/QuickForbidden'}
        '409':
          description: |
            - `name_taken`: another seat of the waiting game has a name that looks the same
              (`errors.seat`): choose another;
            - `already_seated`: the account holds a seat of the waiting game already
              (`errors.seat`, `errors.game_id`: play it with the account token);
            - `too_many_waiting_games`: your address holds seats in as many waiting games as
              it may;
            - `too_many_conflicts`: the games changed under this request too often in a row;
              send it again after `Retry-After` seconds;
            - `idempotency_key_in_use`: a request with this `Idempotency-Key` is still
              running; send it again after `Retry-After` seconds.
          headers:
            Retry-After:
              $ref: '#/components/headers/RetryAfter'
          content:
            application/problem+json:
              schema: {$ref: '#/components/schemas/QuickConflict'}
        '413': BodyTooLarge
        '415': UnsupportedMediaType
        '422':
          description: |
            - `unknown_game`, `invalid_rules`, `invalid_bots`, `invalid_name`: as for
              `POST /games` (`invalid_name` for `name` too);
            - `invalid_rated`: `rated: true` with bots in every seat (a rated game rates
              people);
            - `idempotency_key_reused`: this `Idempotency-Key` came with another request.
          content:
            application/problem+json:
              schema: {$ref: '#/components/schemas/QuickUnprocessable'}
        '429': RateLimited
        '500': InternalError
        '503': DatabaseUnavailable
    """
    account = auth.optional_account(games(), "play")
    body = QUICK_REQUEST.load(json_body())
    if body["rated"] and account is None:
        raise Problem(
            403,
            "account_required",
            "a rated game seats accounts only: ask with an account token"
            " ('Authorization: Bearer cardroom_pat_...', scope play; POST /accounts creates one)",
        )
    if account is None and "name" not in body:
        raise Problem(
            400,
            "invalid_request",
            "'name' is required without an account token (the seat's name)",
            errors={"name": ["Missing data for required field."]},
        )
    name = body["name"] if account is None else account_name(account, body.get("name"))
    adapter = adapter_for(body["game"])
    options = {**adapter.rules.load(body["rules"]), "players": body["players"]}
    creation = Creation(
        body["game"], options, tuple(body["bots"]), body.get("turn_seconds"), rated=body["rated"]
    )
    keyed = idempotency.begin()

    def run() -> Response:
        token = auth.new_token()
        person = Seating(
            name,
            None if account is None else account.account.id,
            auth.token_hash(token),
            games().keys.client_hash(request.remote_addr or ""),
        )

        def record(created: bool) -> IdempotencyRecord:
            assert keyed is not None  # the token, and whether the game was made with it
            return keyed.record(secret=json.dumps({"token": token, "created": created}))

        seat, loaded, created = matcher().seat(
            creation, person, abuse.waiting_games_limit(), None if keyed is None else record
        )
        return _seated(seat, loaded, token, created)

    return idempotency.once(keyed, run, _seated_again)


def _seated_again(keyed: idempotency.Keyed) -> Response:
    """The first answer again: its seat's token and whether it made the game were kept with
    the seat, sealed under the key (its receipt's version: the game as it left it)."""
    kept = json.loads(keyed.stored_secret() or "{}")
    loaded = as_it_was(keyed)
    seat = games().store.seat_for_token(loaded.id, auth.token_hash(kept["token"]))
    assert seat is not None  # the record was written with the seat's row
    return _seated(seat, loaded, kept["token"], kept["created"])


def _seated(seat: int, loaded: Loaded, token: str, created: bool) -> Response:
    accounts = getattr(loaded.state, "accounts", ())
    account = accounts[seat] if seat < len(accounts) else None
    granted = {
        "game_id": loaded.id,
        "seat": seat,
        "name": loaded.state.names[seat],
        "token": token,
        "token_type": "Bearer",
        "started": games().started(loaded),
        "created": created,
    }
    if account is not None:
        granted["account_id"] = account
    return with_receipt(QUICK_SEAT.dump(granted), loaded, 201, Location=game_url(loaded.id))
