"""Exports for audit and replay tests: a game's events as the JSON Lines records the service
exports (versions, hashes per domain/chain.py, a fixed ``recorded_at``), and the tampering an
attacker could do to them."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

from domain.chain import GENESIS, event_hash
from domain.decider import Event
from domain.sushigo.randomplay import play_random_game

GAME_ID = "6f1c2a7e-0d4b-4c55-9a3e-2b8f1e0c9d71"
RECORDED_AT = "2026-03-01T12:00:00+00:00"

Record = dict[str, Any]

# One honest game per edition and variant (name: rules).
VARIANTS: dict[str, dict[str, Any]] = {
    "gamewright-2": {"players": 2},
    "gamewright-3": {"players": 3},
    "gamewright-4": {"players": 4},
    "gamewright-5": {"players": 5},
    "gamewright-dummy": {"players": 2, "dummy": True},
    "gamewright-alternate": {"players": 4, "pass_direction": "alternate"},
    "zoch-3": {"players": 3, "edition": "zoch"},
    "zoch-5-alternate": {"players": 5, "edition": "zoch", "pass_direction": "alternate"},
}


def export_records(events: Sequence[Event], game_id: str = GAME_ID) -> list[Record]:
    """``events`` as an export: one record per event, versions from 1, hashes chained."""
    records = [
        {
            "game_id": game_id,
            "version": version,
            "type": event.type,
            "schema_version": event.schema_version,
            "data": json.loads(json.dumps(event.data)),
            "recorded_at": RECORDED_AT,
            "hash": "",
        }
        for version, event in enumerate(events, start=1)
    ]
    return rechain(records, renumber=False)


def rechain(records: Sequence[Record], renumber: bool = True) -> list[Record]:
    """What an attacker who rewrites the log does: renumber the records (if asked) and
    recompute every hash, so that the chain holds again."""
    previous, chained = GENESIS, []
    for position, record in enumerate(records, start=1):
        record = {**record, "version": position if renumber else record["version"]}
        record["hash"] = previous = event_hash(
            previous,
            record["game_id"],
            record["version"],
            record["type"],
            record["schema_version"],
            record["data"],
        )
        chained.append(record)
    return chained


def to_jsonl(records: Sequence[Record]) -> str:
    return "".join(json.dumps(record) + "\n" for record in records)


@cache
def _game(variant: str, seed: int) -> tuple[Event, ...]:
    events, _, _ = play_random_game(dict(VARIANTS[variant]), random.Random(seed))
    return tuple(events)


def finished_game(variant: str = "gamewright-3", seed: int = 1) -> list[Event]:
    """The events of a complete game of random legal play (cached: treat as read-only)."""
    return list(_game(variant, seed))


def finished_export(variant: str = "gamewright-3", seed: int = 1) -> list[Record]:
    return export_records(finished_game(variant, seed))


def edited(
    records: Sequence[Record], version: int, change: Callable[[Record], None]
) -> list[Record]:
    """A deep copy of ``records`` with ``change`` applied to the record of ``version``."""
    copy: list[Record] = json.loads(json.dumps(list(records)))
    change(copy[version - 1])
    return copy


def versions_of(records: Sequence[Record], type: str, **data: Any) -> list[int]:
    """The versions of the records of ``type`` whose data has the given values."""
    return [
        r["version"]
        for r in records
        if r["type"] == type and all(r["data"].get(k) == v for k, v in data.items())
    ]
