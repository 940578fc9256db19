"""Rematches over HTTP (issue 29): the announcement a finished game's view and stream carry, and
``POST /games/{id}/rematch`` (service/rematch.py does the work)."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from flask import current_app

from service.bodies import RematchView
from service.rematch import Rematcher
from service.store.rematches import Rematch

REMATCH_VIEW = RematchView()


def rematches() -> Rematcher:
    return current_app.extensions["cardroom_rematches"]


def rematch_body(rematch: Rematch) -> dict[str, Any]:
    """The announcement: the new game, who proposed it, when."""
    return {
        "game_id": rematch.rematch_id,
        "proposed_by": rematch.proposed_by,
        "proposed_at": rematch.created_at,
    }


def announced(game_id: UUID, over: bool) -> dict[str, Any]:
    """``rematch`` for a finished game's view, once proposed (else nothing)."""
    if not over:
        return {}
    rematch = rematches().of(game_id)
    return {} if rematch is None else {"rematch": rematch_body(rematch)}
