"""Seats: join a game (``POST /games/{id}/players``). A private game's invitation is in
service/http/routes/invitations.py; leaving and resigning in service/http/routes/leaving.py."""

from __future__ import annotations

from uuid import UUID

from flask import Response, request

from service.http import abuse, auth, idempotency
from service.http.problems import Problem
from service.http.routes.common import (
    api,
    as_it_was,
    game_id_of,
    game_url,
    games,
    json_body,
    load,
    with_receipt,
)
from service.http.schemas import AnonymousJoinRequest, JoinRequest, SeatGranted
from service.play import Loaded
from service.store.accounts import Bearer

JOIN_REQUEST = JoinRequest()
ANONYMOUS_JOIN_REQUEST = AnonymousJoinRequest()
SEAT_GRANTED = SeatGranted()


@api.post("/games/<game_id>/players")
def join_game(game_id: str) -> Response:
    """
    ---
    post:
      tags:
      - play
      operationId: joinGame
      parameters:
      - GameId
      - IdempotencyKey
      - IdempotencySecret
      summary: Take a seat
      description: |
        Takes the first free seat (seats are numbered from 0 in joining order; a seat left
        before the start is free again) under `name`.
        The answer holds the seat's bearer token: **it is shown only once** and cannot be
        recovered (the service stores only its hash); send it as
        `Authorization: Bearer <token>` to view the game as this seat and to make its moves.
        Taking the last seat starts the game and deals the first round (`started: true`).
        Seats reserved for bots are never yours: a bot takes its seat right after the seat
        before it, so taking the last free seat for a person may start the game too.

        **Names.** The name is NFC-normalised and stripped of surrounding spaces (the answer's
        `name` is the name as recorded), then must have 1–32 visible characters and no
        control, format (direction overrides, zero-width spaces), line/paragraph separator or
        invisible characters, and letters of one script or of a mix Unicode UTS #39's highly
        restrictive profile allows (`422 invalid_name`; `details.reason` is one of `control`,
        `format`, `separator`, `invisible`, `not_text`, `too_many_marks`, `blank`,
        `too_long`, `mixed_scripts`). A name whose UTS #39 confusable skeleton (as written or
        case-folded) is another seat's (bots' included) is `409 name_taken` (`details.seat`):
        Cyrillic `а`, Greek `ο`, `0` for `O`, `1` and `I` for `l`.

        **As an account** (issue 35): with an account token (`Authorization: Bearer
        cardroom_pat_…`, scope `play`) the seat is the account's: `name` may be left out (the
        seat takes the account's name; if sent, it must be that name), the seat's `seat_taken`
        event records the `account_id`, and the account token acts for the seat from then on
        (the seat token in the answer works too). One account holds at most one seat a game
        (`409 already_seated`, `errors.seat`).

        **Private games** need `invitation`: the invitation from the answer that created the
        game (`403 invitation_required` without it, `invalid_invitation` for another one or a
        revoked one).

        **Limits.** Per address: joins per minute across games and into one game
        (`429 rate_limited`), and seats in at most 10 games that have not started
        (`409 too_many_waiting_games`); see the README's settings.
      security: []
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: '#/components/schemas/JoinRequest'}
            examples:
              public:
                summary: A public game
                value:
                  name: Ada
              private:
                summary: A private game, with its invitation
                value:
                  name: Ada
                  invitation: 3Hh0-qk1lQdVtq0pB8Rr3s9Xn2Vh6cWmZ1o5aYbKe7U
      responses:
        '201':
          description: The seat is yours. Keep the token.
          headers:
            Location:
              $ref: '#/components/headers/GameLocation'
            Idempotent-Replayed:
              $ref: '#/components/headers/IdempotentReplayed'
            Cardroom-Receipt:
              $ref: '#/components/headers/Receipt'
          content:
            application/json:
              schema: {$ref: '#/components/schemas/SeatGranted'}
          links:
            MakeMove:
              description: The new seat's move, with its token.
              operationId: makeMove
              parameters:
                game_id: $response.body#/game_id
                header.Authorization: Bearer {$response.body#/token}
            GetGameAsSeat:
              operationId: getGame
              parameters:
                game_id: $response.body#/game_id
                header.Authorization: Bearer {$response.body#/token}
        '400': BadBody
        '401': AccountUnauthorized
        '404': GameNotFound
        '403':
          description: |
            - `invitation_required`: the game is private and the body has no `invitation`;
            - `invalid_invitation`: not the game's invitation, or its creator revoked it;
            - `insufficient_scope`: the account token lacks `play`.
          content:
            application/problem+json:
              schema: {$ref: '#/components/schemas/JoinForbidden'}
        '409':
          description: |
            - `game_full`: every seat is taken (the game has started or is over);
            - `name_taken`: another seat's name looks the same as this one (`details.seat`);
            - `already_seated`: the account token's account holds a seat of this game already
              (`errors.seat`);
            - `too_many_waiting_games`: your address holds seats in as many games that have
              not started as it may (`CARDROOM_WAITING_GAMES_PER_ADDRESS`, default 10);
            - `game_cancelled`: the game was cancelled, its seats did not fill in time
              (`CARDROOM_FILL_SECONDS`); create or join another;
            - `too_many_conflicts`: the game changed under this request too many times in a
              row (heavy contention); send it again after `Retry-After` seconds.
            - `idempotency_key_in_use`: a request with this `Idempotency-Key` is still
              running; send it again after `Retry-After` seconds.
          headers:
            Retry-After:
              $ref: '#/components/headers/RetryAfter'
          content:
            application/problem+json:
              schema: {$ref: '#/components/schemas/JoinConflict'}
        '422':
          description: |
            - `invalid_name`: `name` is not a name; `details.reason` says why (see above);
            - `idempotency_key_reused`: this `Idempotency-Key` came with another request.
          content:
            application/problem+json:
              schema: {$ref: '#/components/schemas/JoinUnprocessable'}
        '413': BodyTooLarge
        '415': UnsupportedMediaType
        '429': RateLimited
        '500': InternalError
        '503': DatabaseUnavailable
    """
    gid = game_id_of(game_id)
    account = auth.optional_account(games(), "play")
    body = (ANONYMOUS_JOIN_REQUEST if account is None else JOIN_REQUEST).load(json_body())
    load(gid)
    keyed = idempotency.begin()

    def run() -> Response:
        invitation = auth.check_invitation(games(), gid, body.get("invitation"))
        token = auth.new_token()
        record = None if keyed is None else keyed.record(secret=token)
        client = games().keys.client_hash(request.remote_addr or "")
        seat, loaded = games().join(
            gid,
            body["name"] if account is None else account_name(account, body.get("name")),
            auth.token_hash(token),
            record,
            client,
            abuse.waiting_games_limit(),
            invitation=invitation,
            account=None if account is None else account.account.id,
        )
        return seat_granted(gid, seat, token, loaded)

    return idempotency.once(keyed, run, lambda keyed: rejoined(gid, keyed))


