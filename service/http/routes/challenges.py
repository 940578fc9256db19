"""Challenges (issue 35): an account offers another a game (``POST /accounts/{id}/challenges``);
the challenged accepts (the game is created with both seated), declines, or lets it expire; the
challenger may cancel it. The rules of it all are in service/play/challenges.py."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from flask import Response, current_app, url_for

from service.http import auth, idempotency
from service.http.problems import Problem
from service.http.routes.accounts import account_of
from service.http.routes.common import (
    KeptAnswer,
    api,
    as_it_was,
    check_rated,
    game_url,
    games,
    json_body,
    json_response,
    with_receipt,
)
from service.http.schemas.challenges import (
    Challenge as ChallengeBody,
)
from service.http.schemas.challenges import (
    ChallengeAccepted,
    ChallengeList,
    ChallengeRequest,
)
from service.play import Loaded
from service.play.challenges import Challenger
from service.store.accounts import Bearer
from service.store.challenges import CANCELLED, DECLINED, Challenge

CHALLENGE_REQUEST = ChallengeRequest()
CHALLENGE = ChallengeBody()
CHALLENGE_LIST = ChallengeList()
CHALLENGE_ACCEPTED = ChallengeAccepted()


def challenger() -> Challenger:
    return current_app.extensions["cardroom_challenges"]


@api.post("/accounts/<account_id>/challenges")
def create_challenge(account_id: str) -> Response:
    """
    ---
    post:
      tags:
      - accounts
      operationId: createChallenge
      parameters:
      - AccountId
      - IdempotencyKey
      - IdempotencySecret
      summary: Challenge an account to a game
      description: |
        Offers the account `account_id` a game with these rules, as `POST /games` takes them
        (`game`, `players`, `rules`, `bots`, `turn_seconds`, `visibility`, `rated`). Needs an
        account token with `play`. A challenge seats exactly two accounts, the challenger in the
        first seat no bot holds and the challenged in the next: every other seat must be a
        bot's (`players` = 2 + the number of `bots`), so the game starts as it is accepted.
        With `rated: true` the game is rated (issue 37): it counts for both accounts' ratings
        in its pool, the bots playing as their fixed anchors; a rated challenge is public.

        The challenged account's stream gets a `challenge` item (`GET /accounts/me/stream`;
        its `data` is this answer's body without `links`); it answers with
        `POST /challenges/{challenge_id}/accept` or `/decline`, and the challenger may
        `/cancel` it meanwhile. Unanswered, it expires at `expires_at`:
        `CARDROOM_CHALLENGE_SECONDS` (default 600, ten minutes) after it was made.

        Refused with `422 invalid_challenge` (`errors.reason`): `self` (an account cannot
        challenge itself), `bot` (a built-in bot answers no challenge: create a game with it in
        `bots`), `seats` (a seat would be left for neither account nor bot). The rules are
        checked as `POST /games` checks them, with the two accounts seated in a trial run
        (`invalid_rules`, `invalid_bots`, `invalid_name`; `name_taken` if a bot's name looks
        like one of the accounts'). Rate limited per address like game creation.
      security:
      - bearerAuth: []
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: '#/components/schemas/ChallengeRequest'}
            examples:
              twoPlayers:
                summary: A 2-player game of Sushi Go!
                value: {game: sushi-go, players: 2}
              rated:
                summary: A rated 2-player game of Sushi Go!
                value: {game: sushi-go, players: 2, rated: true}
              withBots:
                summary: Four players, two of them bots, 30 seconds a turn
                value:
                  game: sushi-go
                  players: 4
                  bots:
                  - {seat: 2, kind: greedy}
                  - {seat: 3, kind: random}
                  turn_seconds: 30
      responses:
        '201':
          description: The challenge, offered.
          headers:
            Location:
              description: The challenge, `/challenges/{challenge_id}`.
              schema: {type: string}
          content:
            application/json:
              schema: {$ref: '#/components/schemas/Challenge'}
        '400': BadBody
        '401': AccountUnauthorized
        '403': InsufficientScope
        '404': AccountNotFound
        '409':
          description: |
            - `name_taken`: a bot's name looks like one of the two accounts' names;
            - `idempotency_key_in_use`: a request with this `Idempotency-Key` is still
              running; send it again after `Retry-After` seconds.
          headers:
            Retry-After:
              $ref: '#/components/headers/RetryAfter'
          content:
            application/problem+json:
              schema: {$ref: '#/components/schemas/ChallengeNameConflict'}
        '413': BodyTooLarge
        '415': UnsupportedMediaType
        '422':
          description: |
            - `invalid_challenge`: `errors.reason` is `self`, `bot` or `seats` (above);
            - `unknown_game`, `invalid_rules`, `invalid_bots`, `invalid_name`: as for
              `POST /games`;
            - `invalid_rated`: `rated: true` with `visibility: private` (a rated game is
              public: anyone can recompute the ratings from its export);
            - `idempotency_key_reused`: this `Idempotency-Key` came with another request.
          content:
            application/problem+json:
              schema: {$ref: '#/components/schemas/ChallengeUnprocessable'}
        '429': RateLimited
        '500': InternalError
        '503': DatabaseUnavailable
    """
    bearer = auth.require_account(games(), "play")
    to = account_of(account_id)
    body = CHALLENGE_REQUEST.load(json_body())
    check_rated(body)
    request = {
        "game": body["game"],
        "players": body["players"],
        "rules": body["rules"],
        "bots": [{"seat": b.seat, "kind": b.kind, "name": b.name} for b in body["bots"]],
        "visibility": body["visibility"],
    }
    if body.get("turn_seconds") is not None:
        request["turn_seconds"] = body["turn_seconds"]
    if body["rated"]:  # an unrated challenge stores (and shows) what it always did
        request["rated"] = True
    keyed = idempotency.begin(answers=True)
    answer = KeptAnswer(keyed, 201)

    def kept(cur: Any, challenge: Challenge) -> None:
        answer.location = url_for("api.get_challenge", challenge_id=str(challenge.id))
        answer.keep(cur, CHALLENGE.dump(challenge_body(challenge)))

    def run() -> Response:
        challenger().offer(bearer.account, to, request, along=kept)
        return answer.response()

    return idempotency.once(keyed, run)


@api.get("/accounts/me/challenges")
def list_challenges() -> Response:
    """
    ---
    get:
      tags:
      - accounts
      operationId: listChallenges
      summary: Your open challenges
      description: |
        The challenges offered to this account (`incoming`) and by it (`outgoing`) that wait
        for an answer, newest first (at most 200 each way). Needs `play`.
      security:
      - bearerAuth: []
      responses:
        '200':
          description: The open challenges.
          content:
            application/json:
              schema: {$ref: '#/components/schemas/ChallengeList'}
        '401': AccountUnauthorized
        '403': InsufficientScope
        '500': InternalError
        '503': DatabaseUnavailable
    """
    bearer = auth.require_account(games(), "play")
    me = bearer.account.id
    open_ones = challenger().open_for(me)
    body = {
        "incoming": [challenge_body(c) for c in open_ones if c.to_account == me],
        "outgoing": [challenge_body(c) for c in open_ones if c.from_account == me],
    }
    return json_response(CHALLENGE_LIST.dump(body))


@api.get("/challenges/<challenge_id>")
def get_challenge(challenge_id: str) -> Response:
    """
    ---
    get:
      tags:
      - accounts
      operationId: getChallenge
      parameters:
      - ChallengeId
      summary: A challenge
      description: |
        The challenge, for either of its two accounts (`play`): its status, and its game once
        accepted (`game_id`). To anyone else it does not exist (`404`).
      security:
      - bearerAuth: []
      responses:
        '200':
          description: The challenge.
          content:
            application/json:
              schema: {$ref: '#/components/schemas/Challenge'}
        '401': AccountUnauthorized
        '403': InsufficientScope
        '404': ChallengeNotFound
        '500': InternalError
        '503': DatabaseUnavailable
    """
    bearer = auth.require_account(games(), "play")
    challenge = _party(bearer, challenge_id)
    return json_response(CHALLENGE.dump(challenge_body(challenge)))


@api.post("/challenges/<challenge_id>/accept")
def accept_challenge(challenge_id: str) -> Response:
    """
    ---
    post:
      tags:
      - play
      operationId: acceptChallenge
      parameters:
      - ChallengeId
      - IdempotencyKey
      - IdempotencySecret
      summary: Accept a challenge
      description: |
        The challenged account (its token, `play`) accepts: the game is created with both
        accounts seated (the challenger in the first seat no bot holds, you in the next) and
        starts at once. The answer is your seat, as `POST /games/{id}/players` gives it, with
        a seat token (**shown only once**; your account token acts for the seat too) and the
        challenge as accepted. The challenger acts through its account token; its stream gets
        a `challenge_answered` item with the `game_id`.

        Exactly once: however many accepts (or an accept and a cancel) come at once, on any
        hosts, one wins; the others are `409`. No body. Accepting again is
        `409 challenge_accepted` (`errors.game_id` names the game).
      security:
      - bearerAuth: []
      responses:
        '201':
          description: Your seat in the new game. Keep the token.
          headers:
            Location:
              $ref: '#/components/headers/GameLocation'
            Cardroom-Receipt:
              $ref: '#/components/headers/Receipt'
          content:
            application/json:
              schema: {$ref: '#/components/schemas/ChallengeAccepted'}
          links:
            GetGameAsSeat:
              operationId: getGame
              parameters:
                game_id: $response.body#/game_id
                header.Authorization: Bearer {$response.body#/token}
        '400': InvalidIdempotencyKey
        '401': AccountUnauthorized
        '403': ChallengeForbidden
        '404': ChallengeNotFound
        '409': ChallengeClosed
        '422': IdempotencyKeyReused
        '500': InternalError
        '503': DatabaseUnavailable
    """
    bearer = auth.require_account(games(), "play")
    challenge = _party(bearer, challenge_id, role="to", verb="accept")
    keyed = idempotency.begin()

    def run() -> Response:
        token = auth.new_token()
        record = None if keyed is None else keyed.record(secret=token)
        accepted, seat, loaded = challenger().accept(challenge, auth.token_hash(token), record)
        return _accepted(accepted, seat, loaded, token, bearer)

    return idempotency.once(keyed, run, lambda keyed: _accepted_again(keyed, challenge, bearer))


def _accepted_again(keyed: idempotency.Keyed, challenge: Challenge, bearer: Bearer) -> Response:
    """The first acceptance's answer again: the game as it left it, the seat's token kept
    sealed under the key."""
    token = keyed.stored_secret()
    assert token is not None
    loaded = as_it_was(keyed)
    seat = games().store.seat_for_token(loaded.id, auth.token_hash(token))
    assert seat is not None  # the record was written with the seat's row
    return _accepted(challenger().get(challenge.id) or challenge, seat, loaded, token, bearer)


def _accepted(
    accepted: Challenge, seat: int, loaded: Loaded, token: str, bearer: Bearer
) -> Response:
    granted = {
        "game_id": loaded.id,
        "seat": seat,
        "name": loaded.state.names[seat],
        "token": token,
        "token_type": "Bearer",
        "started": games().started(loaded),
        "account_id": bearer.account.id,
        "challenge": challenge_body(accepted),
    }
    body = CHALLENGE_ACCEPTED.dump(granted)
    return with_receipt(body, loaded, 201, Location=game_url(loaded.id))


@api.post("/challenges/<challenge_id>/decline")
def decline_challenge(challenge_id: str) -> Response:
    """
    ---
    post:
      tags:
      - accounts
      operationId: declineChallenge
      parameters:
      - ChallengeId
      - IdempotencyKey
      - IdempotencySecret
      summary: Decline a challenge
      description: |
        The challenged account (`play`) says no; the challenger's stream gets a
        `challenge_answered` item. No body. A challenge answered already is `409` with a code
        saying how (`challenge_accepted`, `challenge_declined`, `challenge_cancelled`,
        `challenge_expired`).
      security:
      - bearerAuth: []
      responses:
        '200':
          description: The challenge, declined.
          content:
            application/json:
              schema: {$ref: '#/components/schemas/Challenge'}
        '400': InvalidIdempotencyKey
        '401': AccountUnauthorized
        '403': ChallengeForbidden
        '404': ChallengeNotFound
        '409': ChallengeClosed
        '422': IdempotencyKeyReused
        '500': InternalError
        '503': DatabaseUnavailable
    """
    return _answer(challenge_id, "to", DECLINED)


@api.post("/challenges/<challenge_id>/cancel")
def cancel_challenge(challenge_id: str) -> Response:
    """
    ---
    post:
      tags:
      - accounts
      operationId: cancelChallenge
      parameters:
      - ChallengeId
      - IdempotencyKey
      - IdempotencySecret
      summary: Cancel a challenge you made
      description: |
        The challenger (`play`) withdraws it before it is answered; both accounts' streams get
        a `challenge_answered` item. No body. A challenge answered already is `409` with a code
        saying how; an accept that won the race makes the cancel `409 challenge_accepted`.
      security:
      - bearerAuth: []
      responses:
        '200':
          description: The challenge, cancelled.
          content:
            application/json:
              schema: {$ref: '#/components/schemas/Challenge'}
        '400': InvalidIdempotencyKey
        '401': AccountUnauthorized
        '403': ChallengeForbidden
        '404': ChallengeNotFound
        '409': ChallengeClosed
        '422': IdempotencyKeyReused
        '500': InternalError
        '503': DatabaseUnavailable
    """
    return _answer(challenge_id, "from", CANCELLED)


def _answer(challenge_id: str, role: str, status: str) -> Response:
    bearer = auth.require_account(games(), "play")
    verb = "decline" if status == DECLINED else "cancel"
    challenge = _party(bearer, challenge_id, role=role, verb=verb)
    keyed = idempotency.begin(answers=True)
    answer = KeptAnswer(keyed, 200)

    def run() -> Response:
        challenger().answer(
            challenge,
            status,
            along=lambda cur, answered: answer.keep(cur, CHALLENGE.dump(challenge_body(answered))),
        )
        return answer.response()

    return idempotency.once(keyed, run)


def _party(bearer: Bearer, challenge_id: str, role: str = "", verb: str = "") -> Challenge:
    """The challenge, if the bearer's account is one of its two (else 404); with ``role``, the
    one it must be to ``verb`` it (else 403 ``not_your_challenge``)."""
    try:
        cid = UUID(challenge_id)
    except ValueError:
        cid = None
    challenge = None if cid is None else challenger().get(cid)
    me = bearer.account.id
    if challenge is None or me not in (challenge.from_account, challenge.to_account):
        raise Problem(
            404,
            "challenge_not_found",
            f"there is no challenge {challenge_id} of this account; list yours at"
            " GET /accounts/me/challenges",
        )
    if role and me != (challenge.to_account if role == "to" else challenge.from_account):
        who = "challenged account" if role == "to" else "challenger"
        raise Problem(403, "not_your_challenge", f"only the {who} may {verb} this challenge")
    return challenge


def challenge_body(challenge: Challenge) -> dict[str, Any]:
    """The challenge as the API shows it (``Challenge``)."""
    cid = str(challenge.id)
    return {
        "challenge_id": challenge.id,
        "status": challenge.status,
        "from_": {"account_id": challenge.from_account, "name": challenge.from_name},
        "to": {"account_id": challenge.to_account, "name": challenge.to_name},
        **challenge.request,
        "created_at": challenge.created_at,
        "expires_at": challenge.expires_at,
        "answered_at": challenge.answered_at,
        "game_id": challenge.game_id,
        "links": {
            "self": url_for("api.get_challenge", challenge_id=cid),
            "accept": url_for("api.accept_challenge", challenge_id=cid),
            "decline": url_for("api.decline_challenge", challenge_id=cid),
            "cancel": url_for("api.cancel_challenge", challenge_id=cid),
            "game": None if challenge.game_id is None else game_url(challenge.game_id),
        },
    }
