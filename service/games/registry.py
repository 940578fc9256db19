"""The games the API serves: each game's decider with the schemas of its own bodies.

Adding a game is one ``domain/`` package plus one entry here; storage and routes are shared.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

from marshmallow import Schema

from domain.decider import Game
from domain.sequence import SEQUENCE
from domain.sushigo import SUSHI_GO
from service.games.sequence.schemas import (
    SequenceMove,
    SequenceRules,
    SequenceScoreSheet,
    SequenceView,
)
from service.games.sushigo.schemas import SushiGoMove, SushiGoRules, SushiGoScoreSheet, SushiGoView


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

    def position(self, state: Any) -> dict[str, int]:
        """Where the game is: its version and turn, as members of a problem or a body."""
        turn = self.turn(state)
        values = turn if isinstance(turn, tuple) else (turn,)
        return {"version": state.version, **dict(zip(self.turn_fields, values, strict=True))}


def _sushigo_turn(state: Any) -> tuple[int, int]:
    return (state.round, state.turn)


def _sequence_turn(state: Any) -> int:
    return state.turn  # one seat moves per turn; a dead card's discard (Q7) keeps the turn


ADAPTERS: dict[str, GameAdapter] = {
    SUSHI_GO.name: GameAdapter(
        SUSHI_GO,
        SushiGoRules(),
        SushiGoMove(),
        SushiGoView(),
        SushiGoScoreSheet(),
        _sushigo_turn,
        ("round", "turn"),
    ),
    SEQUENCE.name: GameAdapter(
        SEQUENCE,
        SequenceRules(),
        SequenceMove(),
        SequenceView(),
        SequenceScoreSheet(),
        _sequence_turn,
        ("turn",),
    ),
}
