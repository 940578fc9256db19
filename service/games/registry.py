"""The games the API serves: each game's decider with the schemas of its own bodies.

A game registers itself, in one call, from its own package (``service/games/<game>/__init__.py``
calls :func:`register`); :func:`load_games` imports every package under ``service/games/``, so
nothing shared names a game. Storage and routes are shared.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from marshmallow import Schema
from rich.console import Console

from domain import games as domain_games
from domain.decider import Event, Game

# Shows a game's (upcast) events in the terminal: ``cardroom replay``.
ReplayView = Callable[[Sequence[Event], Console], None]


@dataclass(frozen=True)
class GameAdapter:
    """Schema instances are built once: building nested schemas costs more than using them."""

    game: Game
    rules: Schema  # the ``rules`` object of POST /games
    move: Schema  # the body of POST /games/{id}/moves; loads {"seat", "move"}
    view: Schema  # GET /games/{id}
    score_sheet: Schema  # GET /games/{id}/scores
    # Which turn a state is at, as a move names it (the move schema loads the same value as
    # ``turn``): a move counts only for the turn it names (409 stale_move otherwise).
    turn: Callable[[Any], Hashable] = lambda state: None
    # The view's fields that name the turn: what a move must send back, and what every refusal
    # about the game reports next to its version.
    turn_fields: tuple[str, ...] = ()
    # The contract's shapes of ``move`` when it has several (each a schema), else just ``move``.
    move_shapes: tuple[Schema, ...] = field(default=())
    replay: ReplayView | None = None  # ``cardroom replay``; None: only the audit is shown
    # The seats whose move a playing game waits for, read from its public view (the lobby).
    waiting_for: Callable[[dict[str, Any]], list[int]] = lambda view: []

    @property
    def name(self) -> str:
        return self.game.name

    def position(self, state: Any) -> dict[str, int]:
        """Where the game is: its version and turn, as members of a problem or a body."""
        if not self.turn_fields:  # a game whose moves name no turn
            return {"version": state.version}
        turn = self.turn(state)
        values = turn if isinstance(turn, tuple) else (turn,)
        return {"version": state.version, **dict(zip(self.turn_fields, values, strict=True))}


ADAPTERS: dict[str, GameAdapter] = {}


def register(adapter: GameAdapter) -> GameAdapter:
    """Serve ``adapter``'s game (and let the domain's audit and replay find it by name)."""
    ADAPTERS[adapter.name] = adapter
    domain_games.GAMES.setdefault(adapter.name, adapter.game)
    return adapter


def unregister(name: str) -> None:
    """Stop serving ``name`` (for tests that register a game of their own)."""
    ADAPTERS.pop(name, None)


def load_games() -> dict[str, GameAdapter]:
    """Every game served: the game packages under service/games/ register themselves when first
    imported (once per process)."""
    _import_game_packages()
    return ADAPTERS


@cache
def _import_game_packages() -> None:
    for module in pkgutil.iter_modules(_games_path(), "service.games."):
        if module.ispkg:
            importlib.import_module(module.name)


def _games_path() -> list[str]:
    import service.games

    return list(service.games.__path__)
