"""The games this service hosts, by the name clients use. Adding a game = one package + one line."""

from __future__ import annotations

from typing import Any

from .decider import Game
from .sequence import SEQUENCE
from .sushigo import SUSHI_GO

GAMES: dict[str, Game[Any]] = {SUSHI_GO.name: SUSHI_GO, SEQUENCE.name: SEQUENCE}
