"""Sequence (2–12 players in 2 or 3 teams, optional advanced jacks).

The rulings implemented are Q1–Q13 of ``shared/rules/sequence.md``.
"""

from __future__ import annotations

from ..decider import GamePackage
from .bots import awaiting, bot_move
from .game import GAME, decide, evolve, execute
from .provenance import provenance
from .replay import commands, upcast
from .rules import Rules, parse_rules
from .state import Discard, Pass, Play, State
from .views import score_sheet, view, visible_event

__all__ = ["SEQUENCE", "Discard", "Pass", "Play", "Rules", "State", "parse_rules"]


SEQUENCE = GamePackage(
    name=GAME,
    initial_state=State,
    decide=decide,
    execute=execute,
    evolve=evolve,
    view=view,
    visible_event=visible_event,
    score_sheet=score_sheet,
    awaiting=awaiting,
    bot_move=bot_move,
    upcast=upcast,
    commands=commands,
    provenance=provenance,
)
