"""Sushi Go!'s observations and actions, read from a seat's view (the service's JSON, or the
same dict domain/ builds offline): so a policy sees online exactly what it saw offline.

Action ``a`` = ``((first * 13 + second) * 13 + dummy) * 4 + declines``: ``first`` the card
picked (``KINDS`` index); ``second`` 0 for none, else 1 + the second card's index (chopsticks,
S6); ``dummy`` 0 for none, else 1 + the dummy's card (S17); ``declines`` bit i set: card i of
the pick declines a free wasabi (Zoch only, S9). The mask allows each legal pick once.

The observation (float32) is, seats counted from the observer's (the dummy last): the hand and
the observer's own unrevealed pick as counts per kind; per seat its tableau and the nigiri on
wasabi as counts, puddings, score, hand size and whether it has picked; then the round, turn,
and what the view says the seat may do."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np
from gymnasium import spaces

from ..models import SushiGoCard, SushiGoPick

KINDS: tuple[SushiGoCard, ...] = (
    "tempura",
    "sashimi",
    "dumpling",
    "maki_2",
    "maki_3",
    "maki_1",
    "salmon_nigiri",
    "squid_nigiri",
    "egg_nigiri",
    "pudding",
    "wasabi",
    "chopsticks",
)  # fmt: skip  (S1 order)
INDEX: dict[str, int] = {kind: i for i, kind in enumerate(KINDS)}
NIGIRI = frozenset({"egg_nigiri", "salmon_nigiri", "squid_nigiri"})
K = len(KINDS)
ACTIONS = K * 13 * 13 * 4
PER_SEAT = 2 * K + 4
TAIL = 10


def action_space() -> spaces.Discrete:
    return spaces.Discrete(ACTIONS)


def observation_size(seats: int) -> int:
    return 2 * K + seats * PER_SEAT + TAIL


def observation_space(seats: int) -> spaces.Dict:
    size = observation_size(seats)
    return spaces.Dict(
        {
            "observation": spaces.Box(-1000.0, 1000.0, (size,), np.float32),
            "action_mask": spaces.Box(0, 1, (ACTIONS,), np.int8),
        }
    )


def encode_action(first: int, second: int = 0, dummy: int = 0, declines: int = 0) -> int:
    return ((first * 13 + second) * 13 + dummy) * 4 + declines


SINGLE: dict[str, int] = {
    kind: encode_action(i) for i, kind in enumerate(KINDS)
}  # one card, nothing else


def encode_pick(
    cards: Sequence[str], dummy_card: str | None = None, use_wasabi: Sequence[bool] | None = None
) -> int:
    """The action of a pick as the service records it (a ``card_picked`` event's ``cards``,
    ``dummy_card``, ``use_wasabi``): to learn from exported games, or replay them."""
    if len(cards) == 1 and dummy_card is None and not use_wasabi:
        return SINGLE[cards[0]]  # the most frequent pick
    second = INDEX[cards[1]] + 1 if len(cards) == 2 else 0
    dummy = INDEX[dummy_card] + 1 if dummy_card is not None else 0
    declines = sum(
        1 << at for at, used in enumerate(use_wasabi or ()) if not used and cards[at] in NIGIRI
    )  # only a nigiri can decline a wasabi (S9): a false for any other card says nothing
    return encode_action(INDEX[cards[0]], second, dummy, declines)


@cache
def _decoded(action: int) -> tuple[tuple[SushiGoCard, ...], SushiGoCard | None, int]:
    rest, declines = divmod(action, 4)
    rest, dummy = divmod(rest, 13)
    first, second = divmod(rest, 13)
    cards = (KINDS[first],) if not second else (KINDS[first], KINDS[second - 1])
    return cards, (KINDS[dummy - 1] if dummy else None), declines


def decode(
    action: int,
) -> tuple[tuple[SushiGoCard, ...], SushiGoCard | None, tuple[bool, ...] | None]:
    """The cards, dummy card and use_wasabi an action stands for (``true`` only for a nigiri:
    the service refuses it for any other card, S8/S9)."""
    cards, dummy, declines = _decoded(int(action))
    wasabi = (
        None
        if not declines
        else tuple(card in NIGIRI and not declines >> i & 1 for i, card in enumerate(cards))
    )
    return cards, dummy, wasabi


def to_move(view: dict[str, Any], action: int) -> SushiGoPick:
    """The pick ``action`` stands for, for the turn ``view`` shows."""
    cards, dummy, wasabi = decode(action)
    return SushiGoPick(view["round"], view["turn"], cards, dummy, wasabi)


def legal_actions(view: dict[str, Any]) -> list[int]:
    """Every pick the seat may make now, each once (none when no pick is awaited from it)."""
    you = view.get("you")
    if view["status"] != "playing" or not you or not you["awaiting_pick"]:
        return []
    zoch = view["rules"]["edition"] == "zoch"
    return legal_picks(
        you["hand"], zoch, you["free_wasabi"], you["chopsticks_usable"], you["controls_dummy"]
    )


def legal_picks(
    hand: Sequence[str], zoch: bool, free_wasabi: int, chopsticks: bool, controls_dummy: bool
) -> list[int]:
    """The actions of every pick from ``hand`` (in action order), given what the view says the
    seat may do: use chopsticks (S6), must name the dummy's card (S17), has a free wasabi
    to decline (Zoch, S9)."""
    if not chopsticks and not controls_dummy and not (zoch and free_wasabi > 0):
        return sorted(SINGLE[card] for card in set(hand))  # one card, nothing else to choose
    if not controls_dummy and not zoch:  # one card, or two in order (S6): nothing else
        counts = [0] * K
        for card in hand:
            counts[INDEX[card]] += 1
        kinds = [i for i in range(K) if counts[i]]
        pairs = [(i * 13 + j + 1) * 52 for i in kinds for j in kinds if i != j or counts[i] >= 2]
        return [i * 676 for i in kinds] + pairs  # encode_action(i), encode_action(i, j + 1)
    return enumerate_picks(hand, zoch, free_wasabi, chopsticks, controls_dummy)


def enumerate_picks(
    hand: Sequence[str], zoch: bool, free_wasabi: int, chopsticks: bool, controls_dummy: bool
) -> list[int]:
    """``legal_picks`` the long way, for any case (its shortcuts are checked against this)."""
    counts = [0] * K
    for card in hand:
        counts[INDEX[card]] += 1
    kinds = [i for i in range(K) if counts[i]]
    picks: list[tuple[int, ...]] = [(i,) for i in kinds]
    if chopsticks:
        picks += [(i, j) for i in kinds for j in kinds if i != j or counts[i] >= 2]
    actions = []
    for pick in picks:
        left = counts.copy()
        for i in pick:
            left[i] -= 1
        dummies = [d + 1 for d in range(K) if left[d]] if controls_dummy else [0]
        declinable = 0
        if zoch:
            for at, i in enumerate(pick):
                dips = free_wasabi > 0 or (at == 1 and KINDS[pick[0]] == "wasabi")
                if KINDS[i] in NIGIRI and dips:
                    declinable |= 1 << at
        choices = [d for d in range(4) if d & ~declinable == 0]
        second = pick[1] + 1 if len(pick) == 2 else 0
        for dummy in dummies:
            actions += [encode_action(pick[0], second, dummy, d) for d in choices]
    return actions


def action_mask(view: dict[str, Any]) -> np.ndarray:
    mask = np.zeros(ACTIONS, np.int8)
    mask[legal_actions(view)] = 1
    return mask


def _counts(cards: Any, into: np.ndarray, at: int) -> None:
    for card in cards or ():
        into[at + INDEX[card]] += 1


def observe(view: dict[str, Any], seat: int) -> np.ndarray:
    """The observation of ``seat`` from its view (only what the view shows)."""
    seats = view["seats"]
    players = len(seats)
    scored = players + (1 if view.get("dummy") else 0)
    out = np.zeros(observation_size(scored), np.float32)
    you = view.get("you") or {}
    _counts(you.get("hand"), out, 0)
    _counts((you.get("pick") or {}).get("cards"), out, K)
    at = 2 * K
    order = [*[(seat + i) % players for i in range(players)]]
    for other in order:
        data = seats[other]
        _seat(out, at, data["tableau"], data["puddings"], data["score"])
        out[at + 2 * K + 2] = data["hand_size"]
        out[at + 2 * K + 3] = data["picked"]
        at += PER_SEAT
    if view.get("dummy"):
        dummy = view["dummy"]
        _seat(out, at, dummy["tableau"], dummy["puddings"], dummy["score"])
        out[at + 2 * K + 2] = dummy["pile_size"]
        at += PER_SEAT
    rules = view["rules"]
    out[at : at + TAIL] = (
        view["round"], view["turn"], you.get("awaiting_pick", False),
        you.get("chopsticks_usable", False), you.get("controls_dummy", False),
        you.get("free_wasabi", 0), rules["edition"] == "zoch",
        rules["pass_direction"] == "alternate", rules["dummy"], view["status"] == "over",
    )  # fmt: skip
    return out


def _seat(out: np.ndarray, at: int, tableau: dict[str, Any], puddings: int, score: int) -> None:
    _counts(tableau["cards"], out, at)
    _counts(tableau["on_wasabi"], out, at + K)
    out[at + 2 * K] = puddings
    out[at + 2 * K + 1] = score
