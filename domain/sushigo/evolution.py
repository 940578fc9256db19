"""The Sushi Go! events' type names and ``evolve``: how each event changes the state, and
``fold_events``, which applies a run of picks and reveals to one working copy (issue 15). The
event schemas are listed in game.py."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
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
from .cards import CHOPSTICKS, NIGIRI_KINDS, PUDDING
from .rules import Rules, parse_rules
from .state import DUMMY_PILE as _DUMMY_PILE
from .state import HANDS as _HANDS
from .state import OVER as _OVER
from .state import PICKS as _PICKS
from .state import STARTED as _STARTED
from .state import TABLEAUX as _TABLEAUX
from .state import TURN as _TURN
from .state import TURNS_PLAYED as _TURNS_PLAYED
from .state import VERSION as _VERSION
from .state import Pick, State, Tableau, replace
from .table import (
    _NO_PICKS,
    _draw_for_dummy,
    _new_pick,
    _new_state,
    _pass_hands,
    _place,
    _place_picks,
    _take_back_chopsticks,
    _with_pick,
)
from .upcast import CURRENT, upcast

GAME = "sushi-go"
ROUND_DEALT = "round_dealt"
CARD_PICKED = "card_picked"
TURN_REVEALED = "turn_revealed"
ROUND_SCORED = "round_scored"


def evolve(state: State, event: Event) -> State:
    apply = _APPLY.get(event.type)
    if apply is None:
        raise ValueError(f"unknown Sushi Go! event type {event.type!r}")
    if event.schema_version != CURRENT.get(event.type, 1):
        event = upcast(event)  # an event recorded in an older schema
    return apply(state, event.data, state.version + 1)


def fold_events(events: Sequence[Event], state: State | None = None) -> State:
    """The state after ``events`` (from ``state``, or from the beginning): what ``evolve`` gives
    event by event (``decider.fold`` calls this), with each run of ``card_picked`` and
    ``turn_revealed`` events (all but a few of a game's) applied to one working copy of the
    hands, picks and tableaux, frozen once at the end of the run (issue 15: the fold of a
    finished game). tests/test_sushigo_fast_path.py compares the two on every prefix."""
    current = State() if state is None else state
    at, count = 0, len(events)
    while at < count:
        if events[at][0] in _PLAY and current[_STARTED] and not current[_OVER]:
            current, at = _fold_play(current, events, at)
            if at == count:
                break
        current = evolve(current, events[at])  # anything else, and where a run stopped
        at += 1
    return current


def _fold_play(state: State, events: Sequence[Event], at: int) -> tuple[State, int]:
    """``card_picked`` and ``turn_revealed`` events from ``events[at]`` on, as ``_on_picked`` and
    ``_on_revealed`` apply them, until another event (or one they would refuse: left to
    ``evolve``, which raises what it raises); the state after them and where the run stopped."""
    rules: Rules = state.rules  # type: ignore[assignment]
    players, dummy = rules.players, rules.dummy
    passes_left = rules.passes_left(state.round)
    hands, picks, tableaux = list(state.hands), list(state.picks), list(state.tableaux)
    pile, turn, turns_played = state.dummy_pile, state.turn, state.turns_played
    start, count = at, len(events)
    while at < count:
        kind, data, schema = events[at]
        if schema != 1:
            break
        if kind == CARD_PICKED:
            cards, dummy_card, wasabi = tuple(data["cards"]), data.get("dummy_card"), None
            if (chosen := data.get("use_wasabi")) is not None:
                wasabi = tuple(chosen)
            pick = _new_pick(
                Pick, (cards, dummy_card, wasabi, data.get("auto", False), data.get("by"))
            )
            seat = data["seat"]
            if type(seat) is not int or not -players <= seat < players:
                break  # evolve's to refuse
            hand = hands[seat]
            for card in cards if dummy_card is None else (*cards, dummy_card):
                if card not in hand:
                    break
                i = hand.index(card)
                hand = hand[:i] + hand[i + 1 :]
            else:
                hands[seat], picks[seat] = hand, pick
                at += 1
                continue
            break  # a card not in the hand: evolve's to refuse
        if kind != TURN_REVEALED or None in picks:
            break
        _place_picks(picks, tableaux, hands, players, None)
        turns_played += 1
        hands, pile = _pass_hands(passes_left, dummy, turns_played, hands, pile)
        turn += 1
        picks = [None] * players
        at += 1
    if at == start:
        return state, at
    values = list(state)
    values[_VERSION] = state.version + at - start
    values[_TURN], values[_TURNS_PLAYED], values[_DUMMY_PILE] = turn, turns_played, pile
    values[_HANDS], values[_PICKS], values[_TABLEAUX] = tuple(hands), tuple(picks), tuple(tableaux)
    return _new_state(State, values), at


_PLAY = frozenset((CARD_PICKED, TURN_REVEALED))


def _on_started(state: State, data: Any, version: int) -> State:
    seats = state.rules.scored_seats  # type: ignore[union-attr]
    return replace(
        state,
        version=version,
        started=True,
        tableaux=(Tableau(),) * seats,
        puddings=(0,) * seats,
        totals=(0,) * seats,
    )


def _on_dealt(state: State, data: Any, version: int) -> State:
    rules: Rules = state.rules  # type: ignore[assignment]
    dealt = tuple(tuple(hand) for hand in data["hands"])
    dummy_pile = tuple(data.get("dummy_pile", ()))
    hands, pile = _draw_for_dummy(rules, state.turns_played, dealt, dummy_pile)
    return replace(
        state,
        version=version,
        round=data["round"],
        turn=1,
        hands=hands,
        dummy_pile=pile,
        picks=_NO_PICKS[rules.players],
        dealt=state.dealt + sum(map(len, dealt)) + len(dummy_pile),
    )


def _on_picked(state: State, data: Any, version: int) -> State:
    wasabi = data.get("use_wasabi")
    pick = _new_pick(  # Pick.from_json(data), without keyword handling: a fold makes ~100
        Pick,
        (
            tuple(data["cards"]),
            data.get("dummy_card"),
            None if wasabi is None else tuple(wasabi),
            data.get("auto", False),
            data.get("by"),
        ),
    )
    return _with_pick(state, data["seat"], pick, version)


def _on_revealed(state: State, data: Any, version: int) -> State:
    """S4: place every pick at once; S7: used chopsticks go back into the hand passed on."""
    rules: Rules = state.rules  # type: ignore[assignment]
    tableaux = list(state.tableaux)
    hands = list(state.hands)
    for seat, pick in enumerate(state.picks):
        assert pick is not None
        cards, tableau = pick.cards, tableaux[seat]
        if NIGIRI_KINDS.isdisjoint(cards):  # _place's common case, inline: no wasabi to use
            tableaux[seat] = tuple.__new__(Tableau, (tableau.cards + cards, tableau.dipped))
        else:
            tableaux[seat] = _place(tableau, cards, pick.use_wasabi)
        if len(cards) == 2:  # S6
            tableaux[seat] = _take_back_chopsticks(tableaux[seat])
            hands[seat] = (*hands[seat], CHOPSTICKS)
        if pick.dummy_card is not None:
            dummy = rules.players
            tableaux[dummy] = _place(tableaux[dummy], (pick.dummy_card,), None)
    if rules.pass_direction == "left" or state.round != 2:  # rules.passes_left(state.round)
        passed = (hands[-1], *hands[:-1])  # seat i passes to seat i + 1
    else:
        passed = (*hands[1:], hands[0])
    turns_played = state.turns_played + 1
    if state.dummy_pile and rules.dummy:
        hands_now, pile = _draw_for_dummy(rules, turns_played, passed, state.dummy_pile)
    else:
        hands_now, pile = passed, state.dummy_pile
    return replace(
        state,
        version=version,
        turn=state.turn + 1,
        turns_played=turns_played,
        hands=hands_now,
        dummy_pile=pile,
        picks=_NO_PICKS[rules.players],
        tableaux=tuple(tableaux),
    )


def _on_scored(state: State, data: Any, version: int) -> State:
    """S3: all played cards but puddings are discarded; puddings stay with their owner."""
    scores = data["scores"]
    discard = list(state.discard)
    puddings = list(state.puddings)
    for seat, tableau in enumerate(state.tableaux):
        kept = tableau.cards.count(PUDDING)
        puddings[seat] += kept
        discard.extend(filter(PUDDING.__ne__, tableau.cards))  # in order, without a genexpr
    return replace(
        state,
        version=version,
        tableaux=(Tableau(),) * len(state.tableaux),
        last_tableaux=state.tableaux,
        puddings=tuple(puddings),
        discard=tuple(discard),
        round_scores=(*state.round_scores, tuple(scores)),
        totals=_added(state.totals, {s["seat"]: s["total"] for s in scores}),
    )


def _on_ended(state: State, data: Any, version: int) -> State:
    return replace(
        state,
        version=version,
        over=True,
        pudding_scores=tuple(data["puddings"]),
        totals=_added((0,) * len(state.totals), {t["seat"]: t["total"] for t in data["totals"]}),
        winners=tuple(data["winners"]),
        seed=data["seed"],
        picks=(),
    )


def _added(totals: tuple[int, ...], points: dict[int, int]) -> tuple[int, ...]:
    """``totals`` plus the ``points`` of each seat named (events name seats, v2)."""
    return tuple(total + points.get(seat, 0) for seat, total in enumerate(totals))


def _on_created(state: State, data: Any, version: int) -> State:
    """``game_created``; ``last_card_auto`` goes with the rules (see Rules)."""
    state = on_created(state, data, version, parse_rules=parse_rules)
    rules = state.rules
    if data.get("last_card_auto") and isinstance(rules, Rules):
        state = replace(state, rules=dataclasses.replace(rules, last_card_auto=True))
    return state


_APPLY: dict[str, Callable[[State, Any, int], State]] = {
    GAME_CREATED: _on_created,
    SEAT_TAKEN: on_seat_taken,
    GAME_STARTED: _on_started,
    ROUND_DEALT: _on_dealt,
    CARD_PICKED: _on_picked,
    TURN_REVEALED: _on_revealed,
    ROUND_SCORED: _on_scored,
    GAME_ENDED: _on_ended,
    SEAT_LEFT: on_seat_left,
    SEAT_TAKEN_OVER: on_taken_over,
    GAME_CANCELLED: on_cancelled,
}
