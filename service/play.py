"""The service layer: load a game, decide a command, append its events — retrying on races.

Optimistic concurrency: a command is decided on the state at version N and appended as N+1…;
if another request appended first, the store raises VersionConflict and the command is decided
again on the fresh state. Players picking at the same moment therefore all succeed, while a
second pick by the same seat in the same turn is refused by the rules (S4) on the retry.
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any
from uuid import UUID, uuid4

from domain.decider import CreateGame, MakeMove, TakeSeat, commitment
from service.problems import Problem
from service.registry import ADAPTERS, GameAdapter
from service.store import EventStore, VersionConflict

MAX_ATTEMPTS = 20
CACHE_SIZE = 2048


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
    """Commands and queries on games. Thread-safe; keeps recent states so that a request only
    reads the events appended since (events never change, so a cached fold stays true)."""

    def __init__(self, store: EventStore) -> None:
        self.store = store
        self._states: OrderedDict[UUID, tuple[str, Any]] = OrderedDict()
        self._seeds: dict[UUID, bytes] = {}
        self._lock = threading.Lock()

    # --- queries ---------------------------------------------------------------------------

    def load(self, game_id: UUID) -> Loaded:
        with self._lock:
            cached = self._states.get(game_id)
        if cached is None:
            name, events = self.store.load(game_id)
            adapter = adapter_for(name)
            state = adapter.game.initial_state()
        else:
            name, state = cached
            adapter = adapter_for(name)
            events = [r.event for r in self.store.load_records(game_id, state.version, 1_000_000)]
        evolve = adapter.game.evolve
        for event in events:
            state = evolve(state, event)
        self._remember(game_id, name, state)
        return Loaded(game_id, adapter, state)

    def _remember(self, game_id: UUID, name: str, state: Any) -> None:
        with self._lock:
            known = self._states.get(game_id)
            if known is None or known[1].version <= state.version:
                self._states[game_id] = (name, state)
            self._states.move_to_end(game_id)
            while len(self._states) > CACHE_SIZE:
                self._states.popitem(last=False)

    def seed(self, game_id: UUID) -> bytes:
        seed = self._seeds.get(game_id)
        if seed is None:
            seed = self._seeds[game_id] = self.store.seed(game_id)
        return seed

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

    def move(self, game_id: UUID, seat: int, move: Any) -> Loaded:
        for _ in range(MAX_ATTEMPTS):
            loaded = self.load(game_id)
            game = loaded.adapter.game
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
