"""Bearer tokens: 32 random bytes, shown once, stored only as a SHA-256 hash.

A token acts only for its own seat in its own game. Comparison is in constant time
(``hmac.compare_digest``) against the hashes of the game's seats.
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
from service.store.events import SeatToken
from service.store.invitations import PrivateGame

TOKEN_BYTES = 32


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


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
    """The seat token row ``token`` matches in ``game_id`` (see ``seat_of``)."""
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


def require_creator(games: GameService, game_id: UUID) -> PrivateGame:
    """The private game ``game_id``, if the request's bearer token is its creator token."""
    token = bearer_token()
    if token is None:
        raise Problem(
            401,
            "missing_token",
            "changing the invitation needs 'Authorization: Bearer <creator_token>', the"
            " creator token from the answer that created the game",
            headers={"WWW-Authenticate": "Bearer"},
        )
    private = games.private_game(game_id)
    if private is None:
        raise Problem(
            409, "game_not_private", "this game is public: it has no invitation to change"
        )
    if not hmac.compare_digest(private.creator_hash, token_hash(token)):
        raise Problem(
            403,
            "not_the_creator",
            "only the game's creator token can change its invitation (a seat's token cannot)",
        )
    return private


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
