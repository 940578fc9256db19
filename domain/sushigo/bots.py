"""Sushi Go!'s built-in bots (``domain.bots``): ``random`` (``randomplay.random_pick``, its
numbers from the game's seed and version) and ``greedy`` (``greedy.greedy_pick``)."""

from __future__ import annotations

from ..bots import GREEDY, RANDOM, bot_random
from ..decider import BY_BOT
from .greedy import greedy_pick
from .randomplay import random_pick
from .state import Pick, State


def awaiting(state: State) -> list[int]:
    """S4: the seats that have not picked this turn (picks are empty before the start and after
    the end)."""
    return [seat for seat, pick in enumerate(state.picks) if pick is None]


def bot_move(state: State, seat: int, kind: str, seed: bytes, by: str = BY_BOT) -> Pick:
    if kind == GREEDY:
        pick = greedy_pick(state, seat)
    elif kind == RANDOM:
        pick = random_pick(state, seat, bot_random(seed, state.version, seat))
    else:
        raise ValueError(f"Sushi Go! has no {kind!r} bot")
    return pick._replace(by=by)
