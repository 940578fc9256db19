"""The service layer: load a game, decide a command, append its events — retrying on races.

Optimistic concurrency: a command is decided on the state at version N and appended as N+1…;
if another request appended first, the store raises VersionConflict and the command is decided
again on the fresh state. Players picking at the same moment therefore all succeed, while a
second pick by the same seat in the same turn is refused by the rules (S4) on the retry.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any
from uuid import UUID, uuid4

from domain.decider import CreateGame, MakeMove, TakeSeat, commitment, conflict
from service.problems import Problem
from service.recent import Recent
from service.registry import ADAPTERS, GameAdapter
from service.store import EventStore, VersionConflict

MAX_ATTEMPTS = 20
CACHE_SIZE = 2048  # games per process whose state, seed and seat tokens are kept


@dataclass(frozen=True)
class Loaded:
    id: UUID
    adapter: GameAdapter
    state: Any

    @property
    def version(self) -> int:
        return self.state.version


def adapter_for(name: str) -> GameAdapter:
    adapter = ADAPTERS.get(name)
    if adapter is None:
        raise Problem(
            422, "unknown_game", f"unknown game {name!r}; this service hosts {sorted(ADAPTERS)}"
        )
    return adapter


class GameService:
    """Commands and queries on games. Thread-safe. Keeps recent states, so that a request only
    reads the events appended since (events never change, so a cached fold stays true), and the
    seeds and seat token hashes of recent games (rows that never change either)."""

    def __init__(self, store: EventStore) -> None:
        self.store = store
        self._states: Recent[UUID, tuple[str, Any]] = Recent(CACHE_SIZE)
        self._seeds: Recent[UUID, bytes] = Recent(CACHE_SIZE)
        self._seat_tokens: Recent[UUID, list[tuple[int, bytes]]] = Recent(CACHE_SIZE)

    # --- queries ---------------------------------------------------------------------------

    def load(self, game_id: UUID) -> Loaded:
        cached = self._states.get(game_id)
        if cached is None:
            name, events = self.store.load(game_id)
            adapter = adapter_for(name)
            state = adapter.game.initial_state()
        else:
            name, state = cached
            adapter = adapter_for(name)
            events = self.store.events_after(game_id, state.version)
        evolve = adapter.game.evolve
        for event in events:
            state = evolve(state, event)
        self._remember(game_id, name, state)
        return Loaded(game_id, adapter, state)

    def state_at(self, loaded: Loaded, version: int) -> Any:
        """The game's state after its first ``version`` events (time travel)."""
        if version == loaded.version:
            return loaded.state
        game = loaded.adapter.game
        past = game.initial_state()
        for record in self.store.load_records(loaded.id, 0, version):
            past = game.evolve(past, record.event)
        return past

    def _remember(self, game_id: UUID, name: str, state: Any) -> None:
        known = self._states.get(game_id)
        if known is None or known[1].version <= state.version:  # never go back in time
            self._states.put(game_id, (name, state))

    def seed(self, game_id: UUID) -> bytes:
        seed = self._seeds.get(game_id)
        if seed is None:
            seed = self.store.seed(game_id)
            self._seeds.put(game_id, seed)
        return seed

    def seat_tokens(self, game_id: UUID, refresh: bool = False) -> list[tuple[int, bytes]]:
        """The game's seats with their token hashes (rows never change once written)."""
        tokens = self._seat_tokens.get(game_id)
        if tokens is None or refresh:
            tokens = self.store.seat_tokens(game_id)
            self._seat_tokens.put(game_id, tokens)
        return tokens

    # --- commands ---------------------------------------------------------------------------

    def create(self, name: str, options: dict[str, Any]) -> Loaded:
        adapter = adapter_for(name)
        seed = secrets.token_bytes(32)
        game = adapter.game
        events, state = game.execute(game.initial_state(), CreateGame(options, commitment(seed)))
        game_id = uuid4()
        self.store.create_game(game_id, name, seed, events)
        self._remember(game_id, name, state)
        return Loaded(game_id, adapter, state)

    def join(self, game_id: UUID, name: str, token_hash: bytes) -> tuple[int, Loaded]:
        """Take the next free seat for ``name``; the seat's token hash is stored with it."""
        for _ in range(MAX_ATTEMPTS):
            loaded = self.load(game_id)
            game = loaded.adapter.game
            events, state = game.execute(loaded.state, TakeSeat(name, self.seed(game_id)))
            seat = events[0].data["seat"]
            try:
                self.store.append(game_id, loaded.version, events, seat_token=(seat, token_hash))
            except VersionConflict:
                continue
            self._remember(game_id, game.name, state)
            return seat, Loaded(game_id, loaded.adapter, state)
        raise _too_busy()

    def move(self, game_id: UUID, seat: int, move: Any, loaded: Loaded | None = None) -> Loaded:
        """Decide and append ``seat``'s move; ``loaded`` is the game as just read, if at hand."""
        first_turn: Any = None
        for attempt in range(MAX_ATTEMPTS):
            if loaded is None or attempt > 0:
                loaded = self.load(game_id)
            game = loaded.adapter.game
            turn = loaded.adapter.turn(loaded.state)
            if attempt == 0:
                first_turn = turn
            elif turn != first_turn:
                # The turn this move was decided for ended while it retried: every seat, this
                # one included, has picked in it meanwhile (another request of this seat won the
                # race). Re-deciding it would make it a move of the next turn, which the client
                # never sent (S4: a pick is final).
                raise conflict(
                    "already_picked",
                    f"seat {seat} has already picked in the turn this move was sent for;"
                    " a pick is final (S4)",
                )
            events, state = game.execute(loaded.state, MakeMove(seat, move, self.seed(game_id)))
            try:
                self.store.append(game_id, loaded.version, events)
            except VersionConflict:
                continue
            self._remember(game_id, game.name, state)
            return Loaded(game_id, loaded.adapter, state)
        raise _too_busy()


def _too_busy() -> Problem:
    return Problem(
        409,
        "too_many_conflicts",
        "the game changed under this request too many times in a row; send it again",
        headers={"Retry-After": "1"},
    )
