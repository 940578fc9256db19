"""Bearer tokens: 32 random bytes, shown once, stored only as a SHA-256 hash.

A seat token acts only for its own seat in its own game. Comparison is in constant time
(``hmac.compare_digest``) against the hashes of the game's seats.

An account token (issue 35: ``cardroom_pat_`` and 32 random bytes, so that secret scanners
recognise a leaked one) acts for its account: for the seat the account holds in any game, and on
the account's own routes, within its scopes (service/http/schemas/accounts.py;
``403 insufficient_scope`` names the one missing). Its row is read with every request, so a
revoked token is refused everywhere at once.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from uuid import UUID

from flask import request

from service import errors, logs
from service.http.problems import Problem
from service.play import GameService
from service.store.accounts import Bearer
from service.store.events import SeatToken
from service.store.invitations import PrivateGame

TOKEN_BYTES = 32
ACCOUNT_TOKEN_PREFIX = "cardroom_pat_"


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def new_account_token() -> str:
    return ACCOUNT_TOKEN_PREFIX + secrets.token_urlsafe(TOKEN_BYTES)


def is_account_token(token: str) -> bool:
    return token.startswith(ACCOUNT_TOKEN_PREFIX)


def token_hash(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def bearer_token() -> str | None:
    """The request's bearer token, None without an Authorization header."""
    header = request.headers.get("Authorization")
    if header is None:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Problem(
            401,
            "invalid_token",
            "the Authorization header must be 'Bearer <token>', with the token you got on joining",
            headers={"WWW-Authenticate": 'Bearer error="invalid_request"'},
        )
    return token.strip()


def _match(seats: list[SeatToken], digest: bytes) -> SeatToken | None:
    found = None
    for candidate in seats:
        if hmac.compare_digest(candidate.token_hash, digest):  # no early exit: constant time
            found = candidate
    return found


def seat_of(games: GameService, game_id: UUID, token: str, held: bool = True) -> int:
    """The seat ``token`` acts for in ``game_id``; 401 if unknown or its seat was left (unless
    not ``held``: a retried leave is recognised by its token), 403 if another game's."""
    return token_of(games, game_id, token, held).seat


def token_of(games: GameService, game_id: UUID, token: str, held: bool = True) -> SeatToken:
    """The seat token row ``token`` matches in ``game_id`` (see ``seat_of``); for an account
    token, its account's seat there."""
    if is_account_token(token):
        return account_seat(games, game_id, token)
    digest = token_hash(token)
    found = _match(games.seat_tokens(game_id), digest)
    if found is None:  # a seat taken since the cache was filled?
        found = _match(games.seat_tokens(game_id, refresh=True), digest)
    if found is not None and held and not _holds_now(games, game_id, found):
        raise Problem(
            401,
            "invalid_token",
            f"this token's seat ({found.seat}) was left before the start: the token acts for no"
            " seat any more; join the game again for a new token",
            headers={"WWW-Authenticate": 'Bearer error="invalid_token"'},
        )
    if found is not None:
        logs.bind(seat=found.seat)  # the request's log lines name the seat
        return found
    if games.store.token_game(digest) is not None:
        raise Problem(403, "not_your_game", "this token belongs to a seat in another game")
    raise Problem(
        401,
        "invalid_token",
        "unknown bearer token: use the token returned when you took your seat",
        headers={"WWW-Authenticate": 'Bearer error="invalid_token"'},
    )


def _holds_now(games: GameService, game_id: UUID, found: SeatToken) -> bool:
    """Whether ``found`` holds its seat; a "no" from this process's cached state (maybe behind:
    the seat may have been taken again since) is asked again of the game as it is now."""
    if games.holds(game_id, found):
        return True
    games.load(game_id)  # brings the cached state forward
    return games.holds(game_id, found)


def check_invitation(games: GameService, game_id: UUID, invitation: str | None) -> bytes | None:
    """Joining a private game needs its invitation in force: 403 ``invitation_required``
    without one, ``invalid_invitation`` for another (or one its creator revoked). Returns its
    hash (None for a public game): the join's append checks it again, under the lock a change
    of the invitation takes (it may be revoked while the join is decided)."""
    private = games.private_game(game_id)
    if private is None:
        return None  # a public game: anyone may join
    if invitation is None:
        raise Problem(
            403,
            "invitation_required",
            "this game is private: send its invitation as 'invitation' (ask whoever created"
            " the game for the link)",
        )
    presented = token_hash(invitation)
    current = private.invitation_hash
    if current is None or not hmac.compare_digest(current, presented):
        raise Problem(403, "invalid_invitation", errors.INVALID_INVITATION)
    return presented


def invitation_in_force(games: GameService, game_id: UUID) -> bool:
    """Whether the private game's invitation is in force, asked with the invitation itself
    (true, or 403 ``invalid_invitation`` as a join would answer) or with the creator token."""
    token = _invitation_bearer(
        "checking an invitation needs 'Authorization: Bearer <invitation>' (the token of the"
        " invitation link) or the game's creator token"
    )
    private = _private(games, game_id, "this game is public: it has no invitation")
    digest = token_hash(token)
    if hmac.compare_digest(private.creator_hash, digest):
        return private.invitation_hash is not None
    current = private.invitation_hash
    if current is None or not hmac.compare_digest(current, digest):
        raise Problem(403, "invalid_invitation", errors.INVALID_INVITATION)
    return True


