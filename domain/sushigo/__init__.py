"""Sushi Go! (Gamewright and Zoch editions, with the pass-direction and 2-player dummy variants).

The rulings implemented are S1–S18 of ``shared/rules/sushi-go.md``.
"""

from __future__ import annotations

from ..decider import GamePackage
from .bots import awaiting, bot_move
from .game import GAME, decide, evolve, execute, fold_events
from .provenance import provenance
from .replay import commands, upcast
from .rules import Rules, parse_rules
from .state import Pick, State
from .views import score_sheet, view, visible_event

__all__ = ["SUSHI_GO", "Pick", "Rules", "State", "parse_rules"]


SUSHI_GO = GamePackage(
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
    fold=fold_events,
)
