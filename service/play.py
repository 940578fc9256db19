"""The service layer: load a game, decide a command, append its events — retrying on races.

Optimistic concurrency: a command is decided on the state at version N and appended as N+1…;
if another request appended first, the store raises VersionConflict and the command is decided
again on the fresh state. Players picking at the same moment therefore all succeed, while a
second pick by the same seat in the same turn is refused by the rules (S4) on the retry.

Every command is followed, in the same append, by the moves bots owe (service/autoplay.py); an
append that starts a timed turn writes its deadline row in the same statement (service/live/clock.py
makes the moves of turns whose deadline passed).
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID, uuid4

from domain.decider import (
    SPECTATOR,
    BotSeat,
    CreateGame,
    MakeMove,
    TakeSeat,
    Viewer,
    commitment,
    conflict,
)
from service import autoplay, metrics
from service.games.registry import ADAPTERS, GameAdapter
from service.http.problems import Problem
from service.store.deadlines import Deadlines
from service.store.events import EventStore, VersionConflict
from service.store.recent import Recent

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
        self.deadlines = Deadlines(store.pool)
        self._deadlines: Recent[UUID, tuple[Any, datetime | None]] = Recent(CACHE_SIZE)

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

    def visible_events(
        self, loaded: Loaded, viewer: Viewer, after: int, limit: int
    ) -> list[dict[str, Any]]:
        """Up to ``limit`` events after version ``after``, each as ``viewer`` may read it. Events
        past ``loaded`` are left out: the redaction rule judges by that state, so load first."""
        game = loaded.adapter.game
        return [
            {
                "version": r.version,
                "type": r.type,
                "schema_version": r.schema_version,
                "data": game.visible_event(loaded.state, r.event, viewer).data,
                "recorded_at": r.recorded_at,
            }
            for r in self.store.load_records(loaded.id, after, limit)
            if r.version <= loaded.version
        ]

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

    def turn_deadline(self, loaded: Loaded, past: bool = False) -> datetime | None:
        """When the current turn of a timed game times out (None: untimed, or nobody to wait
        for); of a ``past`` state, the deadline its turn had. The current one is read once per
        turn: a turn's row never changes."""
        game, state = loaded.adapter.game, loaded.state
        if not autoplay.turn_seconds(game, state) or not autoplay.awaiting(game, state):
            return None
        turn = loaded.adapter.turn(state)
        cached = None if past else self._deadlines.get(loaded.id)
        if cached is not None and cached[0] == turn:
            return cached[1]
        row = self.deadlines.latest(loaded.id, at_most=loaded.version)
        deadline = None if row is None else row.deadline
        if not past:
            self._deadlines.put(loaded.id, (turn, deadline))
        return deadline

    @staticmethod
    def started(loaded: Loaded) -> bool:
        """Whether the game has started (or is over): every game's view says its ``status``.
        Why not the seat number: bots may take the seats after a person's."""
        return loaded.adapter.game.view(loaded.state, SPECTATOR)["status"] != "waiting"

    # --- commands ---------------------------------------------------------------------------

    def create(
        self,
        name: str,
        options: dict[str, Any],
        bots: Sequence[BotSeat] = (),
        turn_seconds: int | None = None,
    ) -> Loaded:
        """A new game; bot seats that come first are taken now, and if bots take every seat the
        game is played to its end now."""
        adapter = adapter_for(name)
        game = adapter.game
        if (bots or turn_seconds) and not autoplay.has_bots(game):
            raise Problem(422, "invalid_bots", f"{name} has no bots and no turn clock yet")
        seed = secrets.token_bytes(32)
        command = CreateGame(options, commitment(seed), seed, tuple(bots), turn_seconds)
        outcome = autoplay.run(adapter, game.initial_state(), seed, [command])
        # No deadline row to write: a game starts at creation only when bots take every seat,
        # and then they play it to the end.
        assert outcome.deadline is None
        game_id = uuid4()
        self.store.create_game(game_id, name, seed, outcome.events)
        self._remember(game_id, name, outcome.state)
        return Loaded(game_id, adapter, outcome.state)

    def join(self, game_id: UUID, name: str, token_hash: bytes) -> tuple[int, Loaded]:
        """Take the next free seat for ``name``; the seat's token hash is stored with it."""
        for _ in range(MAX_ATTEMPTS):
            loaded = self.load(game_id)
            game, seed = loaded.adapter.game, self.seed(game_id)
            outcome = autoplay.run(loaded.adapter, loaded.state, seed, [TakeSeat(name, seed)])
            seat = outcome.events[0].data["seat"]
            try:
                self.store.append(
                    game_id,
                    loaded.version,
                    outcome.events,
                    seat_token=(seat, token_hash),
                    deadline=outcome.deadline,
                )
            except VersionConflict:
                metrics.APPEND_RETRIES.inc()
                continue
            self._remember(game_id, game.name, outcome.state)
            return seat, Loaded(game_id, loaded.adapter, outcome.state)
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
            seed = self.seed(game_id)
            outcome = autoplay.run(loaded.adapter, loaded.state, seed, [MakeMove(seat, move, seed)])
            try:
                self.store.append(
                    game_id, loaded.version, outcome.events, deadline=outcome.deadline
                )
            except VersionConflict:
                metrics.APPEND_RETRIES.inc()
                continue
            self._remember(game_id, game.name, outcome.state)
            metrics.MOVES.labels(game.name).inc()
            return Loaded(game_id, loaded.adapter, outcome.state)
        raise _too_busy()

    def time_out(self, game_id: UUID, version: int) -> int:
        """Make the moves the turn whose deadline row is at ``version`` still waits for (the
        clock's, or a bot's), then the bots' moves after them; the number of timed-out moves
        made. Nothing if that turn is over: a later row, or the game ended."""
        for _ in range(MAX_ATTEMPTS):
            loaded = self.load(game_id)
            game, state = loaded.adapter.game, loaded.state
            if game.is_over(state) or not autoplay.awaiting(game, state):
                return 0
            # Read after the state: a turn that ended before the load has a later row by now;
            # one that ends after it makes this append conflict.
            latest = self.deadlines.latest(game_id)
            if latest is None or latest.version != version:
                return 0
            seed = self.seed(game_id)
            expired = loaded.adapter.turn(state)
            outcome = autoplay.run(loaded.adapter, state, seed, expired=expired)
            try:
                self.store.append(
                    game_id, loaded.version, outcome.events, deadline=outcome.deadline
                )
            except VersionConflict:
                metrics.APPEND_RETRIES.inc()
                continue  # a player (or another sweeper) moved meanwhile: look again
            self._remember(game_id, game.name, outcome.state)
            metrics.TIMED_OUT_MOVES.inc(outcome.timeouts)
            return outcome.timeouts
        raise _too_busy()


def _too_busy() -> Problem:
    return Problem(
        409,
        "too_many_conflicts",
        "the game changed under this request too many times in a row; send it again",
        headers={"Retry-After": "1"},
    )