def require_creator(games: GameService, game_id: UUID) -> PrivateGame:
    """The private game ``game_id``, if the request's bearer token is its creator token."""
    token = _invitation_bearer(
        "changing the invitation needs 'Authorization: Bearer <creator_token>', the creator"
        " token from the answer that created the game"
    )
    private = _private(games, game_id, "this game is public: it has no invitation to change")
    digest = token_hash(token)
    if hmac.compare_digest(private.creator_hash, digest):
        return private
    if not _known(games, private, token, digest):
        raise Problem(
            401,
            "invalid_token",
            "unknown bearer token: changing the invitation needs the creator token from the"
            " answer that created the game",
            headers={"WWW-Authenticate": 'Bearer error="invalid_token"'},
        )
    raise Problem(
        403,
        "not_the_creator",
        "only the game's creator token can change its invitation (a seat's token cannot)",
    )


def _invitation_bearer(missing: str) -> str:
    """The bearer token of a request about an invitation; 401 ``missing_token`` saying
    ``missing`` without one."""
    token = bearer_token()
    if token is None:
        raise Problem(401, "missing_token", missing, headers={"WWW-Authenticate": "Bearer"})
    return token


def _private(games: GameService, game_id: UUID, public: str) -> PrivateGame:
    private = games.private_game(game_id)
    if private is None:
        raise Problem(409, "game_not_private", public)
    return private


def _known(games: GameService, private: PrivateGame, token: str, digest: bytes) -> bool:
    """Whether ``token`` (not the creator's) is a valid token all the same, as ``token_of``
    tells 403 from 401: a seat's token (of this game or another), the game's invitation in
    force, or a live account token (else ``bearer_account``'s 401)."""
    if is_account_token(token):
        bearer_account(games, token)
        return True
    invitation = private.invitation_hash
    if invitation is not None and hmac.compare_digest(invitation, digest):
        return True
    return games.store.token_game(digest) is not None


def require_seat(games: GameService, game_id: UUID, held: bool = True) -> int:
    return require_token(games, game_id, held).seat


def require_token(games: GameService, game_id: UUID, held: bool = True) -> SeatToken:
    """The bearer's seat token row in ``game_id``; 401 without a token (see ``seat_of``)."""
    token = bearer_token()
    if token is None:
        raise Problem(
            401,
            "missing_token",
            "moves need 'Authorization: Bearer <token>' with the token you got on joining",
            headers={"WWW-Authenticate": "Bearer"},
        )
    return token_of(games, game_id, token, held)


def optional_seat(games: GameService, game_id: UUID) -> int | None:
    """A seat's view with a valid token, a spectator's without any (a bad token is an error)."""
    token = bearer_token()
    return None if token is None else seat_of(games, game_id, token)


# --- account tokens (issue 35) ---------------------------------------------------------------


def bearer_account(games: GameService, token: str) -> Bearer:
    """The account ``token`` acts for: 401 ``invalid_token`` if unknown or revoked."""
    bearer = games.accounts.bearer(token_hash(token))
    if bearer is None:
        raise Problem(
            401,
            "invalid_token",
            "unknown or revoked account token: mint a new one with another token of the"
            " account (POST /accounts/me/tokens), or create an account",
            headers={"WWW-Authenticate": 'Bearer error="invalid_token"'},
        )
    logs.bind(account=bearer.account.id)
    return bearer


def require_scope(bearer: Bearer, scope: str) -> Bearer:
    """``bearer`` if its token has ``scope``; else 403 ``insufficient_scope`` naming it."""
    if scope not in bearer.token.scopes:
        raise Problem(
            403,
            "insufficient_scope",
            f"this token lacks the scope '{scope}' (it has: {', '.join(bearer.token.scopes)});"
            f" mint a token with it (POST /accounts/me/tokens)",
            headers={"WWW-Authenticate": f'Bearer error="insufficient_scope", scope="{scope}"'},
            errors={"scope": scope},
        )
    return bearer


def require_account(games: GameService, scope: str | None = None) -> Bearer:
    """The request's account (its bearer must be an account token, with ``scope`` if given)."""
    token = bearer_token()
    if token is None:
        raise Problem(
            401,
            "missing_token",
            "this needs an account token: 'Authorization: Bearer cardroom_pat_...' (POST"
            " /accounts creates an account and its first token)",
            headers={"WWW-Authenticate": "Bearer"},
        )
    if not is_account_token(token):
        raise Problem(
            401,
            "invalid_token",
            "this needs an account token (cardroom_pat_...), not a seat token",
            headers={"WWW-Authenticate": 'Bearer error="invalid_token"'},
        )
    bearer = bearer_account(games, token)
    return bearer if scope is None else require_scope(bearer, scope)


def optional_account(games: GameService, scope: str) -> Bearer | None:
    """The request's account if it sent an account token (with ``scope``), else None."""
    token = bearer_token()
    if token is None or not is_account_token(token):
        return None
    return require_scope(bearer_account(games, token), scope)


def account_seat(games: GameService, game_id: UUID, token: str) -> SeatToken:
    """The seat an account token acts for in ``game_id`` (scope ``play``): 403
    ``not_your_game`` if its account holds none there."""
    bearer = require_scope(bearer_account(games, token), "play")
    found = games.account_seat(game_id, bearer.account.id)
    if found is None:
        raise Problem(
            403,
            "not_your_game",
            "this account holds no seat in this game: take one (POST /games/{id}/players with"
            " the account token)",
        )
    seat, taken_at = found
    logs.bind(seat=seat)
    return SeatToken(seat, token_hash(token), taken_at)
