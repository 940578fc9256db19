"""Accounts (issue 35): create one (``POST /accounts``), read it, and manage its personal access
tokens (Lichess's model: no passwords, no sessions). An account's games, stream, challenges
and quick match build on the identity these routes give."""

from __future__ import annotations

from typing import Any
from uuid import UUID, uuid4

from flask import Response

from domain import names
from service.http import auth, idempotency
from service.http.problems import Problem
from service.http.routes.common import KeptAnswer, api, games, json_body, json_response
from service.http.schemas.accounts import (
    SCOPES,
    AccountCreated,
    AccountSummary,
    Me,
    NewAccountRequest,
    NewTokenRequest,
    TokenGranted,
    TokenList,
)
from service.store.accounts import Account, NameTaken, Token

NAME_RULE = 2  # UTS #39, as the seats of every game created since issue 31
NEW_ACCOUNT = NewAccountRequest()
NEW_TOKEN = NewTokenRequest()
ACCOUNT_CREATED = AccountCreated()
ACCOUNT_SUMMARY = AccountSummary()
ME = Me()
TOKEN_GRANTED = TokenGranted()
TOKEN_LIST = TokenList()
FIRST_LABEL = "created with the account"


@api.post("/accounts")
def create_account() -> Response:
    """
    ---
    post:
      tags:
      - accounts
      operationId: createAccount
      parameters:
      - IdempotencyKey
      - IdempotencySecret
      summary: Create an account
      description: |
        An identity that stays the same across games (Lichess's model: no password, no
        session). The answer holds the account's first personal access token, with every
        scope: **it is shown only once** (the service keeps its SHA-256 only). Send it as
        `Authorization: Bearer <token>`: it takes seats for the account
        (`POST /games/{id}/players`) and acts for the account's seat in every game it sits in;
        mint narrower tokens for bots with `POST /accounts/me/tokens`.

        Names follow the seats' rules (Unicode UTS #39: `422 invalid_name`) and are unique
        across accounts: a name whose confusable skeleton is another account's is
        `409 name_taken` (built-in bots' names included). Rate limited per address like game
        creation (`CARDROOM_RATE_LIMIT_ACCOUNTS`, default `10/hour`).

        Send an `Idempotency-Key` (and an `Idempotency-Secret`): the answer holds the token
        only once, so a retry after a lost answer must get that same answer (it is kept,
        sealed under the key, for `CARDROOM_IDEMPOTENCY_TTL`), not a `409 name_taken` for the
        account it created.
      security: []
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: '#/components/schemas/NewAccountRequest'}
            example: {name: Ada}
      responses:
        '201':
          description: The account, and its first token. Keep the token.
          headers:
            Location:
              description: The account's public page, `/accounts/{account_id}`.
              schema: {type: string}
          content:
            application/json:
              schema: {$ref: '#/components/schemas/AccountCreated'}
        '400': BadBody
        '409':
          description: |
            - `name_taken`: another account's name looks the same as this one;
            - `idempotency_key_in_use`: a request with this `Idempotency-Key` is still
              running; send it again after `Retry-After` seconds.
          headers:
            Retry-After:
              $ref: '#/components/headers/RetryAfter'
          content:
            application/problem+json:
              schema: {$ref: '#/components/schemas/AccountNameConflict'}
        '422':
          description: |
            - `invalid_name`: not a name; `errors.reason` says why;
            - `idempotency_key_reused`: this `Idempotency-Key` came with another request.
          content:
            application/problem+json:
              schema: {$ref: '#/components/schemas/InvalidNameProblem'}
        '413': BodyTooLarge
        '415': UnsupportedMediaType
        '429': RateLimited
        '500': InternalError
        '503': DatabaseUnavailable
    """
    body = NEW_ACCOUNT.load(json_body())
    name = names.normalise(body["name"], NAME_RULE)  # DomainError: 422 invalid_name
    keyed = idempotency.begin(answers=True)
    token = auth.new_account_token()
    token_id = uuid4()
    account_id = str(uuid4())
    answer = KeptAnswer(keyed, 201, f"/accounts/{account_id}")

    def created(account: Account) -> dict[str, Any]:
        return ACCOUNT_CREATED.dump(
            {
                **_summary(account),
                "token": token,
                "token_type": "Bearer",
                "token_id": token_id,
                "scopes": list(SCOPES),
            }
        )

    def run() -> Response:
        try:
            games().accounts.create(
                account_id,
                name,
                names.looks(name, NAME_RULE),
                (token_id, auth.token_hash(token), SCOPES, FIRST_LABEL),
                along=lambda cur, account: answer.keep(cur, created(account)),
            )
        except NameTaken:
            raise Problem(
                409,
                "name_taken",
                f"an account already has a name that looks the same as {name!r}; choose another",
            ) from None
        return answer.response()

    return idempotency.once(keyed, run)


@api.get("/accounts/me")
def get_me() -> Response:
    """
    ---
    get:
      tags:
      - accounts
      operationId: getMe
      summary: The account of this token
      description: |
        The account the bearer token acts for, and the token itself (its scopes, label and
        when it was last used; never its secret). Any scope will do.
      security:
      - bearerAuth: []
      responses:
        '200':
          description: The account.
          content:
            application/json:
              schema: {$ref: '#/components/schemas/Me'}
        '401': AccountUnauthorized
        '500': InternalError
        '503': DatabaseUnavailable
    """
    bearer = auth.require_account(games())
    return json_response(ME.dump({**_summary(bearer.account), "token": _token(bearer.token)}))


