"""The committed-seed fair shuffle every game uses, ``cardroom-shuffle-v1`` (Sushi Go! S18,
Sequence Q2/Q8).

1. The seed is 32 secret bytes; a game's first event publishes ``sha256(seed)`` in hex.
2. A stream of 32-bit numbers: block ``i`` (i = 0, 1, 2, …) is
   ``HMAC-SHA256(key=seed, msg=b"cardroom-shuffle-v1" + i.to_bytes(8, "big"))``; each 32-byte block
   gives eight unsigned 32-bit big-endian numbers, used in order. Word ``k`` of the stream is
   number ``k % 8`` of block ``k // 8``, so the stream can be resumed at any word.
3. ``below(n)``: take the next number ``x``; if ``x >= 2**32 - (2**32 % n)`` discard it and take
   another (rejection sampling, so there is no modulo bias); otherwise return ``x % n``.
4. Fisher–Yates a list of ``m`` cards: for ``i`` from ``m - 1`` down to 1, ``j = below(i + 1)``,
   swap positions ``i`` and ``j``. Position 0 is then the top of the pile.

A game shuffles its canonical deck from word 0. Sequence shuffles its discard pile into a new draw
pile (Q8) by resuming the same stream where the previous shuffle stopped.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterator, Sequence

ALGORITHM = "cardroom-shuffle-v1"
_LABEL = ALGORITHM.encode()


def random_words(seed: bytes, start: int = 0) -> Iterator[int]:
    """The seed's stream of unsigned 32-bit numbers (step 2), from word ``start``."""
    block, skip = divmod(start, 8)
    while True:
        digest = hmac.new(seed, _LABEL + block.to_bytes(8, "big"), hashlib.sha256).digest()
        for k in range(skip * 4, 32, 4):
            yield int.from_bytes(digest[k : k + 4], "big")
        skip = 0
        block += 1


def fisher_yates(cards: Sequence[str], seed: bytes, start: int = 0) -> tuple[tuple[str, ...], int]:
    """``cards`` shuffled with the seed's stream from word ``start`` (steps 3 and 4), and the
    position in the stream right after the last word used."""
    words = random_words(seed, start)
    used = start
    deck = list(cards)
    for i in range(len(deck) - 1, 0, -1):
        n = i + 1
        limit = 2**32 - (2**32 % n)
        x = next(words)
        used += 1
        while x >= limit:
            x = next(words)
            used += 1
        j = x % n
        deck[i], deck[j] = deck[j], deck[i]
    return tuple(deck), used
