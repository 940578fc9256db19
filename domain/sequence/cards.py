"""The Sequence deck: two standard 52-card decks, 104 cards (Q2), and the jacks (Q3).

A card is rank + suit: ranks ``A 2 … 10 J Q K``, suits ``S H D C`` (``"AS"``, ``"10H"``, ``"JD"``).
"""

from __future__ import annotations

from collections import Counter

RANKS: tuple[str, ...] = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUITS: tuple[str, ...] = ("S", "H", "D", "C")

# One 52-card deck, suit by suit, each suit in rank order: the order the shuffle starts from.
ONE_DECK: tuple[str, ...] = tuple(rank + suit for suit in SUITS for rank in RANKS)
# Q2: two decks, the first then the second, before the fair shuffle.
CANONICAL_DECK: tuple[str, ...] = ONE_DECK + ONE_DECK
DECK_COUNTS: Counter[str] = Counter(CANONICAL_DECK)
CARDS: frozenset[str] = frozenset(ONE_DECK)

# Q3: two-eyed jacks are wild (place anywhere empty); one-eyed jacks remove a chip.
TWO_EYED_JACKS: frozenset[str] = frozenset({"JD", "JC"})
ONE_EYED_JACKS: frozenset[str] = frozenset({"JH", "JS"})
JACKS: frozenset[str] = TWO_EYED_JACKS | ONE_EYED_JACKS
