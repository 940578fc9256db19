"""``evolve`` for Sequence: the state after one event (the event types are listed in game.py).

Evolve trusts the events (``decide`` checked them); it never needs the seed: the draw pile is kept
as where it comes from (``State.pile_base``/``pile_offset``) and how much of it was drawn."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from ..decider import (
    GAME_CANCELLED,
    GAME_CREATED,
    GAME_ENDED,
    GAME_STARTED,
    SEAT_LEFT,
    SEAT_TAKEN,
    SEAT_TAKEN_OVER,
    Event,
)
from ..lifecycle import on_cancelled, on_created, on_seat_left, on_seat_taken, on_taken_over
from .board import Cell, index
from .rules import parse_rules
from .sequences import EMPTY, update_runs
from .state import EMPTY_BOARD, State, replace
from .upcast import CURRENT, upcast

GAME = "sequence"
CARDS_DEALT = "cards_dealt"
CARD_PLAYED = "card_played"
DEAD_CARD_DISCARDED = "dead_card_discarded"
TURN_PASSED = "turn_passed"
SEQUENCE_COMPLETED = "sequence_completed"
DECK_RESHUFFLED = "deck_reshuffled"


def evolve(state: State, event: Event) -> State:
    apply = _APPLY.get(event.type)
    if apply is None:
        raise ValueError(f"unknown Sequence event type {event.type!r}")
    if event.schema_version != CURRENT.get(event.type, 1):
        event = upcast(event)  # an event recorded in an older schema
    return apply(state, event.data, state.version + 1)


def _on_started(state: State, data: Any, version: int) -> State:
    return replace(state, version=version, started=True)


def _on_dealt(state: State, data: Any, version: int) -> State:
    hands = tuple(tuple(hand) for hand in data["hands"])
    return replace(
        state,
        version=version,
        turn=1,
        hands=hands,
        chips=EMPTY_BOARD,
        pile_taken=state.pile_taken + sum(map(len, hands)),
    )


def _exchanged(state: State, seat: int, card: str, drawn: str | None) -> tuple[Any, ...]:
    """The hands after ``seat`` gave up ``card`` and drew ``drawn``."""
    hand = list(state.hands[seat])
    hand.remove(card)
    if drawn is not None:
        hand.append(drawn)
    return (*state.hands[:seat], tuple(hand), *state.hands[seat + 1 :])


def _on_played(state: State, data: Any, version: int) -> State:
    seat, drawn = data["seat"], data["drawn"]
    chips, runs = state.chips, state.runs
    for key, owner in (("cell", state.rules.team_of(seat)), ("removed", EMPTY)):  # type: ignore[union-attr]
        if data[key] is not None:
            cell: Cell = (data[key][0], data[key][1])
            at = index(cell)
            chips = (*chips[:at], owner, *chips[at + 1 :])
            runs = update_runs(runs, chips, cell)
    return replace(
        state,
        version=version,
        turn=state.turn + 1,
        hands=_exchanged(state, seat, data["card"], drawn),
        chips=chips,
        runs=runs,
        discard=(*state.discard, data["card"]),
        pile_taken=state.pile_taken + (drawn is not None),
        discarded=False,
        passes=0,
    )


def _on_discarded(state: State, data: Any, version: int) -> State:
    drawn = data["drawn"]
    return replace(
        state,
        version=version,
        hands=_exchanged(state, data["seat"], data["card"], drawn),
        discard=(*state.discard, data["card"]),
        pile_taken=state.pile_taken + (drawn is not None),
        discarded=True,
    )


def _on_passed(state: State, data: Any, version: int) -> State:
    return replace(
        state, version=version, turn=state.turn + 1, discarded=False, passes=state.passes + 1
    )


def _on_completed(state: State, data: Any, version: int) -> State:
    return replace(state, version=version)  # the runs were found when the chip was placed


def _on_reshuffled(state: State, data: Any, version: int) -> State:
    return replace(
        state,
        version=version,
        discard=(),
        pile_base=tuple(data["cards"]),
        pile_offset=data["stream_offset"],
        pile_taken=0,
        reshuffles=data["reshuffle"],
    )


def _on_ended(state: State, data: Any, version: int) -> State:
    return replace(
        state,
        version=version,
        over=True,
        result=data["result"],
        winning_team=data["team"],
        winners=tuple(data["winners"]),
        totals=tuple(t["total"] for t in sorted(data["totals"], key=lambda t: t["team"])),
        seed=data["seed"],
    )


_APPLY: dict[str, Callable[[State, Any, int], State]] = {
    GAME_CREATED: partial(on_created, parse_rules=parse_rules),
    SEAT_TAKEN: on_seat_taken,
    GAME_STARTED: _on_started,
    CARDS_DEALT: _on_dealt,
    CARD_PLAYED: _on_played,
    DEAD_CARD_DISCARDED: _on_discarded,
    TURN_PASSED: _on_passed,
    SEQUENCE_COMPLETED: _on_completed,
    DECK_RESHUFFLED: _on_reshuffled,
    GAME_ENDED: _on_ended,
    SEAT_LEFT: on_seat_left,
    SEAT_TAKEN_OVER: on_taken_over,
    GAME_CANCELLED: on_cancelled,
}
EVENT_TYPES = frozenset(_APPLY)
