"""Where every sequence comes from: the chips that make it, the cards that placed them and the
versions of those events, under which rulings.

``provenance(events)`` rebuilds the board from the ``card_played`` events alone (independently of
``evolve``), finds the runs on it (Q9/Q10) and returns one ``end`` section for ``game_ended``: per
team, its sequences (``points``) beside what the event records (``recorded``), each run with its
cells, corners and chips ``{"card", "cell", "seat", "played"}``, and the versions of the
``sequence_completed`` events that announced it. A team is listed under its first seat, which is
the team's number (Q4: seat i plays for team i mod teams).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..decider import GAME_CREATED, GAME_ENDED, SEAT_TAKEN, Event
from .board import CORNERS, SIZE, Cell, index
from .game import CARD_PLAYED, SEQUENCE_COMPLETED
from .replay import upcast
from .rules import Rules, parse_rules
from .sequences import EMPTY, Run, all_runs, team_counts


def provenance(events: Sequence[Event]) -> list[dict[str, Any]]:
    walk = _Walk()
    for version, event in enumerate(events, start=1):
        walk.apply(version, upcast(event))
    return walk.sections


class _Walk:
    def __init__(self) -> None:
        self.rules: Rules | None = None
        self.names: list[str] = []
        self.placed: dict[Cell, dict[str, Any]] = {}  # cell -> the chip on it and its card
        self.announced: list[tuple[int, int, list[frozenset[Cell]]]] = []  # version, team, runs
        self.sections: list[dict[str, Any]] = []

    def apply(self, version: int, event: Event) -> None:
        data = event.data
        if event.type == GAME_CREATED:
            self.rules = parse_rules(data["rules"])
        elif event.type == SEAT_TAKEN:
            self.names.append(data["name"])
        elif event.type == CARD_PLAYED:
            assert self.rules is not None
            if data["cell"] is not None:
                cell = (data["cell"][0], data["cell"][1])
                team = self.rules.team_of(data["seat"])
                chip = {"card": data["card"], "cell": list(cell), "seat": data["seat"]}
                self.placed[cell] = {**chip, "team": team, "played": version}
            if data["removed"] is not None:
                self.placed.pop((data["removed"][0], data["removed"][1]), None)
        elif event.type == SEQUENCE_COMPLETED:
            runs = [frozenset((c[0], c[1]) for c in run["cells"]) for run in data["sequences"]]
            self.announced.append((version, data["team"], runs))
        elif event.type == GAME_ENDED:
            self._end(version, data)

    def _end(self, version: int, data: Mapping[str, Any]) -> None:
        rules = self.rules
        assert rules is not None
        chips = [EMPTY] * (SIZE * SIZE)
        for cell, chip in self.placed.items():
            chips[index(cell)] = chip["team"]
        runs = all_runs(tuple(chips))
        counts = team_counts(runs, rules.teams)
        recorded = {t["team"]: t["total"] for t in data.get("totals") or []}
        seats = []
        for team in range(rules.teams):
            members = rules.seats_of(team)
            names = ", ".join(self.names[s] for s in members if s < len(self.names))
            total = recorded.get(team)
            seats.append(
                {
                    "seat": team,
                    "team": team,
                    "seats": members,
                    "name": f"team {team} ({names})",
                    "points": counts[team],
                    "recorded": total,
                    "recorded_total": total,
                    "categories": [self._run(run) for run in runs if run.team == team],
                }
            )
        self.sections.append(
            {
                "kind": "end",
                "version": version,
                "result": data.get("result"),
                "winners": data.get("winners"),
                "winners_rule": "Q12" if data.get("result") == "win" else "Q8",
                "seats": seats,
            }
        )

    def _run(self, run: Run) -> dict[str, Any]:
        rules = ["Q9", "Q10"]
        corners = [list(c) for c in run.cells if c in CORNERS]
        category: dict[str, Any] = {
            "category": "sequence",
            "points": run.count,
            "rules": rules,
            "cells": [list(c) for c in run.cells],
            "corners": corners,
            "cards": [self.placed[c] for c in run.cells if c not in CORNERS],
            "announced": [
                v
                for v, team, announced in self.announced
                if team == run.team and any(a <= set(run.cells) for a in announced)
            ],
        }
        if run.count == 2:
            category["note"] = "a line of 9 or 10 counts as two sequences (Q10)"
        if corners:
            category["note_corners"] = "a corner counts for every team (Q9)"
        return category
