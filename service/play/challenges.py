"""Challenges (issue 35): one account offers another a game; accepting creates it with both seated.

A challenge seats exactly two accounts: the challenger in the first seat no bot holds, the
challenged in the next; every other seat is a bot's (so the game starts as it is created).
Accepting decides ``CreateGame``, the two ``TakeSeat``\\ s and the bots' first moves in one run
and records them, with the challenge's ``accepted`` and its game's id, in one transaction
(``GameService.create_seated``): two accepts at once, or an accept and a cancel, have one
outcome, and no game is ever left half seated.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable, Mapping
from typing import Any
from uuid import UUID, uuid4

from domain.bots import bots_from_json
from domain.decider import CreateGame, TakeSeat, commitment
from service import autoplay, errors
from service.play import GameService, Loaded, adapter_for
from service.play.commands import Creation, Seating
from service.play.loaded import has_started
from service.store.accounts import Account
from service.store.challenges import (
    ACCEPTED,
    CANCELLED,
    DECLINED,
    EXPIRED,
    Challenge,
    ChallengeClosed,
    Challenges,
)
from service.store.idempotency_records import IdempotencyRecord

DEFAULT_SECONDS = 600  # CARDROOM_CHALLENGE_SECONDS: how long a challenge waits for its answer


def creation_of(request: Mapping[str, Any]) -> Creation:
    """The game a challenge's ``request`` (as stored: JSON) describes. A private challenge's
    game is private with a creator token and an invitation nobody is shown: its seats are
    filled as it is created. A rated challenge (``rated``, issue 37) makes a rated game: both
    seats are accounts', every other seat a bot's, so it fits a rated game as it is."""
    options = {**adapter_for(request["game"]).rules.load(request["rules"])}
    options["players"] = request["players"]
    private = (_unshown(), _unshown()) if request["visibility"] == "private" else None
    bots = bots_from_json(request["bots"])
    rated = bool(request.get("rated", False))
    return Creation(request["game"], options, bots, request.get("turn_seconds"), private, rated)


class Challenger:
    """Offers, answers and accepts challenges. Thread-safe."""

    def __init__(self, games: GameService, seconds: int = DEFAULT_SECONDS) -> None:
        self.games = games
        self.rows = Challenges(games.store)
        self.seconds = seconds

    def offer(
        self,
        by: Account,
        to: Account,
        request: Mapping[str, Any],
        along: Callable[[Any, Challenge], None] | None = None,
    ) -> Challenge:
        """``by`` challenges ``to`` to the game ``request`` describes (its rules checked now,
        the two accounts seated in a trial run: 422 as ``POST /games`` says, or
        ``invalid_challenge``)."""
        if by.id == to.id:
            raise _invalid("self", "an account cannot challenge itself; challenge another one")
        if to.bot is not None:
            raise _invalid(
                "bot",
                f"{to.id} is a built-in bot: it answers no challenge; play it by creating a"
                f" game with a '{to.bot}' bot in 'bots' (POST /games)",
            )
        creation = creation_of(request)
        adapter = adapter_for(creation.name)
        seed = secrets.token_bytes(32)
        trial = autoplay.run(
            adapter,
            adapter.game.initial_state(),
            seed,
            [
                CreateGame(
                    creation.options,
                    commitment(seed),
                    seed,
                    creation.bots,
                    creation.turn_seconds,
                    rated=creation.rated,
                ),
                TakeSeat(by.name, seed, by.id),
                TakeSeat(to.name, seed, to.id),
            ],
        )
        if not has_started(adapter.game, trial.state):
            raise _invalid(
                "seats",
                "a challenge seats two accounts: every other seat must be a bot's ('players'"
                " = 2 + the number of 'bots'); to play with others, create a game (POST /games)",
            )
        return self.rows.offer(uuid4(), by.id, to.id, request, self.seconds, along)

    def get(self, challenge_id: UUID) -> Challenge | None:
        return self.rows.get(challenge_id)

    def open_for(self, account_id: str) -> list[Challenge]:
        return self.rows.open_for(account_id)

    def answer(
        self,
        challenge: Challenge,
        status: str,
        along: Callable[[Any, Challenge], None] | None = None,
    ) -> Challenge:
        """Decline or cancel ``challenge``: 409 ``challenge_<status>`` if it is not offered."""
        try:
            return self.rows.answer(challenge.id, status, along)
        except ChallengeClosed:
            raise self._closed(challenge.id) from None

    def accept(
        self, challenge: Challenge, token_hash: bytes, record: IdempotencyRecord | None = None
    ) -> tuple[Challenge, int, Loaded]:
        """The challenged account accepts: the game, both accounts seated (under their names
        as they are now), the challenged's seat token hashing to ``token_hash``; returns the
        challenge as accepted, the challenged's seat and the game. The challenger's seat gets a
        token nobody is shown: its account token acts for it."""
        if challenge.status != "offered":
            raise closed(challenge)
        by, to = self._account(challenge.from_account), self._account(challenge.to_account)
        accepted: list[Challenge] = []
        try:
            seats, loaded = self.games.create_seated(
                creation_of(challenge.request),
                [Seating(by.name, by.id, _unshown()), Seating(to.name, to.id, token_hash)],
                record=record,
                along=lambda cur, game_id: accepted.append(
                    Challenges.accepted(cur, challenge.id, game_id)
                ),
            )
        except ChallengeClosed:
            raise self._closed(challenge.id) from None
        return accepted[0], seats[1], loaded

    def _account(self, account_id: str) -> Account:
        account = self.games.accounts.get(account_id)
        assert account is not None  # accounts are never deleted
        return account

    def _closed(self, challenge_id: UUID) -> errors.ServiceError:
        now = self.rows.get(challenge_id)
        assert now is not None
        return closed(now)


def closed(challenge: Challenge) -> errors.ServiceError:
    """409: the challenge was answered (or expired) already; ``errors.status`` says how."""
    details = {"status": challenge.status}
    if challenge.game_id is not None:
        details["game_id"] = str(challenge.game_id)
    status = challenge.status
    if status == ACCEPTED:
        error = errors.conflict("challenge_accepted", "this challenge was accepted already")
    elif status == DECLINED:
        error = errors.conflict("challenge_declined", "this challenge was declined")
    elif status == CANCELLED:
        error = errors.conflict("challenge_cancelled", "the challenger cancelled this challenge")
    else:
        assert status == EXPIRED
        error = errors.conflict(
            "challenge_expired", "this challenge expired unanswered; offer a new one"
        )
    error.details = details
    return error


def _invalid(reason: str, message: str) -> errors.ServiceError:
    error = errors.rule_broken("invalid_challenge", message)
    error.details = {"reason": reason}
    return error


def _unshown() -> bytes:
    """The hash of a token nobody is given (the challenger's seat token; a private
    challenge's creator token and invitation)."""
    return hashlib.sha256(secrets.token_bytes(32)).digest()
