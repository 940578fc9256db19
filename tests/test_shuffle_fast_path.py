"""The fair shuffle's fast path (all words below every rejection limit, S18 step 3) and its
word-by-word fallback give the same decks; a stream with a rejected word takes the fallback."""

from __future__ import annotations

import hashlib
import hmac
import random
import struct

import pytest

from domain import shuffle


def reference(cards: list[str], words: list[int]) -> tuple[tuple[str, ...], int]:
    """Steps 3 and 4 of S18 as written, on a given stream of words."""
    deck, used = list(cards), 0
    for i in range(len(deck) - 1, 0, -1):
        n = i + 1
        while True:
            x = words[used]
            used += 1
            if x < 2**32 - (2**32 % n):
                break
        j = x % n
        deck[i], deck[j] = deck[j], deck[i]
    return tuple(deck), used


def hmac_words(seed: bytes, count: int) -> list[int]:
    """The stream of step 2, with the standard library's hmac."""
    words: list[int] = []
    for block in range(count // 8 + 1):
        message = shuffle._LABEL + block.to_bytes(8, "big")
        words += struct.unpack(">8I", hmac.new(seed, message, hashlib.sha256).digest())
    return words[:count]


@pytest.mark.parametrize("size", [0, 1, 2, 104, 108, 300])
def test_the_shuffle_is_the_specified_one(size: int) -> None:
    rng = random.Random(size)
    cards = [f"c{i}" for i in range(size)]
    for _ in range(20):
        seed = rng.randbytes(rng.choice([32, 80]))  # 80: longer than a SHA-256 block's key
        deck, used = reference(cards, hmac_words(seed, size + 16))
        assert shuffle.fisher_yates(cards, seed) == (deck, used)


def test_a_rejected_word_takes_the_word_by_word_path(monkeypatch: pytest.MonkeyPatch) -> None:
    # Word 0 is 0xFFFFFFFF: at or above every limit of step 3, so below(108) must skip it.
    real = shuffle._blocks

    def blocks(seed: bytes):  # type: ignore[no-untyped-def]
        block = real(seed)
        return lambda i: b"\xff" * 4 + block(i)[4:] if i == 0 else block(i)

    monkeypatch.setattr(shuffle, "_blocks", blocks)
    seed = bytes(32)
    words = [0xFFFFFFFF, *hmac_words(seed, 200)[1:]]
    cards = [f"c{i}" for i in range(108)]
    deck, used = reference(cards, words)
    assert used == 108  # 107 swaps and the one rejected word
    assert shuffle.fisher_yates(cards, seed) == (deck, used)
