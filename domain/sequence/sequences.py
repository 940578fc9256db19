"""Finding sequences (Q9, Q10) as a function of the board alone, so that the count never depends
on the order in which the chips were placed.

A *run* is a maximal stretch of a line (row, column or diagonal) whose every cell holds a chip of
one team or is a corner (corners count for every team, Q9). A run of length ``L >= 5`` holds
``(L - 1) // 4`` sequences: two sequences of a team may share at most one cell (Q10), and two
different lines share at most one cell anyway, so only sequences on the same line can clash; on a
line, windows of five sharing at most one cell start at least four cells apart. That gives one
sequence for a line of 5–8 and two for 9 or 10, as Q10 says.

Every chip of a run that holds a sequence is locked (Q10): the service cannot know which five of
six chips "came first", and each of them does lie in five cells forming a sequence (Q9).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from .board import CORNERS, LINES, LINES_THROUGH, Cell, index

EMPTY = -1  # no chip on a cell


class Run(NamedTuple):
    """A team's run on one line (an index into ``board.LINES``) that holds ``count`` sequences."""

    team: int
    line: int
    cells: tuple[Cell, ...]
    count: int  # type: ignore[assignment]  # shadows tuple.count, which nothing here calls

    def to_json(self) -> dict[str, object]:
        return {"team": self.team, "cells": [list(c) for c in self.cells], "count": self.count}


def sequences_in(length: int) -> int:
    """Q10: how many sequences a run of ``length`` cells holds."""
    return (length - 1) // 4 if length >= 5 else 0


def line_runs(line: int, chips: tuple[int, ...]) -> list[Run]:
    """The runs holding at least one sequence on ``line``, for every team with a chip on it."""
    cells = LINES[line]
    owners = [chips[index(cell)] for cell in cells]
    runs = []
    for team in sorted({o for o in owners if o != EMPTY}):
        stretch: list[Cell] = []
        for cell, owner in zip((*cells, None), (*owners, None), strict=True):
            if cell is not None and (owner == team or cell in CORNERS):
                stretch.append(cell)
                continue
            count = sequences_in(len(stretch))
            if count:
                runs.append(Run(team, line, tuple(stretch), count))
            stretch = []
    return runs


def all_runs(chips: tuple[int, ...]) -> tuple[Run, ...]:
    """Every run holding a sequence, from scratch."""
    return tuple(run for line in range(len(LINES)) for run in line_runs(line, chips))


def update_runs(runs: tuple[Run, ...], chips: tuple[int, ...], cell: Cell) -> tuple[Run, ...]:
    """``runs`` after the chip on ``cell`` changed (placed or removed): only the lines through
    ``cell`` can change. Kept in line order, so that the result equals ``all_runs(chips)``."""
    through = LINES_THROUGH[cell]
    if not through:
        return runs
    kept = [run for run in runs if run.line not in through]
    kept.extend(run for line in through for run in line_runs(line, chips))
    kept.sort(key=lambda run: (run.line, run.team, run.cells[0]))
    return tuple(kept)


def team_counts(runs: Iterable[Run], teams: int) -> tuple[int, ...]:
    """Sequences per team."""
    counts = [0] * teams
    for run in runs:
        counts[run.team] += run.count
    return tuple(counts)


def locked_cells(runs: Iterable[Run]) -> frozenset[Cell]:
    """Q10: cells whose chips a one-eyed jack cannot remove (without ``advanced_jacks``, Q11)."""
    return frozenset(cell for run in runs for cell in run.cells)
