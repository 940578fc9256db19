"""Which appends end a rated game (issue 37): the store rates those in their own transaction
(service/store/ratings.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from domain.decider import GAME_ENDED, Event
from service.games.registry import GameAdapter
from service.store.ratings import RatedFinish


def finish(adapter: GameAdapter, after: Any, events: Sequence[Event]) -> RatedFinish | None:
    """The rated finish of ``events`` (leading to ``after``), if they end a rated game."""
    if getattr(after, "rated", False) and any(event.type == GAME_ENDED for event in events):
        return RatedFinish(adapter.game.name, after)
    return None
