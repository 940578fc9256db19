"""What a seat may do with its cards (Q6, Q7, Q11): legal cells, dead cards, whether it can play."""

from __future__ import annotations

from collections.abc import Iterator

from .board import CELLS, CELLS_OF, CORNERS, Cell, index
from .cards import ONE_EYED_JACKS, TWO_EYED_JACKS
from .sequences import EMPTY, locked_cells
from .state import State

_PLAYABLE = tuple(cell for cell in CELLS if cell not in CORNERS)  # a chip never goes on a corner


def is_dead(state: State, card: str) -> bool:
    """Q7: a non-jack card whose two cells both hold a chip."""
    cells = CELLS_OF.get(card)
    return cells is not None and all(state.chips[index(c)] != EMPTY for c in cells)


def targets(state: State, seat: int, card: str) -> Iterator[Cell]:
    """The cells ``card`` can be played on by ``seat`` now (Q6; Q10/Q11 for one-eyed jacks)."""
    chips = state.chips
    if card in TWO_EYED_JACKS:
        yield from (c for c in _PLAYABLE if chips[index(c)] == EMPTY)
    elif card in ONE_EYED_JACKS:
        assert state.rules is not None
        team = state.rules.team_of(seat)
        locked = frozenset() if state.rules.advanced_jacks else locked_cells(state.runs)
        for cell in _PLAYABLE:
            owner = chips[index(cell)]
            if owner != EMPTY and owner != team and cell not in locked:
                yield cell
    else:
        yield from (c for c in CELLS_OF.get(card, ()) if chips[index(c)] == EMPTY)


def has_legal_play(state: State, seat: int) -> bool:
    return any(next(targets(state, seat, card), None) is not None for card in state.hands[seat])


def dead_cards(state: State, seat: int) -> list[str]:
    return [card for card in state.hands[seat] if is_dead(state, card)]


def can_discard(state: State, seat: int) -> bool:
    """Q7: once per turn, before playing, if the hand holds a dead card."""
    return not state.discarded and any(is_dead(state, card) for card in state.hands[seat])
