"""Random legal play, for property tests, benchmarks and the simplest bot. ``random_move`` never
breaks a rule, so driving a game with it ends in a win (Q12) or a draw (Q8)."""

from __future__ import annotations

import random
from typing import Any

from ..decider import CreateGame, Event, MakeMove, TakeSeat, commitment
from .game import execute
from .legal import can_discard, dead_cards, targets
from .state import Discard, Move, Pass, Play, State


def random_move(state: State, seat: int, rng: random.Random) -> Move:
    """A legal move for ``seat`` (whose turn it is): sometimes a dead card's discard (Q7), else a
    random card on a random cell it may go to (Q6), else a pass (Q8)."""
    discardable = can_discard(state, seat)
    if discardable and rng.random() < 0.5:
        return Discard(rng.choice(dead_cards(state, seat)))
    hand = sorted(set(state.hands[seat]))
    rng.shuffle(hand)
    for card in hand:
        cells = list(targets(state, seat, card))
        if cells:
            return Play(card, rng.choice(cells))
    if discardable:
        return Discard(rng.choice(dead_cards(state, seat)))
    return Pass()


def play_random_game(
    options: dict[str, Any], rng: random.Random, max_moves: int = 5000
) -> tuple[list[Event], State]:
    """A complete game of random legal play: its events and final state (seats ``p0``, ``p1``…)."""
    seed = rng.randbytes(32)
    events, state = execute(State(), CreateGame(options, commitment(seed)))
    for seat in range(options["players"]):
        new, state = execute(state, TakeSeat(f"p{seat}", seed))
        events += new
    for _ in range(max_moves):
        if state.over:
            break
        mover = state.current
        assert mover is not None
        new, state = execute(state, MakeMove(mover, random_move(state, mover, rng), seed))
        events += new
    return events, state
