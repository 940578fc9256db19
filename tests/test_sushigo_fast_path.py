"""The fast paths of the Sushi Go! decider (issue 15: instructions per game) decide exactly what
the plain decider does.

``execute`` decides a common pick inline and a completed turn on one working copy of the state
(``picks._complete_turn``); ``game.execute_by_evolve`` decides the same commands the plain way,
every event applied by ``evolve`` as it is decided. For random games of every rule set
(hypothesis draws the seed of the ``random.Random`` that drives ``randomplay.random_pick``,
with people's, bots' and clock picks, and moves that break a rule now and then), both must give
identical events (the hash chain and receipts depend on them, so compared as canonical JSON),
equal states, the same refusals, and a state equal to the fold of the events.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.decider import (
    BY_BOT,
    BY_CLOCK,
    BY_RESIGNED,
    BotSeat,
    Command,
    CreateGame,
    DomainError,
    Event,
    MakeMove,
    TakeOver,
    TakeSeat,
    commitment,
    fold,
)
from domain.sushigo import SUSHI_GO, Pick, State
from domain.sushigo.cards import CHOPSTICKS, NIGIRI_POINTS
from domain.sushigo.game import execute, execute_by_evolve, fold_events
from domain.sushigo.randomplay import _below, play_random_game, random_pick, random_steps

CONFIGS: list[dict[str, Any]] = [
    *(
        {"players": n, "edition": e, "pass_direction": d}
        for n in (2, 3, 4, 5)
        for e in ("gamewright", "zoch")
        for d in ("left", "alternate")
        if not (e == "zoch" and n == 2)
    ),
    *({"players": 2, "dummy": True, "pass_direction": d} for d in ("left", "alternate")),
]


def _same(command: Command, state: State) -> State:
    """Execute ``command`` both ways; they must agree on everything. Returns the state after."""
    outcomes = []
    for decide in (execute, execute_by_evolve):
        try:
            events, after = decide(state, command)
        except (DomainError, ValueError, TypeError) as refused:
            outcomes.append(("refused", type(refused).__name__, str(refused)))
            continue
        as_json = json.dumps([e.to_json() for e in events], sort_keys=False)
        outcomes.append(("decided", as_json, after))
        assert after == fold(SUSHI_GO, events, state)
    assert outcomes[0] == outcomes[1], command
    return outcomes[0][2] if outcomes[0][0] == "decided" else state


def _mischief(state: State, seat: int, pick: Pick, rng: random.Random) -> Pick:
    """Now and then a pick that breaks a rule or is marked as made by someone else."""
    roll = rng.random()
    if roll < 0.03:
        return pick._replace(cards=("pudding", "pudding", "pudding"))
    if roll < 0.06:
        return pick._replace(cards=("no_such_card",))
    if roll < 0.09:
        return pick._replace(by=BY_CLOCK)
    if roll < 0.1:
        return pick._replace(auto=True)
    return pick


def _play(options: dict[str, Any], rng: random.Random, bots: bool) -> None:
    seed = rng.randbytes(32)
    players = options["players"]
    reserved = (BotSeat(players - 1, "random", "bot"),) if bots else ()
    state = _same(CreateGame(options, commitment(seed), seed, reserved, None, 1), State())
    for seat in range(players - len(reserved)):
        state = _same(TakeSeat(f"p{seat}", seed), state)
    if bots and players > 2:
        state = _same(TakeOver(0, BY_RESIGNED), state)
    while not state.over:
        seat = rng.choice([s for s, pick in enumerate(state.picks) if pick is None])
        pick = random_pick(state, seat, rng)
        if seat in state.bots:
            pick = pick._replace(by=BY_BOT)
        elif seat in dict(state.taken_over):
            pick = pick._replace(by=BY_RESIGNED)
        if rng.random() < 0.05:  # a seat that has picked already, or no seat at all
            _same(MakeMove(rng.choice([-1, players, *range(players)]), pick, seed), state)
        state = _same(MakeMove(seat, _mischief(state, seat, pick, rng), seed), state)
    _same(MakeMove(0, Pick(("tempura",)), seed), state)  # game_over


@pytest.mark.parametrize("options", CONFIGS, ids=lambda o: "-".join(map(str, o.values())))
@settings(max_examples=15, deadline=None)
@given(rng_seed=st.integers(0, 2**32 - 1), bots=st.booleans())
def test_fast_paths_decide_what_evolving_event_by_event_decides(
    options: dict[str, Any], rng_seed: int, bots: bool
) -> None:
    _play(options, random.Random(rng_seed), bots)


def test_a_wrong_seed_is_refused_alike_when_a_turn_completes() -> None:
    """The seed is checked when the round's last reveal deals or ends (S18), on both paths."""
    rng = random.Random(7)
    seed = rng.randbytes(32)
    state = execute(State(), CreateGame({"players": 2}, commitment(seed)))[1]
    for seat in range(2):
        state = execute(state, TakeSeat(f"p{seat}", seed))[1]
    refused = 0
    while not state.over:
        for seat in (0, 1):
            move = random_pick(state, seat, rng)
            if state.picks[seat] is None:
                refused += _same(MakeMove(seat, move, b"\0" * 32), state) is state
                state = execute(state, MakeMove(seat, move, seed))[1]
    assert refused == 3  # the last pick of each round: its deal (or end) needs the seed


