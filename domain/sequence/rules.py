"""A Sequence game's rule set: players, teams (Q4), hand size (Q5), ``advanced_jacks`` (Q11)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..decider import rule_broken

# Q4: the player counts, and the numbers of teams each may play in.
TEAMS_FOR: dict[int, tuple[int, ...]] = {
    2: (2,),
    3: (3,),
    4: (2,),
    6: (2, 3),
    8: (2,),
    9: (3,),
    10: (2,),
    12: (2, 3),
}
# Q5: hand size by (teams, players).
HAND_SIZE: dict[tuple[int, int], int] = {
    (2, 2): 7,
    (2, 4): 6,
    (2, 6): 5,
    (2, 8): 4,
    (2, 10): 3,
    (2, 12): 3,
    (3, 3): 6,
    (3, 6): 5,
    (3, 9): 4,
    (3, 12): 3,
}
# Q12: sequences a team needs to win.
TO_WIN = {2: 2, 3: 1}


@dataclass(frozen=True, slots=True)
class Rules:
    players: int
    teams: int
    advanced_jacks: bool = False

    @property
    def hand_size(self) -> int:
        return HAND_SIZE[(self.teams, self.players)]

    @property
    def to_win(self) -> int:
        return TO_WIN[self.teams]

    def team_of(self, seat: int) -> int:
        """Q4: seat i plays for team i mod teams, so team-mates never sit side by side."""
        return seat % self.teams

    def seats_of(self, team: int) -> list[int]:
        return list(range(team, self.players, self.teams))

    def to_json(self) -> dict[str, Any]:
        return {"players": self.players, "teams": self.teams, "advanced_jacks": self.advanced_jacks}


def parse_rules(options: Mapping[str, Any]) -> Rules:
    """Rules from creation options; raises ``invalid_rules`` naming what is wrong. ``teams``
    defaults to the only choice, or to 2 for 6 and 12 players (Q4)."""
    unknown = set(options) - {"players", "teams", "advanced_jacks"}
    if unknown:
        raise rule_broken("invalid_rules", f"unknown rule options: {', '.join(sorted(unknown))}")
    players = options.get("players")
    if not isinstance(players, int) or isinstance(players, bool) or players not in TEAMS_FOR:
        raise rule_broken(
            "invalid_rules",
            f"Sequence is for 2, 3, 4, 6, 8, 9, 10 or 12 players, not {players} (Q4)",
        )
    allowed = TEAMS_FOR[players]
    teams = options.get("teams", allowed[0])
    if teams not in allowed or isinstance(teams, bool):
        choices = " or ".join(map(str, allowed))
        raise rule_broken(
            "invalid_rules",
            f"{players} players play in {choices} teams of equal size, not {teams} (Q4)",
        )
    advanced = options.get("advanced_jacks", False)
    if not isinstance(advanced, bool):
        raise rule_broken("invalid_rules", "advanced_jacks must be true or false (Q11)")
    return Rules(players, teams, advanced)
