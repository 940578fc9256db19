"""The events a round's start and end make (S2, S3, S10–S16, S18): the deal, the round's scores,
and the game's end with its pudding scores, totals and winners (and the seed, checked against its
commitment)."""

from __future__ import annotations

from typing import Any

from ..decider import GAME_ENDED, Event, commitment
from ..lifecycle import Log
from .evolution import ROUND_DEALT, ROUND_SCORED
from .rules import ROUNDS, Rules
from .scoring import pudding_points, round_breakdowns, winners
from .shuffle import shuffled
from .state import State
from .upcast import CURRENT


def _end_round(log: Log[State], seed: bytes) -> None:
    """S3/S13: score the round, then deal the next one or end the game."""
    log.record(_score_round(log.state))
    if log.state.round < ROUNDS:
        log.record(_deal(log.state, seed))
    else:
        log.record(_end(log.state, seed))


def _deal(state: State, seed: bytes) -> Event:
    """S2/S3: deal each seat a hand from the top of the remaining draw pile (then the dummy)."""
    _check_seed(state, seed)
    rules: Rules = state.rules  # type: ignore[assignment]
    deck = shuffled(seed)
    size = rules.hand_size
    start = state.dealt
    hands = [list(deck[start + i * size : start + (i + 1) * size]) for i in range(rules.players)]
    data: dict[str, Any] = {"round": state.round + 1, "deck_offset": start, "hands": hands}
    if rules.dummy:
        at = start + rules.players * size
        data["dummy_pile"] = list(deck[at : at + size])
    return Event(ROUND_DEALT, data, CURRENT[ROUND_DEALT])


def _score_round(state: State) -> Event:
    rules: Rules = state.rules  # type: ignore[assignment]
    scores = round_breakdowns(state.tableaux, rules.split_ties)
    named = [{"seat": seat, **score} for seat, score in enumerate(scores)]
    return Event(ROUND_SCORED, {"round": state.round, "scores": named}, CURRENT[ROUND_SCORED])


def _end(state: State, seed: bytes) -> Event:
    _check_seed(state, seed)
    rules: Rules = state.rules  # type: ignore[assignment]
    penalty = rules.scored_seats > 2  # S14: no pudding penalty in a 2-player game without dummy
    points = pudding_points(state.puddings, rules.split_ties, penalty)
    totals = [t + p for t, p in zip(state.totals, points, strict=True)]
    return Event(
        GAME_ENDED,
        {
            "puddings": [
                {"seat": seat, "count": c, "points": p}
                for seat, (c, p) in enumerate(zip(state.puddings, points, strict=True))
            ],
            "totals": [{"seat": seat, "total": t} for seat, t in enumerate(totals)],
            "winners": winners(totals, state.puddings, rules.players),
            "seed": seed.hex(),
        },
        CURRENT[GAME_ENDED],
    )


def _check_seed(state: State, seed: bytes) -> None:
    if commitment(seed) != state.seed_commitment:
        raise ValueError("the seed given does not match the game's commitment (S18)")