@given(st.integers(0, 2**64), st.integers(1, 300))
def test_below_draws_what_randrange_draws(rng_seed: int, n: int) -> None:
    """The random bot's picks depend on it: ``_below`` is ``randrange``, number for number."""
    mine, theirs = random.Random(rng_seed), random.Random(rng_seed)
    assert [_below(mine, n) for _ in range(5)] == [theirs.randrange(n) for _ in range(5)]
    assert mine.random() == theirs.random()  # and leaves the generator in the same state


def _plain_random_pick(state: State, seat: int, rng: random.Random) -> Pick:
    """``random_pick`` as it was written before issue 15 trimmed it (randrange, named fields)."""
    hand = state.hands[seat]
    controls = seat == state.controller
    n = 1
    if (
        CHOPSTICKS in state.tableaux[seat].cards
        and len(hand) >= 2 + controls
        and rng.random() < 0.5
    ):
        n = 2
    if n + controls == 1:
        cards: tuple[str, ...] = (hand[rng.randrange(len(hand))],)
        dummy = None
    else:
        chosen = rng.sample(hand, n + controls)
        cards, dummy = tuple(chosen[:n]), (chosen[n] if controls else None)
    wasabi = None
    if state.rules.edition == "zoch" and any(k in NIGIRI_POINTS for k in cards):  # type: ignore[union-attr]
        wasabi = tuple(rng.random() < 0.7 for _ in cards)
    return Pick(cards, dummy, wasabi, False, None)


@pytest.mark.parametrize("options", CONFIGS, ids=lambda o: "-".join(map(str, o.values())))
@settings(max_examples=10, deadline=None)
@given(rng_seed=st.integers(0, 2**32 - 1))
def test_random_pick_picks_what_it_always_picked(options: dict[str, Any], rng_seed: int) -> None:
    """The random bot's moves come from ``random_pick`` with numbers from the game's seed: for
    the same state and numbers it must pick what it always did (a retried append, a replay)."""
    for _, _, state in random_steps(options, random.Random(rng_seed)):
        for seat, pick in enumerate(state.picks):
            if pick is None:
                mine = random_pick(state, seat, random.Random(rng_seed + seat))
                assert mine == _plain_random_pick(state, seat, random.Random(rng_seed + seat))


def _evolved(events: list[Event], state: State | None = None) -> State:
    current = State() if state is None else state
    for event in events:
        current = SUSHI_GO.evolve(current, event)
    return current


def _fold_outcome(fold_with: Any, events: list[Event], state: State | None) -> tuple[str, Any]:
    try:
        return "state", fold_with(events, state)
    except Exception as refused:  # noqa: BLE001 - what evolve raises, the fast fold must raise
        return "raised", type(refused).__name__


@pytest.mark.parametrize("options", CONFIGS, ids=lambda o: "-".join(map(str, o.values())))
@settings(max_examples=10, deadline=None)
@given(rng_seed=st.integers(0, 2**32 - 1), cut=st.integers(0, 200), tamper=st.integers(0, 400))
def test_the_fast_fold_gives_what_evolving_event_by_event_gives(
    options: dict[str, Any], rng_seed: int, cut: int, tamper: int
) -> None:
    """``decider.fold`` folds runs of picks and reveals on one working copy (``fold_events``):
    from the start or from any state on the way, and on a log with one event dropped,
    repeated or edited, it must give the same state, or raise what ``evolve`` raises."""
    events, _, _ = play_random_game(options, random.Random(rng_seed))
    assert fold(SUSHI_GO, events) == _evolved(events)
    cut %= len(events)
    middle = _evolved(events[:cut])
    assert fold(SUSHI_GO, events[cut:], middle) == _evolved(events[cut:], middle)
    at = tamper % len(events)
    edited = dict(events[at].data, seat=(events[at].data.get("seat", 0) or 0) + 1)
    for broken in (
        events[:at] + events[at + 1 :],
        events[: at + 1] + events[at:],
        [
            *events[:at],
            Event(events[at].type, edited, events[at].schema_version),
            *events[at + 1 :],
        ],
    ):
        assert _fold_outcome(fold_events, broken, None) == _fold_outcome(_evolved, broken, None)
