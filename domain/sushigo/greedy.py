"""The greedy bot: the pick worth the most now, deterministic, no look-ahead.

A pick's worth is what its seat's tableau would score if the round ended after it (S10, with
the maki race against the other tableaux as they lie, S11/S12), plus a share of what unfinished
sets, free wasabi and unused chopsticks may still earn in the turns left, plus a flat value per
pudding (scored at the end, S14/S15). Candidates are every single card, every ordered pair when
chopsticks can be used (S6) and, in zoch, each wasabi choice (S9); the first of equally good
candidates wins, in card order (S1), so the bot is deterministic. The controller of the dummy
(S17) gives the dummy the card that is worth least to it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import product

from .cards import (
    CHOPSTICKS,
    DUMPLING,
    KINDS,
    MAKI_ICONS,
    NIGIRI_KINDS,
    NIGIRI_POINTS,
    PUDDING,
    SASHIMI,
    TEMPURA,
)
from .scoring import dumpling_points, maki_points
from .state import Pick, State, Tableau
from .table import _place, _take_back_chopsticks

# What an unfinished set is worth, as a share of its points, when turns are left (rough odds).
HALF_TEMPURA = 2.5  # one tempura of a pair of 5
SASHIMI_PARTS = (0.0, 2.0, 5.0)  # 0, 1, 2 sashimi towards a set of 10
FREE_WASABI = 3.0  # a later salmon on it scores 6 instead of 2
FREE_CHOPSTICKS = 1.5  # a later extra card
PUDDING_VALUE = 1.5  # about a quarter of the +6 / -6 at the end


def greedy_pick(state: State, seat: int) -> Pick:
    rules = state.rules
    assert rules is not None
    hand = state.hands[seat]
    controls = seat == state.controller
    others = [_icons(t.cards) for i, t in enumerate(state.tableaux) if i != seat]
    judge = _Judge(others, rules.split_ties, max(0, len(hand) - 1 - controls))
    tableau = state.tableaux[seat]
    best: tuple[float, Pick] | None = None
    for cards in _candidates(hand, tableau, controls):
        for wasabi in _wasabi_choices(cards, rules.wasabi_optional):
            worth = judge.worth(_after(tableau, cards, wasabi))
            if best is None or worth > best[0]:
                best = (worth, Pick(cards, None, wasabi))
    assert best is not None, "a seat that must pick holds a card"
    pick = best[1]
    if controls:
        pick = pick._replace(dummy_card=_dummy_card(state, hand, pick.cards, rules.split_ties))
    return pick


def _candidates(hand: Sequence[str], tableau: Tableau, controls: bool) -> Iterator[tuple[str, ...]]:
    kinds = [k for k in KINDS if k in hand]
    for kind in kinds:
        yield (kind,)
    if CHOPSTICKS in tableau.cards and len(hand) >= 2 + controls:  # S6
        for first, second in product(kinds, kinds):
            if first != second or hand.count(first) >= 2:
                yield (first, second)


def _wasabi_choices(cards: tuple[str, ...], optional: bool) -> Sequence[tuple[bool, ...] | None]:
    if not optional or NIGIRI_KINDS.isdisjoint(cards):
        return (None,)  # S8: no choice to make (or nothing to put on a wasabi)
    options = [(True, False) if kind in NIGIRI_KINDS else (True,) for kind in cards]
    return list(product(*options))  # S9: (True, …) first: use the wasabi unless worse


def _after(tableau: Tableau, cards: tuple[str, ...], wasabi: tuple[bool, ...] | None) -> Tableau:
    placed = _place(tableau, cards, wasabi)
    return _take_back_chopsticks(placed) if len(cards) == 2 else placed  # S7


def _dummy_card(state: State, hand: Sequence[str], taken: tuple[str, ...], split: bool) -> str:
    rules = state.rules
    assert rules is not None
    rest = list(hand)
    for kind in taken:
        rest.remove(kind)
    dummy = rules.players
    others = [_icons(t.cards) for i, t in enumerate(state.tableaux) if i != dummy]
    judge = _Judge(others, split, len(state.dummy_pile))
    dummy_tableau = state.tableaux[dummy]
    choices = [k for k in KINDS if k in rest]
    return min(choices, key=lambda k: judge.worth(_place(dummy_tableau, (k,), None)))


def _icons(cards: Sequence[str]) -> int:
    return sum(n * cards.count(kind) for kind, n in MAKI_ICONS.items())


class _Judge:
    """What a tableau is worth to its seat, given the other seats' maki icons."""

    def __init__(self, other_icons: list[int], split: bool, turns_left: int) -> None:
        self.other_icons = other_icons
        self.split = split
        self.chance = min(1.0, turns_left / 3)  # no turn left: unfinished sets are worth 0

    def worth(self, tableau: Tableau) -> float:
        cards = tableau.cards
        tempura, sashimi = cards.count(TEMPURA), cards.count(SASHIMI)
        points: float = 5 * (tempura // 2) + 10 * (sashimi // 3)
        points += dumpling_points(cards.count(DUMPLING))
        points += sum(NIGIRI_POINTS[k] for k in cards if k in NIGIRI_POINTS)
        points += sum(2 * NIGIRI_POINTS[k] for k in tableau.dipped)  # tripled on a wasabi (S8)
        points += maki_points([_icons(cards), *self.other_icons], self.split)[0]
        points += PUDDING_VALUE * cards.count(PUDDING)
        later = HALF_TEMPURA * (tempura % 2) + SASHIMI_PARTS[sashimi % 3]
        later += FREE_WASABI * tableau.free_wasabi + FREE_CHOPSTICKS * tableau.chopsticks
        return points + self.chance * later
