"""The fair shuffle (S18), version ``cardroom-shuffle-v1``.

Written so that a third party can re-implement it from this description alone:

1. The seed is 32 secret bytes; the game's first event publishes ``sha256(seed)`` in hex.
2. A stream of 32-bit numbers: block ``i`` (i = 0, 1, 2, …) is
   ``HMAC-SHA256(key=seed, msg=b"cardroom-shuffle-v1" + i.to_bytes(8, "big"))``; each 32-byte block
   gives eight unsigned 32-bit big-endian numbers, used in order.
3. ``below(n)``: take the next number ``x``; if ``x >= 2**32 - (2**32 % n)`` discard it and take
   another (rejection sampling, so there is no modulo bias); otherwise return ``x % n``.
4. Start from the canonical deck (S1 order: 14 tempura, 14 sashimi, 14 dumpling, 12 maki_2,
   8 maki_3, 6 maki_1, 10 salmon_nigiri, 5 squid_nigiri, 5 egg_nigiri, 10 pudding, 6 wasabi,
   4 chopsticks) and Fisher–Yates it: for ``i`` from 107 down to 1, ``j = below(i + 1)``, swap
   positions ``i`` and ``j``.
5. Position 0 is the top of the draw pile. Each round deals from the top: seat 0's whole hand
   first, then seat 1, …, then the dummy's pile (S17).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from ..shuffle import ALGORITHM, fisher_yates, random_words
from .cards import CANONICAL_DECK

__all__ = ["ALGORITHM", "random_words", "shuffled"]


@lru_cache(maxsize=1024)  # a game deals three times from the same seed
def shuffled(seed: bytes, cards: Sequence[str] = CANONICAL_DECK) -> tuple[str, ...]:
    """The deck in the order the seed gives it (steps 3 and 4; the shared ``domain.shuffle``)."""
    return fisher_yates(cards, seed)[0]
