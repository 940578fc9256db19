"""How cards move on the table, shared by deciding (picks.py) and applying (evolution.py) the
events: the picks placed on the tableaux (nigiri onto wasabi, chopsticks back into the hand), the
hands passed on, the dummy's draw, and ``tuple.__new__`` under the names of what it builds (the
hot paths' constructors without keyword handling)."""

from __future__ import annotations

from typing import Any

from .cards import CHOPSTICKS, NIGIRI_KINDS, WASABI
from .rules import Rules
from .state import HANDS as _HANDS
from .state import PICKS as _PICKS
from .state import VERSION as _VERSION
from .state import Pick, State, Tableau

# Event(…) and Pick(…) without their keyword-handling __new__: the hot paths make ~200 a game.
_new_event = _new_pick = _new_tableau = _new_state = tuple.__new__


def _place_picks(
    picks: list[Pick | None],  # none None: every seat has picked
    tableaux: list[Tableau],
    hands: list[tuple[str, ...]],
    players: int,
    revealed: list[dict[str, Any]] | None,
) -> None:
    """S4: every pick goes onto its seat's tableau at once (S8/S9: nigiri onto wasabi; S6/S7:
    used chopsticks go back into the hand; S17: the dummy's card onto the dummy's), in the
    working lists ``tableaux`` and ``hands``; ``revealed`` gets the picks as ``turn_revealed``
    lists them (``_reveal``), when given. ``_on_revealed`` on lists, for the fast paths."""
    placed = []
    # strict=False: with the dummy, tableaux has one more (placed below, not zipped)
    for seat, pick, tableau in zip(range(players), picks, tableaux, strict=False):
        cards, dummy_card, wasabi, _, _ = pick  # type: ignore[misc]
        if len(cards) == 1 and dummy_card is None and wasabi is None:  # the common case
            if revealed is not None:
                revealed.append({"seat": seat, "cards": [cards[0]], "chopsticks": False})
            if cards[0] in NIGIRI_KINDS:
                placed.append(_place(tableau, cards, None))
            else:
                placed.append(_new_tableau(Tableau, (tableau[0] + cards, tableau[1])))
            continue
        if revealed is not None:
            revealed.append(pick.to_json(seat=seat, auto=False))  # type: ignore[union-attr]
        tableau = _place(tableau, cards, wasabi)
        if len(cards) == 2:
            tableau = _take_back_chopsticks(tableau)
            hands[seat] = (*hands[seat], CHOPSTICKS)
        placed.append(tableau)
        if dummy_card is not None:
            tableaux[players] = _place(tableaux[players], (dummy_card,), None)
    tableaux[:players] = placed


def _pass_hands(
    passes_left: bool,
    dummy: bool,
    turns_played: int,
    hands: list[tuple[str, ...]],
    pile: tuple[str, ...],
) -> tuple[list[tuple[str, ...]], tuple[str, ...]]:
    """S4: the hands pass on; S17: then the dummy's controller (``turns_played``: counting the
    turn just revealed) draws the top card of the dummy's pile."""
    hands = [hands[-1], *hands[:-1]] if passes_left else [*hands[1:], hands[0]]
    if dummy and pile:
        controller = turns_played % 2
        hands[controller] = (*hands[controller], pile[0])
        pile = pile[1:]
    return hands, pile


def _with_pick(state: State, seat: int, pick: Pick, version: int) -> State:
    """S4: the pick is recorded, hidden; its cards leave the hand."""
    hand = state.hands[seat]
    for kind in pick.cards if pick.dummy_card is None else pick.taken:
        at = hand.index(kind)
        hand = hand[:at] + hand[at + 1 :]
    hands = list(state.hands)
    hands[seat] = hand
    picks = list(state.picks)
    picks[seat] = pick
    values = list(state)  # replace(state, version=…, hands=…, picks=…), without keywords
    values[_VERSION], values[_HANDS], values[_PICKS] = version, tuple(hands), tuple(picks)
    return tuple.__new__(State, values)


def _draw_for_dummy(
    rules: Rules, turns_played: int, hands: tuple[tuple[str, ...], ...], pile: tuple[str, ...]
) -> tuple[tuple[tuple[str, ...], ...], tuple[str, ...]]:
    """S17: at the start of a turn the dummy's controller draws the top card of its pile."""
    if not (pile and rules.dummy):
        return hands, pile
    controller = turns_played % 2
    drawn = tuple((*h, pile[0]) if i == controller else h for i, h in enumerate(hands))
    return drawn, pile[1:]


_NO_PICKS: dict[int, tuple[None, ...]] = {n: (None,) * n for n in range(2, 6)}


def _place(
    tableau: Tableau, cards: tuple[str, ...], use_wasabi: tuple[bool, ...] | None
) -> Tableau:
    """S8/S9: cards go down in the order given; a nigiri goes onto a free wasabi unless declined."""
    placed, dipped = tableau.cards, tableau.dipped
    if NIGIRI_KINDS.isdisjoint(cards):  # the common case: nothing to put on a wasabi
        return tuple.__new__(Tableau, (placed + cards, dipped))  # Tableau(…), without keywords
    for i, kind in enumerate(cards):
        placed = (*placed, kind)
        if (
            kind in NIGIRI_KINDS
            and (use_wasabi is None or use_wasabi[i])
            and placed.count(WASABI) > len(dipped)
        ):
            dipped = (*dipped, kind)
    return Tableau(placed, dipped)


def _take_back_chopsticks(tableau: Tableau) -> Tableau:
    cards = list(tableau.cards)
    cards.remove(CHOPSTICKS)
    return Tableau(tuple(cards), tableau.dipped)
