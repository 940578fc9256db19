"""The Sushi Go! deck (S1) and the card facts scoring needs."""

from __future__ import annotations

from collections import Counter

TEMPURA = "tempura"
SASHIMI = "sashimi"
DUMPLING = "dumpling"
MAKI_1, MAKI_2, MAKI_3 = "maki_1", "maki_2", "maki_3"
EGG, SALMON, SQUID = "egg_nigiri", "salmon_nigiri", "squid_nigiri"
PUDDING = "pudding"
WASABI = "wasabi"
CHOPSTICKS = "chopsticks"

# S1: the 108 cards, in the canonical order the fair shuffle (S18) starts from.
DECK_COMPOSITION: tuple[tuple[str, int], ...] = (
    (TEMPURA, 14),
    (SASHIMI, 14),
    (DUMPLING, 14),
    (MAKI_2, 12),
    (MAKI_3, 8),
    (MAKI_1, 6),
    (SALMON, 10),
    (SQUID, 5),
    (EGG, 5),
    (PUDDING, 10),
    (WASABI, 6),
    (CHOPSTICKS, 4),
)
CANONICAL_DECK: tuple[str, ...] = tuple(k for k, n in DECK_COMPOSITION for _ in range(n))
DECK_COUNTS: Counter[str] = Counter(CANONICAL_DECK)
KINDS: tuple[str, ...] = tuple(k for k, _ in DECK_COMPOSITION)
CARD_KINDS: frozenset[str] = frozenset(KINDS)  # for fast membership tests

MAKI_ICONS = {MAKI_1: 1, MAKI_2: 2, MAKI_3: 3}
NIGIRI_POINTS = {EGG: 1, SALMON: 2, SQUID: 3}
NIGIRI_KINDS: frozenset[str] = frozenset(NIGIRI_POINTS)

# The Zoch edition prints other names for two cards; they are the same cards with the same scores.
ZOCH_NAMES = {DUMPLING: "mussels", SQUID: "tuna_nigiri"}


def display_names(edition: str) -> dict[str, str]:
    """Card kind -> the name the edition prints on it (the API always uses the canonical kind)."""
    names = {kind: kind for kind in KINDS}
    if edition == "zoch":
        names.update(ZOCH_NAMES)
    return names
