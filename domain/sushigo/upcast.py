"""Event schema versions, and upcasters that turn an older event into the current schema.

Events are never rewritten: an old event stays in the log as it was recorded (its hash covers
that form), and is upcast whenever it is read.

History:
- ``round_dealt`` v2 adds ``deck_offset``, the position in the shuffled deck (S18) of the first
  card this deal took, so that a deal can be checked against the shuffle on its own. v1 events
  (before 2026-11-22) lack it; since every deal takes the same number of cards, it is
  ``(round - 1) * cards dealt``.
- ``round_scored`` v2 and ``game_ended`` v2 name each seat instead of relying on its position
  in a list: ``scores: [{seat, <category>…, total}]``; ``puddings: [{seat, count, points}]`` and
  ``totals: [{seat, total}]`` (the rows of ``/scores``). v1 events (before 2026-11-23) list the
  scored seats in seat order, so the seat of a v1 entry is its index.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..decider import Event

CURRENT: dict[str, int] = {
    "round_dealt": 2,
    "round_scored": 2,
    "game_ended": 2,
}  # types not listed are at version 1

Upcaster = Callable[[Mapping[str, Any]], dict[str, Any]]


def _round_dealt_v1_to_v2(data: Mapping[str, Any]) -> dict[str, Any]:
    per_deal = sum(len(hand) for hand in data["hands"]) + len(data.get("dummy_pile", ()))
    return {**data, "deck_offset": (data["round"] - 1) * per_deal}


def _round_scored_v1_to_v2(data: Mapping[str, Any]) -> dict[str, Any]:
    return {**data, "scores": [{"seat": seat, **s} for seat, s in enumerate(data["scores"])]}


def _game_ended_v1_to_v2(data: Mapping[str, Any]) -> dict[str, Any]:
    puddings = [{"seat": seat, **p} for seat, p in enumerate(data["puddings"])]
    totals = [{"seat": seat, "total": t} for seat, t in enumerate(data["totals"])]
    return {**data, "puddings": puddings, "totals": totals}


UPCASTERS: dict[tuple[str, int], Upcaster] = {
    ("round_dealt", 1): _round_dealt_v1_to_v2,
    ("round_scored", 1): _round_scored_v1_to_v2,
    ("game_ended", 1): _game_ended_v1_to_v2,
}


def upcast(event: Event) -> Event:
    """``event`` in the current schema of its type (itself if it already is)."""
    current = CURRENT.get(event.type, 1)
    if event.schema_version > current:
        raise ValueError(f"{event.type} v{event.schema_version} is newer than this server knows")
    while event.schema_version < current:
        step = UPCASTERS[(event.type, event.schema_version)]
        event = Event(event.type, step(event.data), event.schema_version + 1)
    return event
