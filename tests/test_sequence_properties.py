"""Property tests of the Sequence decider (rulings Q1–Q13 of ``shared/rules/sequence.md``).

Hypothesis draws the seed of a ``random.Random`` that drives ``randomplay.random_move`` (or, for
the sequence counting, the chips on the board and two orders to place them in). Invariants are
checked after every event. ``CARDROOM_PROPERTY_SCALE`` (default 1) multiplies the examples.
"""

from __future__ import annotations

import os
import random
from collections import Counter
from typing import Any

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from sequence_support import lifecycle, placed

from domain.decider import (
    SPECTATOR,
    CreateGame,
    Event,
    MakeMove,
    TakeSeat,
    Viewer,
    commitment,
    fold,
)
from domain.sequence import SEQUENCE, State
from domain.sequence.board import CELLS, CORNERS, LINES, Cell
from domain.sequence.cards import DECK_COUNTS
from domain.sequence.game import CARDS_DEALT, execute, pile_order
from domain.sequence.randomplay import random_move

CONFIGS: list[dict[str, Any]] = [
    {"players": p, "teams": t, "advanced_jacks": a}
    for p, t in [(2, 2), (3, 3), (4, 2), (6, 3), (8, 2), (12, 3)]
    for a in (False, True)
]
each_rule_set = pytest.mark.parametrize(
    "options",
    CONFIGS,
    ids=[f"{c['players']}p-{c['teams']}t-adv{int(c['advanced_jacks'])}" for c in CONFIGS],
)
_SCALE = max(1, int(os.environ.get("CARDROOM_PROPERTY_SCALE", "1")))
rng_seeds = st.integers(min_value=0, max_value=2**64 - 1)

# Q8/Q12: a bound on the moves of a game of random play. Each play fills or empties a cell; a game
# far past every cell filled several times over is stuck.
MAX_MOVES = 1500


def examples(n: int) -> settings:
    """No deadline, no shrinking: a smaller rng seed is another game, not a simpler one."""
    return settings(
        max_examples=n * _SCALE, deadline=None, phases=(Phase.explicit, Phase.reuse, Phase.generate)
    )


def play(options: dict[str, Any], rng_seed: int) -> tuple[bytes, list[Event], State]:
    """A game of random legal play: its seed, events and final state; fails if it does not end."""
    rng = random.Random(rng_seed)
    seed = rng.randbytes(32)
    events, state = execute(State(), CreateGame(options, commitment(seed)))
    for seat in range(options["players"]):
        new, state = execute(state, TakeSeat(f"p{seat}", seed))
        events += new
    for _ in range(MAX_MOVES):
        if state.over:
            return seed, events, state
        seat = state.current
        assert seat is not None
        new, state = execute(state, MakeMove(seat, random_move(state, seat, rng), seed))
        events += new
    raise AssertionError(f"no win (Q12) and no draw (Q8) after {MAX_MOVES} moves")


# --- Q10: counting does not depend on the order of placement ----------------------------------


def oracle(chips: dict[Cell, int], team: int) -> int:
    """Q9/Q10 counted another way: on every line, the windows of five cells all the team's (or
    corners), taken greedily from one end, each starting at least four cells after the last
    (so two share at most one cell); lines meet in at most one cell, so lines add up."""
    total = 0
    for line in LINES:
        owned = [chips.get(cell) == team or cell in CORNERS for cell in line]
        last = -10
        for start in range(len(line) - 4):
            if all(owned[start : start + 5]) and start - last >= 4:
                total += 1
                last = start
    return total


def build(chips: list[tuple[Cell, int]], teams: int) -> State:
    """The state after placing ``chips`` in this order (two-eyed jacks from a dealt hand)."""
    players = teams
    events = lifecycle(players, teams=teams)
    hands = [["JD"] * sum(1 for _, t in chips if t == seat) for seat in range(players)]
    events.append(Event(CARDS_DEALT, {"hands": hands}))
    events += [placed(team, cell, turn) for turn, (cell, team) in enumerate(chips, start=1)]
    return fold(SEQUENCE, events)


boards = st.integers(2, 3).flatmap(
    lambda teams: st.tuples(
        st.just(teams),
        st.dictionaries(
            st.sampled_from([c for c in CELLS if c not in CORNERS]),
            st.integers(0, teams - 1),
            min_size=5,
            max_size=70,
        ),
        st.randoms(use_true_random=False),
    )
)


