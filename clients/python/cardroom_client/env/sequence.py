"""Sequence's observations and actions, read from a seat's view (the service's JSON, or the same
dict domain/ builds offline).

Action ``a``: below ``PLAYS`` (5200), play card ``a // 100`` (``CARDS`` index) on cell
``a % 100`` (row * 10 + column; a one-eyed jack removes the chip there, Q6); then the 52
discards of a dead card (Q7); the last, a pass (Q8, only when no card can be played).

The observation (float32): the board as four planes of 100 cells (the observer's team's chips,
the next team's, the third team's, the cells of completed sequences); the hand as counts per
card; whether the seat may discard, whether it is its turn, sequences per team (from the
observer's), the draw pile's size and the turn."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from ..models import SequenceDiscard, SequenceMove, SequencePass, SequencePlay

RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
CARDS = tuple(rank + suit for suit in "SHDC" for rank in RANKS)
INDEX = {card: i for i, card in enumerate(CARDS)}
CELLS = 100
PLAYS = len(CARDS) * CELLS
DISCARDS = PLAYS
PASS = PLAYS + len(CARDS)
ACTIONS = PASS + 1
SIZE = 4 * CELLS + len(CARDS) + 8


def action_space() -> spaces.Discrete:
    return spaces.Discrete(ACTIONS)


def observation_space() -> spaces.Dict:
    return spaces.Dict(
        {
            "observation": spaces.Box(0.0, 200.0, (SIZE,), np.float32),
            "action_mask": spaces.Box(0, 1, (ACTIONS,), np.int8),
        }
    )


def to_move(view: dict[str, Any], action: int) -> SequenceMove:
    action, turn = int(action), view["turn"]
    if action < PLAYS:
        card, cell = divmod(action, CELLS)
        return SequencePlay(turn, CARDS[card], divmod(cell, 10))
    if action < PASS:
        return SequenceDiscard(turn, CARDS[action - DISCARDS])
    return SequencePass(turn)


def encode_move(event_type: str, data: dict[str, Any]) -> int:
    """The action of a move as the service records it (a ``card_played`` event: ``card`` and
    ``cell`` or ``removed``; ``dead_card_discarded``; ``turn_passed``)."""
    if event_type == "card_played":
        row, column = data["cell"] or data["removed"]
        return INDEX[data["card"]] * CELLS + int(row) * 10 + int(column)
    if event_type == "dead_card_discarded":
        return DISCARDS + INDEX[data["card"]]
    if event_type == "turn_passed":
        return PASS
    raise ValueError(f"{event_type} is not a move")


def legal_actions(view: dict[str, Any]) -> list[int]:
    you = view.get("you")
    if view["status"] != "playing" or not you or not you["your_turn"]:
        return []
    actions = [
        INDEX[play["card"]] * CELLS + row * 10 + column
        for play in you["plays"]
        for row, column in play["cells"]
    ]
    playable = bool(actions)
    if you["can_discard"]:
        actions += [DISCARDS + INDEX[card] for card in dict.fromkeys(you["dead_cards"])]
    if not playable:
        actions.append(PASS)
    return actions


def action_mask(view: dict[str, Any]) -> np.ndarray:
    mask = np.zeros(ACTIONS, np.int8)
    mask[legal_actions(view)] = 1
    return mask


def observe(view: dict[str, Any], seat: int) -> np.ndarray:
    out = np.zeros(SIZE, np.float32)
    rules = view["rules"]
    teams = rules["teams"]
    mine = seat % teams
    for r, row in enumerate(view["chips"]):
        for c, chip in enumerate(row):
            if chip is not None:
                out[((chip - mine) % teams) * CELLS + r * 10 + c] = 1
    for run in view["sequences"]:
        for row, column in run["cells"]:
            out[3 * CELLS + row * 10 + column] = 1
    at = 4 * CELLS
    you = view.get("you") or {}
    for card in you.get("hand", ()):
        out[at + INDEX[card]] += 1
    at += len(CARDS)
    counts = {team["team"]: team["sequences"] for team in view["teams"]}
    out[at : at + 8] = (
        you.get("can_discard", False), you.get("your_turn", False),
        *(counts.get((mine + i) % teams, 0) if i < teams else 0 for i in range(3)),
        view["draw_pile_size"], min(view["turn"], 200), view["status"] == "over",
    )  # fmt: skip
    return out