def account_name(account: Bearer, name: str | None) -> str:
    """The seat's name when an account takes it: the account's (a name sent must be it)."""
    if name is not None and name.strip() != account.account.name:
        raise Problem(
            400,
            "invalid_request",
            f"an account's seat takes the account's name ({account.account.name!r}): leave"
            " 'name' out",
            errors={"name": ["must be the account's name, or left out"]},
        )
    return account.account.name


def rejoined(gid: UUID, keyed: idempotency.Keyed) -> Response:
    """A join's first answer again: its token was kept, sealed under the key, with its receipt."""
    token = keyed.stored_secret()
    assert token is not None
    seat = games().store.seat_for_token(gid, auth.token_hash(token))
    assert seat is not None  # the receipt was written with the seat's row
    return seat_granted(gid, seat, token, as_it_was(keyed))


def seat_granted(gid: UUID, seat: int, token: str, loaded: Loaded) -> Response:
    granted = {
        "game_id": gid,
        "seat": seat,
        "name": loaded.state.names[seat],  # as the rules recorded it (domain/names.py)
        "token": token,
        "token_type": "Bearer",
        "started": games().started(loaded),  # bots may take the seats after this one
    }
    accounts = getattr(loaded.state, "accounts", ())
    account = accounts[seat] if len(accounts) > seat else None
    if account is not None:  # an anonymous seat's answer is what it always was
        granted["account_id"] = account
    return with_receipt(SEAT_GRANTED.dump(granted), loaded, 201, Location=game_url(gid))
