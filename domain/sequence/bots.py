"""Sequence's built-in bots (``domain.bots``): ``random`` (``randomplay.random_move``, its
numbers from the game's seed and version) and ``greedy`` (``greedy_move``: deterministic, the chip
that lines up best, no look-ahead)."""

from __future__ import annotations

from ..bots import GREEDY, RANDOM, bot_random
from ..decider import BY_BOT
from .board import CORNERS, DIRECTIONS, Cell, on_board
from .cards import ONE_EYED_JACKS, TWO_EYED_JACKS
from .legal import can_discard, dead_cards, targets
from .randomplay import random_move
from .state import Discard, Move, Pass, Play, State


def awaiting(state: State) -> list[int]:
    """Q4: the one seat whose turn it is (none before the deal or once over)."""
    return [] if state.current is None else [state.current]


def bot_move(state: State, seat: int, kind: str, seed: bytes, by: str = BY_BOT) -> Move:
    if kind == GREEDY:
        move = greedy_move(state, seat)
    elif kind == RANDOM:
        move = random_move(state, seat, bot_random(seed, state.version, seat))
    else:
        raise ValueError(f"Sequence has no {kind!r} bot")
    return move._replace(by=by)


def line_value(state: State, cell: Cell, team: int) -> int:
    """How many of ``team``'s chips (or corners, Q9) a chip on ``cell`` would line up with."""
    chips = state.chips
    value = 0
    for dr, dc in DIRECTIONS:
        for sign in (1, -1):
            r, c = cell[0] + sign * dr, cell[1] + sign * dc
            while on_board((r, c)) and (chips[r * 10 + c] == team or (r, c) in CORNERS):
                value += 1
                r, c = r + sign * dr, c + sign * dc
    return value


def greedy_move(state: State, seat: int) -> Move:
    """A dead card is always swapped (Q7); then the best-scoring play: a chip is worth the own
    chips it lines up with, twice, plus the opponents' it blocks; a two-eyed jack is kept for a
    better moment (a point less); a one-eyed jack is worth the line it breaks. Ties: the first
    card of the hand, then the first cell in reading order."""
    if can_discard(state, seat):
        return Discard(dead_cards(state, seat)[0])
    assert state.rules is not None
    team = state.rules.team_of(seat)
    others = [t for t in range(state.rules.teams) if t != team]
    best: tuple[float, Play] | None = None
    for card in dict.fromkeys(state.hands[seat]):
        for cell in targets(state, seat, card):
            if card in ONE_EYED_JACKS:
                owner = state.chips[cell[0] * 10 + cell[1]]
                worth = line_value(state, cell, owner) - 2.0
            else:
                blocks = max((line_value(state, cell, t) for t in others), default=0)
                worth = 2.0 * line_value(state, cell, team) + blocks
                worth -= 1.0 if card in TWO_EYED_JACKS else 0.0
            if best is None or worth > best[0]:
                best = (worth, Play(card, cell))
    return Pass() if best is None else best[1]
