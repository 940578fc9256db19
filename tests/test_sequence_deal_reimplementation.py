"""A third party's re-deal of Sequence games, written from the README's Sequence paragraph (under
"Fair shuffle") alone: the deck's order before the shuffle, the dealing order, the draws and the
refills (Q2, Q5, Q8). It imports nothing of domain/ but the random games to check."""

from __future__ import annotations

import hashlib
import hmac
import random

import pytest

from domain.sequence.randomplay import play_random_game

LABEL = b"cardroom-shuffle-v1"
RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]
ONE_DECK = [rank + suit for suit in "SHDC" for rank in RANKS]


def word(seed: bytes, k: int) -> int:
    """Word ``k`` of the stream (README step 1)."""
    block = hmac.new(seed, LABEL + (k // 8).to_bytes(8, "big"), hashlib.sha256).digest()
    return int.from_bytes(block[4 * (k % 8) : 4 * (k % 8) + 4], "big")


def shuffle(cards: list[str], seed: bytes, start: int) -> tuple[list[str], int]:
    """Steps 2 and 4 from word ``start``; returns the pile (top first) and the next word."""
    cards, k = list(cards), start
    for i in range(len(cards) - 1, 0, -1):
        while True:
            x, k = word(seed, k), k + 1
            if x < 2**32 - (2**32 % (i + 1)):
                break
        j = x % (i + 1)
        cards[i], cards[j] = cards[j], cards[i]
    return cards, k


@pytest.mark.parametrize(("players", "teams"), [(2, 2), (3, 3), (4, 2), (12, 3)])
def test_every_deal_draw_and_refill_follows_the_readme(players: int, teams: int) -> None:
    for game in range(3):
        events, _ = play_random_game({"players": players, "teams": teams}, random.Random(game))
        seed = bytes.fromhex(events[-1].data["seed"])
        pile, next_word = shuffle(ONE_DECK + ONE_DECK, seed, 0)
        (dealt,) = [e.data["hands"] for e in events if e.type == "cards_dealt"]
        size = len(dealt[0])
        assert dealt == [pile[s * size : (s + 1) * size] for s in range(players)]
        top, discards = players * size, []
        for event in events:
            if event.type in {"card_played", "dead_card_discarded"}:
                expected = pile[top] if top < len(pile) else None
                assert event.data["drawn"] == expected
                top += expected is not None
                discards.append(event.data["card"])
            elif event.type == "deck_reshuffled":
                assert top == len(pile)  # only once the pile has run out
                assert event.data["cards"] == discards  # in the order played, the first first
                assert event.data["stream_offset"] == next_word
                pile, next_word = shuffle(discards, seed, next_word)
                top, discards = 0, []
