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
import struct
from collections.abc import Callable, Iterator, Sequence

ALGORITHM = "cardroom-shuffle-v1"
_LABEL = ALGORITHM.encode()
_BLOCK_WORDS = struct.Struct(">8I")  # a 32-byte block as eight big-endian unsigned 32-bit words
_IPAD = bytes(x ^ 0x36 for x in range(256))  # RFC 2104's pads, as byte translation tables
_OPAD = bytes(x ^ 0x5C for x in range(256))


def _blocks(seed: bytes) -> Callable[[int], bytes]:
    """Block ``i`` of the seed's stream: HMAC-SHA256 (RFC 2104, the same bytes as ``hmac``),
    keyed once. Why not ``hmac.digest``: it sets OpenSSL's HMAC up anew for every block, which
    costs twice what copying the two keyed SHA-256 states does."""
    key = (seed if len(seed) <= 64 else hashlib.sha256(seed).digest()).ljust(64, b"\0")
    inner, outer = hashlib.sha256(key.translate(_IPAD)), hashlib.sha256(key.translate(_OPAD))

    def block(i: int) -> bytes:
        h = inner.copy()
        h.update(_LABEL + i.to_bytes(8, "big"))
        o = outer.copy()
        o.update(h.digest())
        return o.digest()

    return block


def random_words(seed: bytes, start: int = 0) -> Iterator[int]:
    """The seed's stream of unsigned 32-bit numbers (step 2), from word ``start``."""
    block = _blocks(seed)
    index, skip = divmod(start, 8)
    while True:
        yield from _BLOCK_WORDS.unpack(block(index))[skip:]
        skip = 0
        index += 1


def _words(seed: bytes, start: int, count: int) -> list[int]:
    """Words ``start`` to ``start + count - 1`` of the seed's stream."""
    block = _blocks(seed)
    first, last = start // 8, (start + count - 1) // 8
    stream = b"".join(map(block, range(first, last + 1)))  # one unpack for all the blocks
    words = struct.unpack(f">{len(stream) // 4}I", stream)
    skip = start - 8 * first
    return list(words[skip : skip + count])


# Below every ``below(n)`` limit (step 3) for n <= 256: a word under it is never rejected.
_NEVER_REJECTED = 2**32 - 256


def fisher_yates(cards: Sequence[str], seed: bytes, start: int = 0) -> tuple[tuple[str, ...], int]:
    """``cards`` shuffled with the seed's stream from word ``start`` (steps 3 and 4), and the
    position in the stream right after the last word used."""
    deck = list(cards)
    swaps = len(deck) - 1
    if 0 < swaps < 256:
        words = _words(seed, start, swaps)
        if max(words) < _NEVER_REJECTED:  # all but always (a rejection: about 1 in 150,000)
            for i, x in zip(range(swaps, 0, -1), words, strict=True):
                j = x % (i + 1)
                deck[i], deck[j] = deck[j], deck[i]
            return tuple(deck), start + swaps
    return _fisher_yates_rejecting(deck, seed, start)


def _fisher_yates_rejecting(
    deck: list[str], seed: bytes, start: int
) -> tuple[tuple[str, ...], int]:
    """Steps 3 and 4 word by word, rejection sampling included."""
    word = random_words(seed, start).__next__
    used = start
    for i in range(len(deck) - 1, 0, -1):
        n = i + 1
        limit = 2**32 - (2**32 % n)
        x = word()
        used += 1
        while x >= limit:
            x = word()
            used += 1
        j = x % n
        deck[i], deck[j] = deck[j], deck[i]
    return tuple(deck), used
