"""A third party's re-implementation of the fair shuffle (S18), written from the README's
"Fair shuffle (S18)" section alone — it does not import domain.sushigo.shuffle — re-deals every
recorded deal of finished games from the seed their last event reveals."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterator

import pytest
from export_support import VARIANTS, finished_export

LABEL = b"cardroom-shuffle-v1"
# README step 3: the deck before shuffling.
START = [
    *["tempura"] * 14,
    *["sashimi"] * 14,
    *["dumpling"] * 14,
    *["maki_2"] * 12,
    *["maki_3"] * 8,
    *["maki_1"] * 6,
    *["salmon_nigiri"] * 10,
    *["squid_nigiri"] * 5,
    *["egg_nigiri"] * 5,
    *["pudding"] * 10,
    *["wasabi"] * 6,
    *["chopsticks"] * 4,
]


def numbers(seed: bytes) -> Iterator[int]:
    """README step 1: HMAC-SHA256 blocks in counter mode, eight big-endian uint32 each."""
    i = 0
    while True:
        block = hmac.new(seed, LABEL + i.to_bytes(8, "big"), hashlib.sha256).digest()
        for k in range(8):
            yield int.from_bytes(block[4 * k : 4 * k + 4], "big")
        i += 1


def deck(seed: bytes) -> list[str]:
    stream = numbers(seed)

    def below(n: int) -> int:  # README step 2: rejection sampling
        while True:
            x = next(stream)
            if x < 2**32 - (2**32 % n):
                return x % n

    cards = list(START)
    for i in range(107, 0, -1):  # README step 4: Fisher-Yates
        j = below(i + 1)
        cards[i], cards[j] = cards[j], cards[i]
    return cards


def test_the_zero_seed_deck_starts_as_the_readme_says() -> None:
    cards = deck(bytes(32))
    first = ["wasabi", "squid_nigiri", "salmon_nigiri", "tempura", "dumpling", "tempura"]
    assert cards[:6] == first
    assert sorted(cards) == sorted(START)
    # the whole order, as pinned by tests/test_sushigo_rules.py (S18 known answer)
    digest = hashlib.sha256(",".join(cards).encode()).hexdigest()
    assert digest == "4c4c35114876c2abf42d737daea4b667dddf22efafba09f91d4f7e8afaf22cec"


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_recorded_deal_is_the_seeds_deck(variant: str, seed: int) -> None:
    records = finished_export(variant, seed)
    created, ended = records[0]["data"], records[-1]["data"]
    revealed = bytes.fromhex(ended["seed"])
    assert hashlib.sha256(revealed).hexdigest() == created["seed_commitment"]
    cards, top = deck(revealed), 0
    deals = [r for r in records if r["type"] == "round_dealt"]
    assert len(deals) == 3
    for deal in deals:  # README step 5: seat 0's hand, seat 1's, ..., then the dummy's pile
        dealt = [card for hand in deal["data"]["hands"] for card in hand]
        dealt += deal["data"].get("dummy_pile", [])
        assert deal["data"]["deck_offset"] == top
        assert dealt == cards[top : top + len(dealt)]
        top += len(dealt)
