"""The 10×10 board (Q1): which card each cell shows, the corners, and the lines sequences lie on.

The layout is ``board.json`` in this package, a copy of ``shared/rules/sequence-board.json``:
row 0 is the top row, a cell is ``(row, column)``, and ``XX`` marks the four corners. Loading
package data once at import is static data, not game I/O: the domain stays pure.
"""

from __future__ import annotations

import json
from importlib import resources

Cell = tuple[int, int]

SIZE = 10
CORNER = "XX"

BOARD: tuple[tuple[str, ...], ...] = tuple(
    tuple(row)
    for row in json.loads(resources.files(__package__).joinpath("board.json").read_text())
)
CELLS: tuple[Cell, ...] = tuple((r, c) for r in range(SIZE) for c in range(SIZE))
CORNERS: frozenset[Cell] = frozenset(cell for cell in CELLS if BOARD[cell[0]][cell[1]] == CORNER)

# Q1: every non-jack card shows on exactly two cells.
_cells_of: dict[str, list[Cell]] = {}
for _cell in CELLS:
    _code = BOARD[_cell[0]][_cell[1]]
    if _code != CORNER:
        _cells_of.setdefault(_code, []).append(_cell)
CELLS_OF: dict[str, tuple[Cell, ...]] = {code: tuple(cells) for code, cells in _cells_of.items()}

# Q9: the straight lines (rows, columns, both diagonals) long enough to hold five cells.
DIRECTIONS: tuple[Cell, ...] = ((0, 1), (1, 0), (1, 1), (1, -1))


def _lines() -> tuple[tuple[Cell, ...], ...]:
    lines = []
    for dr, dc in DIRECTIONS:
        for start in CELLS:
            before = (start[0] - dr, start[1] - dc)
            if 0 <= before[0] < SIZE and 0 <= before[1] < SIZE:
                continue  # not where a line in this direction starts
            line = []
            r, c = start
            while 0 <= r < SIZE and 0 <= c < SIZE:
                line.append((r, c))
                r, c = r + dr, c + dc
            if len(line) >= 5:
                lines.append(tuple(line))
    return tuple(lines)


LINES: tuple[tuple[Cell, ...], ...] = _lines()
LINES_THROUGH: dict[Cell, tuple[int, ...]] = {
    cell: tuple(i for i, line in enumerate(LINES) if cell in line) for cell in CELLS
}


def on_board(cell: Cell) -> bool:
    return 0 <= cell[0] < SIZE and 0 <= cell[1] < SIZE


def index(cell: Cell) -> int:
    """The cell's position in the state's flat tuple of chips."""
    return cell[0] * SIZE + cell[1]


def code(cell: Cell) -> str:
    return BOARD[cell[0]][cell[1]]
