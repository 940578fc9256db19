"""Sushi Go! (Gamewright and Zoch editions, with the pass-direction and 2-player dummy variants).

The rulings implemented are S1–S18 of ``shared/rules/sushi-go.md``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ..decider import BY_BOT, Command, Event, Viewer
from .bots import awaiting, bot_move
from .game import GAME, decide, evolve, execute
from .provenance import provenance
from .replay import commands, upcast
from .rules import Rules, parse_rules
from .state import Pick, State
from .views import score_sheet, view, visible_event

__all__ = ["SUSHI_GO", "Pick", "Rules", "State", "SushiGo", "parse_rules"]


class SushiGo:
    """The Sushi Go! decider, as the game-independent ``domain.decider.Game`` shape."""

    name = GAME

    def initial_state(self) -> State:
        return State()

    def decide(self, state: State, command: Command) -> list[Event]:
        return decide(state, command)

    def execute(self, state: State, command: Command) -> tuple[list[Event], State]:
        return execute(state, command)

    def evolve(self, state: State, event: Event) -> State:
        return evolve(state, event)

    def view(self, state: State, viewer: Viewer) -> dict[str, Any]:
        return view(state, viewer)

    def visible_event(self, state: State, event: Event, viewer: Viewer) -> Event:
        return visible_event(state, event, viewer)

    def score_sheet(self, state: State) -> dict[str, Any]:
        return score_sheet(state)

    def is_over(self, state: State) -> bool:
        return state.over

    def seat_count(self, state: State) -> int:
        return state.rules.players if state.rules else 0

    def awaiting(self, state: State) -> list[int]:
        return awaiting(state)

    def bots(self, state: State) -> Mapping[int, str]:
        return state.bots

    def turn_seconds(self, state: State) -> int | None:
        return state.turn_seconds

    def bot_move(self, state: State, seat: int, kind: str, seed: bytes, by: str = BY_BOT) -> Pick:
        return bot_move(state, seat, kind, seed, by)

    def upcast(self, event: Event) -> Event:
        return upcast(event)

    def commands(self, events: Sequence[Event], seed: bytes) -> Iterator[tuple[int, Command]]:
        return commands(events, seed)

    def provenance(self, events: Sequence[Event]) -> list[dict[str, Any]]:
        return provenance(events)


SUSHI_GO = SushiGo()