@examples(150)
@given(board=boards)
def test_q9_q10_sequences_do_not_depend_on_the_order_of_placement(board: Any) -> None:
    teams, chips, rng = board
    order = list(chips.items())
    first = build(order, teams)
    rng.shuffle(order)
    second = build(order, teams)
    assert first.runs == second.runs
    assert first.sequences() == second.sequences() == tuple(oracle(chips, t) for t in range(teams))
    for run in first.runs:  # Q10: two sequences of a team share at most one cell
        assert len(run.cells) >= 5 and run.count == (len(run.cells) - 1) // 4


# --- random legal play --------------------------------------------------------------------------


@each_rule_set
@examples(4)
@given(rng_seed=rng_seeds)
def test_q8_q12_random_play_ends_in_a_win_or_a_draw(options: dict[str, Any], rng_seed: int) -> None:
    seed, events, state = play(options, rng_seed)
    end = events[-1]
    assert end.type == "game_ended" and [e.type for e in events].count("game_ended") == 1
    rules = state.rules
    assert rules is not None
    if end.data["result"] == "win":
        team = end.data["team"]
        assert state.sequences()[team] >= rules.to_win  # Q12
        assert end.data["winners"] == rules.seats_of(team)
        assert all(count < rules.to_win for t, count in enumerate(state.totals) if t != team)
    else:  # Q8: every seat passed in a row
        assert end.data["winners"] == [] and state.passes == rules.players
    assert commitment(bytes.fromhex(end.data["seed"])) == events[0].data["seed_commitment"]


@each_rule_set
@examples(3)
@given(rng_seed=rng_seeds)
def test_q2_q8_every_card_is_always_in_exactly_one_place(
    options: dict[str, Any], rng_seed: int
) -> None:
    """Hands, the draw pile (what is left of the seed's shuffle), the discard pile: the 104."""
    seed, events, _ = play(options, rng_seed)
    state = SEQUENCE.initial_state()
    for event in events:
        state = SEQUENCE.evolve(state, event)
        if not state.hands:
            continue
        pile = pile_order(seed, state.pile_base, state.pile_offset)[0][state.pile_taken :]
        assert len(pile) == state.pile_size
        places = [c for hand in state.hands for c in hand] + list(pile) + list(state.discard)
        assert Counter(places) == DECK_COUNTS, event


@each_rule_set
@examples(3)
@given(rng_seed=rng_seeds)
def test_folding_the_events_again_gives_the_same_state(
    options: dict[str, Any], rng_seed: int
) -> None:
    seed, events, final = play(options, rng_seed)
    assert fold(SEQUENCE, events) == final
    replayed, state = [], SEQUENCE.initial_state()
    for position, command in SEQUENCE.commands(events, seed):
        assert position == len(replayed)
        produced, state = SEQUENCE.execute(state, command)
        replayed += produced
    assert replayed == events and state == final


@each_rule_set
@examples(2)
@given(rng_seed=rng_seeds)
def test_views_and_events_hide_hands_and_draws(options: dict[str, Any], rng_seed: int) -> None:
    """Before the end a seat sees its own hand only and only its own draws; spectators none."""
    _, events, final = play(options, rng_seed)
    state = SEQUENCE.initial_state()
    for event in events[:-1]:
        state = SEQUENCE.evolve(state, event)
        if not state.hands:
            continue
        for viewer in [Viewer(s) for s in range(len(state.hands))] + [SPECTATOR]:
            view = SEQUENCE.view(state, viewer)
            assert all("hand" not in seat for seat in view["seats"]) and "draw_pile" not in view
            if viewer.seat is not None:
                assert view["you"]["hand"] == list(state.hands[viewer.seat])
            seen = SEQUENCE.visible_event(state, event, viewer).data
            if "drawn" in seen and event.data["seat"] != viewer.seat:
                assert seen["drawn"] is None
            if "hands" in seen:
                assert [h is not None for h in seen["hands"]] == [
                    s == viewer.seat for s in range(len(seen["hands"]))
                ]
    assert all(SEQUENCE.visible_event(final, e, SPECTATOR) == e for e in events)
