"""What a viewer may see: of the state (``view``), of each event (``visible_event``), and the
score sheet. Before the end a seat sees its own hand only; nobody sees another hand, a card another
seat drew, the draw pile or the seed. The board, chips, sequences, discard pile, whose turn it is
and hand sizes are public. After the end, everything is public."""

from __future__ import annotations

from typing import Any

from ..decider import GAME_ENDED, Event, Viewer
from .board import BOARD, SIZE
from .game import CARD_PLAYED, CARDS_DEALT, DEAD_CARD_DISCARDED, GAME, pile_order
from .legal import can_discard, dead_cards, targets
from .sequences import EMPTY
from .state import State


def view(state: State, viewer: Viewer) -> dict[str, Any]:
    rules = state.rules
    everything = state.over or viewer.everything
    result: dict[str, Any] = {
        "game": GAME,
        "status": state.status,
        "version": state.version,
        "rules": rules.to_json() if rules else None,
        "seed_commitment": state.seed_commitment,
        "turn": state.turn,
        "turn_seconds": state.turn_seconds,
        "seat_to_move": state.current,
        "board": [list(row) for row in BOARD],
        "chips": [
            [None if chip == EMPTY else chip for chip in state.chips[r * SIZE : (r + 1) * SIZE]]
            for r in range(SIZE)
        ],
        "sequences": [run.to_json() for run in state.runs],
        "teams": _teams(state),
        "to_win": rules.to_win if rules else 0,
        "discard_pile": list(state.discard),
        "draw_pile_size": state.pile_size,
        "passes_in_a_row": state.passes,
        "seats": [_seat(state, seat, everything) for seat in range(rules.players if rules else 0)],
    }
    seat = viewer.seat
    if seat is not None and 0 <= seat < len(state.hands):
        your_turn = seat == state.current
        result["you"] = {
            "seat": seat,
            "team": rules.team_of(seat) if rules else 0,
            "hand": list(state.hands[seat]),
            "your_turn": your_turn,
            "dead_cards": dead_cards(state, seat),
            "can_discard": your_turn and can_discard(state, seat),
            "plays": _plays(state, seat) if your_turn and not state.over else [],
        }
    if state.cancelled:  # over before it started: only the seed to reveal
        result["seed"] = state.seed
    elif state.over:
        result["result"] = state.result
        result["winning_team"] = state.winning_team
        result["winners"] = list(state.winners)
        result["totals"] = [{"team": t, "total": n} for t, n in enumerate(state.totals)]
        result["seed"] = state.seed
        if state.seed is not None:
            pile = pile_order(bytes.fromhex(state.seed), state.pile_base, state.pile_offset)[0]
            result["draw_pile"] = list(pile[state.pile_taken :])
    return result


def _plays(state: State, seat: int) -> list[dict[str, Any]]:
    """Q6/Q10/Q11: every cell each card in the hand can go on now, so that a client need not
    re-implement the rules to show them (a dead card has none)."""
    cards = dict.fromkeys(state.hands[seat])  # each distinct card once, in hand order
    return [
        {"card": card, "cells": [list(cell) for cell in targets(state, seat, card)]}
        for card in cards
    ]


def _teams(state: State) -> list[dict[str, Any]]:
    rules = state.rules
    if rules is None:
        return []
    counts = state.sequences()
    return [
        {"team": team, "seats": rules.seats_of(team), "sequences": counts[team]}
        for team in range(rules.teams)
    ]


def _seat(state: State, seat: int, everything: bool) -> dict[str, Any]:
    taken = seat < len(state.names) and state.names[seat] is not None
    taken_over = dict(state.taken_over).get(seat)
    data: dict[str, Any] = {
        "seat": seat,
        "name": state.names[seat] if taken else None,
        "taken": taken,
        "bot": state.bots.get(seat),  # reserved at creation: known before the bot sits
        # Played by the greedy bot since its player resigned, or since it stalled the game.
        "taken_over": taken_over,
        "resigned": taken_over == "resigned",
        "team": state.rules.team_of(seat) if state.rules else 0,
        "hand_size": len(state.hands[seat]) if state.hands else 0,
    }
    if everything and state.hands:
        data["hand"] = list(state.hands[seat])
    return data


# --- events ---------------------------------------------------------------------------------------


def visible_event(state: State, event: Event, viewer: Viewer) -> Event:
    """``event`` as ``viewer`` may read it: hidden values become null and are named in
    ``redacted``."""
    if state.over or viewer.everything or event.type == GAME_ENDED:
        return event
    data = event.data
    if event.type == CARDS_DEALT:
        hands = [hand if seat == viewer.seat else None for seat, hand in enumerate(data["hands"])]
        hidden = [f"hands[{seat}]" for seat, hand in enumerate(hands) if hand is None]
        redacted = {
            **data,
            "hands": hands,
            "hand_sizes": [len(hand) for hand in data["hands"]],
            "redacted": hidden,
        }
        return Event(event.type, redacted, event.schema_version)
    if event.type in (CARD_PLAYED, DEAD_CARD_DISCARDED) and data["seat"] != viewer.seat:
        # always hidden, even when nothing was drawn: the pile's size is public anyway
        return Event(
            event.type, {**data, "drawn": None, "redacted": ["drawn"]}, event.schema_version
        )
    return event


# --- the score sheet --------------------------------------------------------------------------


def score_sheet(state: State) -> dict[str, Any]:
    """Sequences per team, the runs that hold them (Q9/Q10), and the result (Q8/Q12)."""
    rules = state.rules
    teams = []
    for team in _teams(state):
        teams.append(
            {
                **team,
                "names": [state.names[s] if s < len(state.names) else None for s in team["seats"]],
                "runs": [run.to_json() for run in state.runs if run.team == team["team"]],
            }
        )
    return {
        "to_win": rules.to_win if rules else 0,
        "teams": teams,
        "result": state.result,
        "winning_team": state.winning_team,
        "winners": list(state.winners) if state.over else None,
    }
