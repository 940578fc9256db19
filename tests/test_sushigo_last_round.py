"""The view's ``last_round`` (issue 17): after a round's end the table shows the next round's
empty tableaux, so the view also carries the round scored last as its last reveal left it, for
every client (the web page, bots, chat integrations) to show the outcome beside its cards."""

from __future__ import annotations

import random
from typing import Any

import pytest

from domain.decider import Viewer
from domain.sushigo import evolve, view
from domain.sushigo.game import ROUND_SCORED, TURN_REVEALED
from domain.sushigo.randomplay import play_random_game
from domain.sushigo.state import State

OPTIONS = [
    {"players": 3},
    {"players": 4, "edition": "zoch"},
    {"players": 2, "dummy": True},
]


@pytest.mark.parametrize("options", OPTIONS)
def test_last_round_is_the_table_its_last_reveal_left_and_its_points(
    options: dict[str, Any],
) -> None:
    events, _, _ = play_random_game(options, random.Random(17))
    state = State()
    before_scoring = None  # the view just before each round_scored: its last reveal's table
    rounds_seen = []
    for event in events:
        if event.type == ROUND_SCORED:
            before_scoring = view(state, Viewer())
            assert before_scoring["last_round"] is None or (
                before_scoring["last_round"]["round"] == event.data["round"] - 1
            )
        state = evolve(state, event)
        shown = view(state, Viewer(seat=0))["last_round"]
        if before_scoring is None:
            assert shown is None, "no round scored yet"
            continue
        if event.type == ROUND_SCORED:
            rounds_seen.append(shown["round"])
        tables = [s["tableau"] for s in before_scoring["seats"]]
        if "dummy" in before_scoring:
            tables.append(before_scoring["dummy"]["tableau"])  # the dummy last (S17)
        assert [s["tableau"] for s in shown["seats"]] == tables
        assert [s["seat"] for s in shown["seats"]] == list(range(len(tables)))
        points = [s["total"] for s in state.round_scores[shown["round"] - 1]]
        assert [s["points"] for s in shown["seats"]] == points
        if event.type == TURN_REVEALED:
            # the next round's table fills up; last_round stays the round scored last
            assert shown["round"] == len(state.round_scores)
    assert rounds_seen == [1, 2, 3]
