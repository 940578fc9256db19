"""Quick match (issue 35): seat a person in the waiting public game with exactly these rules, or
create one with them seated in it.

PostgreSQL arbitrates, without locks held across requests: a key (the SHA-256 of the rules as
the new game's ``game_created`` records them, in canonical JSON: game, rules with the number of
players, bots, turn clock, name rule, and ``rated``, issue 37: a rated game's pool is its game
and edition, so rated requests meet only rated requests of the same pool) names the open game
(service/store/quick_games.py). A request joins that game (an ordinary join: optimistic
concurrency on its events); if it is full or cancelled (or there is none), the request creates
the next game with itself seated, and the game takes the key's place in the creation's own
transaction only if the key still names the game found full (a compare-and-set). A request that
loses that race undoes its creation and joins the winner's game. So N simultaneous requests for
a 4-player game, on any number of hosts, fill ⌈N/4⌉ games, each full but the last: a game is
created only once the one before it is full.
"""

from __future__ import annotations

import functools
import hashlib
import secrets
from collections.abc import Callable
from typing import Any
from uuid import UUID, uuid4

from domain import canonical
from domain.decider import CreateGame, commitment
from service import errors
from service.play import GameService, Loaded, adapter_for
from service.play.commands import Creation, Seating
from service.play.loaded import MAX_ATTEMPTS, has_started, too_busy
from service.store import quick_games
from service.store.idempotency_records import IdempotencyRecord
from service.store.quick_games import ClaimLost, QuickGames

# Why a found game cannot take the seat, so the next game is made: every other refusal
# (the name, the account already seated there, the waiting games cap) is the request's own.
GONE = {"game_full", "game_cancelled"}


def rules_key(creation: Creation) -> str:
    """The key of games with exactly ``creation``'s rules: what their ``game_created`` records
    (decided here on a throwaway seed), but the seed's commitment. Rules the game's own
    defaults fill in key alike (``{}`` and ``{"edition": "gamewright"}``)."""
    adapter = adapter_for(creation.name)
    seed = secrets.token_bytes(32)
    command = CreateGame(
        creation.options,
        commitment(seed),
        seed,
        creation.bots,
        creation.turn_seconds,
        rated=creation.rated,
    )
    created, _ = adapter.game.execute(adapter.game.initial_state(), command)
    recorded = {k: v for k, v in created[0].data.items() if k != "seed_commitment"}
    return hashlib.sha256(canonical.dumps(recorded)).hexdigest()


def _claim(cur: Any, game_id: UUID, *, key: str, found: UUID | None) -> None:
    quick_games.claim(cur, key, game_id, found)


class QuickMatch:
    """Seats people by rules. Thread-safe."""

    def __init__(self, games: GameService) -> None:
        self.games = games
        self.rows = QuickGames(games.store)

    def seat(
        self,
        creation: Creation,
        person: Seating,
        waiting_limit: int = 0,
        record: Callable[[bool], IdempotencyRecord] | None = None,
    ) -> tuple[int, Loaded, bool]:
        """``person``'s seat, the game, and whether this request created it. ``creation`` must
        be public. Refusals as for a join (``name_taken``, ``already_seated``,
        ``too_many_waiting_games``); ``too_many_conflicts`` if the games changed under this
        request too often in a row. ``record``: the keyed request's record, given whether the
        game was created (written with the seat, in the join's or the creation's statement)."""
        assert creation.private is None, "quick match games are public"
        key = rules_key(creation)
        for _ in range(MAX_ATTEMPTS):
            found = self.rows.open_game(key)
            if found is not None:
                joined = self._join(
                    key, found, person, waiting_limit, None if record is None else record(False)
                )
                if joined is not None:
                    return (*joined, False)
            if person.client is not None and waiting_limit:
                self.games._check_waiting(uuid4(), person.client, waiting_limit)
            try:
                seats, loaded = self.games.create_seated(
                    creation,
                    [person],
                    record=None if record is None else record(True),
                    along=functools.partial(_claim, key=key, found=found),
                )
            except ClaimLost:
                continue  # another request's game took the key's place: join it
            return seats[0], loaded, True
        raise too_busy()

    def _join(
        self,
        key: str,
        found: UUID,
        person: Seating,
        waiting_limit: int,
        record: IdempotencyRecord | None = None,
    ) -> tuple[int, Loaded] | None:
        """``person`` seated in ``found``; None if it is full or cancelled."""
        try:
            seat, loaded = self.games.join(
                found,
                person.name,
                person.token_hash,
                record,
                client=person.client,
                waiting_limit=waiting_limit,
                account=person.account,
            )
        except errors.ServiceError as error:
            if error.code in GONE:
                return None
            if error.code == "already_seated":  # a retry, most likely: say where the seat is
                error.details = {**error.details, "game_id": str(found)}
            raise
        if has_started(loaded.adapter.game, loaded.state):
            self.rows.release(key, found)  # full now: the next request makes the next game
        return seat, loaded
