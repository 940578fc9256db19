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
    # Which turn a state is at. A move is meant for the turn it was decided against: if the turn
    # ends while the request retries a lost append race, the move is not re-decided for the next.
    turn: Callable[[Any], Hashable] = lambda state: None
    # The seats whose move a playing game waits for, read from its public view (the lobby).
    waiting_for: Callable[[dict[str, Any]], list[int]] = lambda view: []


def _sushigo_turn(state: Any) -> tuple[int, int]:
    return (state.round, state.turn)


def _sequence_turn(state: Any) -> int:
    return state.turn  # one seat moves per turn; a dead card's discard (Q7) keeps the turn


def _sushigo_waiting_for(view: dict[str, Any]) -> list[int]:
    return [s["seat"] for s in view["seats"] if not s["picked"]]  # S4: all pick at once


def _sequence_waiting_for(view: dict[str, Any]) -> list[int]:
    return [] if view["seat_to_move"] is None else [view["seat_to_move"]]


ADAPTERS: dict[str, GameAdapter] = {
    SUSHI_GO.name: GameAdapter(
        SUSHI_GO,
        SushiGoRules(),
        SushiGoMove(),
        SushiGoView(),
        SushiGoScoreSheet(),
        _sushigo_turn,
        _sushigo_waiting_for,
    ),
    SEQUENCE.name: GameAdapter(
        SEQUENCE,
        SequenceRules(),
        SequenceMove(),
        SequenceView(),
        SequenceScoreSheet(),
        _sequence_turn,
        _sequence_waiting_for,
    ),
}