@api.get("/accounts/<account_id>")
def get_account(account_id: str) -> Response:
    """
    ---
    get:
      tags:
      - accounts
      operationId: getAccount
      parameters:
      - AccountId
      summary: An account
      description: An account's public face, anyone's to read.
      security: []
      responses:
        '200':
          description: The account.
          content:
            application/json:
              schema: {$ref: '#/components/schemas/AccountSummary'}
        '404': AccountNotFound
        '500': InternalError
        '503': DatabaseUnavailable
    """
    return json_response(ACCOUNT_SUMMARY.dump(_summary(account_of(account_id))))


@api.post("/accounts/me/tokens")
def mint_token() -> Response:
    """
    ---
    post:
      tags:
      - accounts
      operationId: mintToken
      parameters:
      - IdempotencyKey
      - IdempotencySecret
      summary: Mint another token
      description: |
        A new personal access token of the account, with `scopes` (at most those of the
        token asking, which needs `tokens:write`) and a `label` to recognise it by. Give each
        bot or integration its own, with only the scopes it needs: `play` for a bot. **Shown
        only once.**
      security:
      - bearerAuth: []
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: '#/components/schemas/NewTokenRequest'}
            example: {scopes: [play], label: my bot}
      responses:
        '201':
          description: The new token. Keep it.
          content:
            application/json:
              schema: {$ref: '#/components/schemas/TokenGranted'}
        '400': BadBody
        '401': AccountUnauthorized
        '403': InsufficientScope
        '409': IdempotencyKeyInUse
        '413': BodyTooLarge
        '415': UnsupportedMediaType
        '422': IdempotencyKeyReused
        '500': InternalError
        '503': DatabaseUnavailable
    """
    bearer = auth.require_account(games(), "tokens:write")
    body = NEW_TOKEN.load(json_body())
    scopes = list(dict.fromkeys(body["scopes"]))  # in the order given, once each
    for scope in scopes:
        auth.require_scope(bearer, scope)  # no token grants more than the one asking has
    keyed = idempotency.begin(answers=True)
    secret = auth.new_account_token()
    answer = KeptAnswer(keyed, 201)

    def run() -> Response:
        games().accounts.add_token(
            bearer.account.id,
            (uuid4(), auth.token_hash(secret), scopes, body["label"]),
            along=lambda cur, token: answer.keep(
                cur, TOKEN_GRANTED.dump({**_token(token), "token": secret, "token_type": "Bearer"})
            ),
        )
        return answer.response()

    return idempotency.once(keyed, run)


@api.get("/accounts/me/tokens")
def list_tokens() -> Response:
    """
    ---
    get:
      tags:
      - accounts
      operationId: listTokens
      summary: The account's tokens
      description: |
        Every token of the account, revoked ones included, oldest first: scopes, label,
        when created, last used and revoked. Never a secret. Needs `tokens:write`.
      security:
      - bearerAuth: []
      responses:
        '200':
          description: The tokens.
          content:
            application/json:
              schema: {$ref: '#/components/schemas/TokenList'}
        '401': AccountUnauthorized
        '403': InsufficientScope
        '500': InternalError
        '503': DatabaseUnavailable
    """
    bearer = auth.require_account(games(), "tokens:write")
    tokens = games().accounts.tokens(bearer.account.id)
    return json_response(TOKEN_LIST.dump({"tokens": [_token(token) for token in tokens]}))


@api.delete("/accounts/me/tokens/<token_id>")
def revoke_token(token_id: str) -> Response:
    """
    ---
    delete:
      tags:
      - accounts
      operationId: revokeToken
      parameters:
      - TokenId
      summary: Revoke a token
      description: |
        The token stops working at once, on every host: each request presenting a token reads
        its row. Revoking a revoked token changes nothing; a token may revoke itself. Needs
        `tokens:write`.
      security:
      - bearerAuth: []
      responses:
        '204':
          description: The token no longer works.
        '401': AccountUnauthorized
        '403': InsufficientScope
        '404': TokenNotFound
        '500': InternalError
        '503': DatabaseUnavailable
    """
    bearer = auth.require_account(games(), "tokens:write")
    try:
        tid = UUID(token_id)
    except ValueError:
        tid = None
    if tid is None or games().accounts.revoke(bearer.account.id, tid) is None:
        raise Problem(
            404,
            "token_not_found",
            f"this account has no token {token_id}; list them at GET /accounts/me/tokens",
        )
    return Response(status=204)


def account_of(account_id: str) -> Account:
    """The account ``account_id``; 404 ``account_not_found`` if there is none."""
    account = games().accounts.get(account_id) if len(account_id) <= 64 else None
    if account is None:
        raise Problem(404, "account_not_found", f"there is no account {account_id}")
    return account


def _summary(account: Account) -> dict[str, Any]:
    return {
        "account_id": account.id,
        "name": account.name,
        "bot": account.bot,
        "created_at": account.created_at,
    }


def _token(token: Token) -> dict[str, Any]:
    return {
        "token_id": token.id,
        "scopes": list(token.scopes),
        "label": token.label,
        "created_at": token.created_at,
        "last_used_at": token.last_used_at,
        "revoked_at": token.revoked_at,
    }
