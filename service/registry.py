"""The games the API serves: each game's decider with the schemas of its own bodies.

Adding a game is one ``domain/`` package plus one entry here; storage and routes are shared.
"""

from __future__ import annotations

from dataclasses import dataclass

from marshmallow import Schema

from domain.decider import Game
from domain.sushigo import SUSHI_GO
from service.sushigo_schemas import SushiGoMove, SushiGoRules, SushiGoScoreSheet, SushiGoView


@dataclass(frozen=True)
class GameAdapter:
    game: Game
    rules: type[Schema]  # the ``rules`` object of POST /games
    move: type[Schema]  # the body of POST /games/{id}/moves; loads {"seat", "move"}
    view: type[Schema]  # GET /games/{id}
    score_sheet: type[Schema]  # GET /games/{id}/scores


ADAPTERS: dict[str, GameAdapter] = {
    SUSHI_GO.name: GameAdapter(SUSHI_GO, SushiGoRules, SushiGoMove, SushiGoView, SushiGoScoreSheet),
}
