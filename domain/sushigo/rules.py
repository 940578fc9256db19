"""A game's rule set: edition, player count and variants (validated once, at creation)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..decider import rule_broken

EDITIONS = ("gamewright", "zoch")
PASS_DIRECTIONS = ("left", "alternate")
PLAYER_RANGE = {"gamewright": (2, 5), "zoch": (3, 5)}
HAND_SIZE = {2: 10, 3: 9, 4: 8, 5: 7}  # S2
DUMMY_HAND_SIZE = 9  # S17
ROUNDS = 3  # S3


@dataclass(frozen=True, slots=True)
class Rules:
    players: int
    edition: str = "gamewright"
    pass_direction: str = "left"
    dummy: bool = False
    # Zoch, games created since issue 39 (``game_created``'s ``last_card_auto``, not a rule
    # option): every last one-card hand is picked automatically (S5), a nigiri going onto a free
    # wasabi by S9's default. Before, a nigiri with a free wasabi waited for its seat, and which
    # seats were still choosing told everyone watching what their hidden last card was.
    last_card_auto: bool = False

    @property
    def hand_size(self) -> int:
        return DUMMY_HAND_SIZE if self.dummy else HAND_SIZE[self.players]

    @property
    def scored_seats(self) -> int:
        """Players, plus the dummy, which is scored like a third player (S17)."""
        return self.players + (1 if self.dummy else 0)

    @property
    def wasabi_optional(self) -> bool:
        return self.edition == "zoch"  # S9 (gamewright: mandatory, S8)

    @property
    def split_ties(self) -> bool:
        return self.edition == "gamewright"  # S11/S14 split; S12/S15 full points

    @property
    def last_card_waits(self) -> bool:
        """Whether a last nigiri with a free wasabi waits for its seat (S9, games before
        issue 39) instead of being picked automatically like every other last card (S5)."""
        return self.wasabi_optional and not self.last_card_auto

    def passes_left(self, round_no: int) -> bool:
        return self.pass_direction == "left" or round_no != 2

    def to_json(self) -> dict[str, Any]:
        return {
            "players": self.players,
            "edition": self.edition,
            "pass_direction": self.pass_direction,
            "dummy": self.dummy,
        }


def parse_rules(options: Mapping[str, Any]) -> Rules:
    """Rules from creation options; raises ``invalid_rules`` naming what is wrong."""
    unknown = set(options) - {"players", "edition", "pass_direction", "dummy"}
    if unknown:
        raise rule_broken("invalid_rules", f"unknown rule options: {', '.join(sorted(unknown))}")
    edition = options.get("edition", "gamewright")
    if edition not in EDITIONS:
        raise rule_broken("invalid_rules", f"edition must be one of {', '.join(EDITIONS)}")
    direction = options.get("pass_direction", "left")
    if direction not in PASS_DIRECTIONS:
        raise rule_broken(
            "invalid_rules", f"pass_direction must be one of {', '.join(PASS_DIRECTIONS)}"
        )
    players = options.get("players")
    low, high = PLAYER_RANGE[edition]
    if not isinstance(players, int) or isinstance(players, bool) or not low <= players <= high:
        raise rule_broken(
            "invalid_rules", f"the {edition} edition is for {low} to {high} players, not {players}"
        )
    dummy = options.get("dummy", False)
    if not isinstance(dummy, bool):
        raise rule_broken("invalid_rules", "dummy must be true or false")
    if dummy and (edition != "gamewright" or players != 2):
        raise rule_broken(
            "invalid_rules", "the dummy variant is for 2-player gamewright games only (S17)"
        )
    return Rules(players, edition, direction, dummy)
