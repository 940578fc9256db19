"""Sequence event schema versions, and upcasters that turn an older event into the current one.

Events are never rewritten: an old event stays in the log as it was recorded (its hash covers
that form), and is upcast whenever it is read.

History:
- ``game_ended`` v2 names each team instead of relying on its position in a list:
  ``totals: [{team, total}]`` (sequences per team, Q12). v1 events (before 2026-11-23) list
  the teams in team order, so the team of a v1 entry is its index.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..decider import Event

CURRENT: dict[str, int] = {"game_ended": 2}  # types not listed are at version 1

Upcaster = Callable[[Mapping[str, Any]], dict[str, Any]]


def _game_ended_v1_to_v2(data: Mapping[str, Any]) -> dict[str, Any]:
    return {**data, "totals": [{"team": t, "total": n} for t, n in enumerate(data["totals"])]}


UPCASTERS: dict[tuple[str, int], Upcaster] = {("game_ended", 1): _game_ended_v1_to_v2}


def upcast(event: Event) -> Event:
    """``event`` in the current schema of its type (itself if it already is)."""
    current = CURRENT.get(event.type, 1)
    if event.schema_version > current:
        raise ValueError(f"{event.type} v{event.schema_version} is not known to this server")
    while event.schema_version < current:
        step = UPCASTERS[(event.type, event.schema_version)]
        event = Event(event.type, step(event.data), event.schema_version + 1)
    return event
