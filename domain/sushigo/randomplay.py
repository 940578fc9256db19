"""Random legal play, for property tests, benchmarks and the simplest bot.

``random_pick`` chooses uniformly among a few legal shapes of pick; it never breaks a rule, so
driving a game with it always reaches the end (S3/S13).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from ..decider import Command, CreateGame, Event, MakeMove, TakeSeat, commitment
from .cards import CHOPSTICKS, NIGIRI_POINTS
from .game import execute
from .rules import Rules
from .state import HANDS as _HANDS
from .state import RULES as _RULES
from .state import TABLEAUX as _TABLEAUX
from .state import Pick, State


def random_pick(state: State, seat: int, rng: random.Random) -> Pick:
    """A legal pick for ``seat``: sometimes with chopsticks (S6), always naming the dummy's card
    when ``seat`` controls it (S17), sometimes declining wasabi in zoch (S9)."""
    hand = state[_HANDS][seat]  # by index: a named field costs several times more (issue 15)
    rules: Rules = state[_RULES]  # type: ignore[assignment]
    controls = rules.dummy and seat == state.controller
    n = 1
    if CHOPSTICKS in state[_TABLEAUX][seat][0] and len(hand) >= 2 + controls and rng.random() < 0.5:
        n = 2
    if n + controls == 1:
        size = len(hand)
        if type(rng) is random.Random:  # rng.randrange(size), the very same number: _below
            getrandbits, bits = rng.getrandbits, size.bit_length()
            r = getrandbits(bits)
            while r >= size:
                r = getrandbits(bits)
        else:
            r = rng.randrange(size)
        cards: tuple[str, ...] = (hand[r],)
        dummy = None
    else:
        chosen = rng.sample(hand, n + controls)
        cards, dummy = tuple(chosen[:n]), (chosen[n] if controls else None)
    wasabi = None
    if rules.edition == "zoch" and any(k in NIGIRI_POINTS for k in cards):
        wasabi = tuple(rng.random() < 0.7 for _ in cards)  # S9: sometimes decline the wasabi
    return _new_pick(Pick, (cards, dummy, wasabi, False, None))  # Pick(…), without keywords


_new_pick = tuple.__new__


def _below(rng: random.Random, n: int) -> int:
    """``rng.randrange(n)`` for ``n`` > 0, the very same number, without its two Python calls
    (argument checks, then ``_randbelow``): CPython's ``_randbelow`` for a ``random.Random``,
    written out (and inline in ``random_pick``: a random game draws ~90). Any other generator
    is asked as usual. The random bot's picks must not change: tests/test_sushigo_fast_path.py
    compares this with ``randrange``, and ``random_pick`` with the plain one."""
    if type(rng) is not random.Random:
        return rng.randrange(n)
    getrandbits, bits = rng.getrandbits, n.bit_length()
    r = getrandbits(bits)
    while r >= n:
        r = getrandbits(bits)
    return r


def random_steps(
    options: dict[str, Any], rng: random.Random
) -> Iterator[tuple[Command, list[Event], State]]:
    """A complete game of random legal play, one command at a time: each command, the events it
    caused and the state they led to. The seed is ``rng``'s first draw; seats are ``p0``, ``p1``…"""
    seed = rng.randbytes(32)
    state = State()

    def run(command: Command) -> tuple[Command, list[Event], State]:
        nonlocal state
        events, state = execute(state, command)
        return command, events, state

    yield run(CreateGame(options, commitment(seed)))
    players = options["players"]
    for seat in range(players):
        yield run(TakeSeat(f"p{seat}", seed))
    while not state.over:
        for seat in range(players):
            if state.picks[seat] is None:
                yield run(MakeMove(seat, random_pick(state, seat, rng), seed))
                if state.over:
                    break


def play_random_game(
    options: dict[str, Any], rng: random.Random
) -> tuple[list[Event], State, list[State]]:
    """A complete game of random legal play: its events, final state and every state on the way
    (one per command)."""
    steps = list(random_steps(options, rng))
    events = [event for _, step_events, _ in steps for event in step_events]
    states = [state for _, _, state in steps]
    return events, states[-1], states
