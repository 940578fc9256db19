"""Rematches (issue 29): the same game again, for the same table, proposed by any of its players.

The first player of a finished game who asks creates its rematch: a new game with the same
rules, bots at the same seats (with the same names and kinds), the same turn clock and the same
visibility. Every player who asks (the first included) takes a seat in it under the same name.
However many ask at once, on however many hosts, there is one rematch: the database's primary
key on the finished game decides (service/store/rematches.py); the losers of that race join the
winner's game.

A private game's rematch is private, and its invitation is shown to nobody: only the finished
game's players take its seats, each with the token of their seat in the finished game.
"""

from __future__ import annotations

import contextlib
import hashlib
import secrets
from typing import Any
from uuid import UUID

from domain.bots import bots_from_json
from domain.decider import SPECTATOR
from service import errors
from service.play import GameService, Loaded
from service.store.idempotency_records import IdempotencyRecord
from service.store.recent import Recent
from service.store.rematches import Rematch, Rematches, RematchExists, RematchSeatTaken

CACHE_SIZE = 2048  # finished games whose rematch is known (a rematch never changes)


class Rematcher:
    """Proposes and joins rematches. Thread-safe."""

    def __init__(self, games: GameService) -> None:
        self.games = games
        self.rows = Rematches(games.store)
        self._known: Recent[UUID, Rematch] = Recent(CACHE_SIZE)

    def of(self, game_id: UUID) -> Rematch | None:
        """The finished game's rematch, if any (remembered once known: it never changes)."""
        known = self._known.get(game_id)
        if known is None:
            known = self.rows.of(game_id)
            if known is not None:
                self._known.put(game_id, known)
        return known

    def ask(
        self,
        game_id: UUID,
        seat: int,
        token_hash: bytes,
        record: IdempotencyRecord | None = None,
        client: bytes | None = None,
        waiting_limit: int = 0,
    ) -> tuple[Rematch, int, Loaded]:
        """``seat`` of the finished game ``game_id`` takes a seat in its rematch (created now if
        nobody proposed it yet), under its name, with the token hashing to ``token_hash``;
        returns the rematch, the new seat and the new game. 409 ``game_not_over`` before the
        end, ``already_in_rematch`` if this seat has its seat in it already."""
        loaded = self.games.load(game_id)
        if loaded.adapter.game.view(loaded.state, SPECTATOR)["status"] != "over":
            raise errors.conflict(
                "game_not_over",
                "a rematch is for a finished game: this one has not ended (or was cancelled);"
                " play it to its end first",
                **loaded.adapter.position(loaded.state),
            )
        rematch = self.of(game_id) or self._propose(loaded, seat)
        if seat in self.rows.seats(game_id):
            raise _already(seat, rematch)
        try:
            new_seat, new = self.games.join(
                rematch.rematch_id,
                loaded.state.names[seat],
                token_hash,
                record,
                client,
                waiting_limit,
                rematch_of=(game_id, seat),
                account=_account(loaded.state, seat),  # an account's seat stays the account's
            )
        except RematchSeatTaken:
            raise _already(seat, rematch) from None
        except errors.ServiceError as error:
            # Its own name, taken a moment ago by this seat's other request: say so.
            if error.code == "name_taken" and seat in self.rows.seats(game_id):
                raise _already(seat, rematch) from None
            raise
        return rematch, new_seat, new

    def _propose(self, loaded: Loaded, seat: int) -> Rematch:
        """Create the rematch, unless another request did first: either way, the one rematch."""
        game = loaded.adapter.game
        created = game.upcast(self.games.store.load_records(loaded.id, 0, 1)[0].event).data
        bots = bots_from_json(created.get("bots"))
        private = (_unshown_hash(), _unshown_hash()) if self.games.is_private(loaded.id) else None
        with contextlib.suppress(RematchExists):  # another seat proposed it a moment ago
            self.games.create(
                game.name,
                dict(created["rules"]),
                bots,
                created.get("turn_seconds"),
                private=private,
                rematch_of=(loaded.id, seat),
                rated=bool(created.get("rated", False)),  # its accounts sit again: rated too
            )
        rematch = self.of(loaded.id)
        assert rematch is not None  # written with the game that won the race
        return rematch


def _account(state: Any, seat: int) -> str | None:
    accounts = getattr(state, "accounts", ())
    return accounts[seat] if seat < len(accounts) else None


def _already(seat: int, rematch: Rematch) -> errors.ServiceError:
    return errors.conflict(
        "already_in_rematch",
        f"seat {seat} has its seat in this game's rematch ({rematch.rematch_id}) already: use"
        " the token that answer gave (send the same Idempotency-Key to get it again)",
    )


def _unshown_hash() -> bytes:
    """The hash of a token nobody is given: a private rematch's creator token and invitation
    (only the finished game's players join it, through its rematch)."""
    return hashlib.sha256(secrets.token_bytes(32)).digest()
