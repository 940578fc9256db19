"""Where every point comes from: each scored point traced to its rule and to the events that
picked and placed the cards that earned it.

``provenance(events)`` walks a game's events (upcast, in version order) and returns one section
per scoring event: a ``round`` section for each ``round_scored`` and an ``end`` section for the
puddings of ``game_ended``. Points are recomputed here from the placed cards with the scoring
functions (S10–S15), and set beside what the event records (``recorded``), so that an audit can
check that they add up. A card is ``{"card", "picked", "revealed"}``: the versions of the
``card_picked`` event that picked it and of the ``turn_revealed`` event that placed it; a nigiri on
a wasabi also names the wasabi's versions (S8/S9); a nigiri whose owner left a free wasabi
unused says so (``declined_wasabi``, zoch S9).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..decider import GAME_CREATED, GAME_ENDED, SEAT_TAKEN, Event
from .cards import (
    CHOPSTICKS,
    DUMPLING,
    MAKI_ICONS,
    NIGIRI_POINTS,
    PUDDING,
    SASHIMI,
    TEMPURA,
    WASABI,
)
from .game import CARD_PICKED, ROUND_SCORED, TURN_REVEALED
from .rules import Rules, parse_rules
from .scoring import dumpling_points, maki_points, pudding_points, winners
from .upcast import upcast


@dataclass
class _Placed:
    """A card on a tableau, with the versions of the events that picked and placed it."""

    kind: str
    picked: int | None
    revealed: int
    wasabi: _Placed | None = None  # the wasabi a nigiri went onto (S8/S9)
    holds: bool = False  # a wasabi that already has its nigiri
    declined: bool = False  # a nigiri kept off a free wasabi by its owner's choice (S9)

    def to_json(self, points: int | None = None) -> dict[str, Any]:
        data: dict[str, Any] = {"card": self.kind, "picked": self.picked, "revealed": self.revealed}
        if points is not None:
            data["points"] = points
        if self.wasabi is not None:
            data["wasabi"] = {"picked": self.wasabi.picked, "revealed": self.wasabi.revealed}
        if self.declined:
            data["declined_wasabi"] = True
        return data


def provenance(events: Sequence[Event]) -> list[dict[str, Any]]:
    walk = _Walk()
    for version, event in enumerate(events, start=1):
        walk.apply(version, upcast(event))
    return walk.sections


class _Walk:
    def __init__(self) -> None:
        self.rules: Rules | None = None
        self.names: list[str] = []
        self.tableaux: list[list[_Placed]] = []
        self.puddings: list[list[_Placed]] = []  # kept across rounds (S3)
        self.picked: dict[tuple[int, int, int], int] = {}  # (round, turn, seat) -> version
        self.sections: list[dict[str, Any]] = []
        self.totals: list[int] = []

    def apply(self, version: int, event: Event) -> None:
        data = event.data
        if event.type == GAME_CREATED:
            self.rules = parse_rules(data["rules"])
            seats = self.rules.scored_seats
            self.tableaux = [[] for _ in range(seats)]
            self.puddings = [[] for _ in range(seats)]
            self.totals = [0] * seats
        elif event.type == SEAT_TAKEN:
            self.names.append(data["name"])
        elif event.type == CARD_PICKED:
            self.picked[(data["round"], data["turn"], data["seat"])] = version
        elif event.type == TURN_REVEALED:
            self._reveal(version, data)
        elif event.type == ROUND_SCORED:
            self._score_round(version, data)
        elif event.type == GAME_ENDED:
            self._end(version, data)

    def _reveal(self, version: int, data: Mapping[str, Any]) -> None:
        """S4: every pick placed at once; S7: used chopsticks leave the tableau; S17: the
        controller's ``dummy_card`` goes onto the dummy's tableau."""
        assert self.rules is not None
        for pick in data["picks"]:
            seat = pick["seat"]
            picked = self.picked.get((data["round"], data["turn"], seat))
            wasabi = pick.get("use_wasabi")
            tableau = self.tableaux[seat]
            for i, kind in enumerate(pick["cards"]):
                _place(tableau, _Placed(kind, picked, version), wasabi is None or wasabi[i])
            if len(pick["cards"]) == 2:
                tableau.remove(next(c for c in tableau if c.kind == CHOPSTICKS))
            if pick.get("dummy_card") is not None:
                dummy = self.tableaux[self.rules.players]
                _place(dummy, _Placed(pick["dummy_card"], picked, version), True)

    def _score_round(self, version: int, data: Mapping[str, Any]) -> None:
        assert self.rules is not None
        recorded = {score["seat"]: score for score in data["scores"]}
        icons = [sum(MAKI_ICONS.get(c.kind, 0) for c in t) for t in self.tableaux]
        maki = maki_points(icons, self.rules.split_ties)
        seats = []
        for seat, tableau in enumerate(self.tableaux):
            record = recorded.get(seat, {})
            categories = _round_categories(tableau, icons[seat], maki[seat], self.rules)
            for category in categories:
                category["recorded"] = _points(record.get(category["category"]))
            points = sum(c["points"] for c in categories)
            self.totals[seat] += points
            seats.append(
                {
                    **self._seat(seat),
                    "points": points,
                    "recorded": record.get("total"),
                    "categories": categories,
                }
            )
            self.puddings[seat].extend(c for c in tableau if c.kind == PUDDING)
            tableau.clear()  # S3: everything but puddings is discarded
        self.sections.append(
            {"kind": "round", "round": data["round"], "version": version, "seats": seats}
        )

    def _end(self, version: int, data: Mapping[str, Any]) -> None:
        """S13–S16: puddings, totals and winners."""
        rules = self.rules
        assert rules is not None
        counts = [len(p) for p in self.puddings]
        penalty = rules.scored_seats > 2  # S14: no penalty in a 2-player game without the dummy
        points = pudding_points(counts, rules.split_ties, penalty)
        recorded_puddings = {p["seat"]: p for p in data.get("puddings") or []}
        recorded_totals = {t["seat"]: t["total"] for t in data.get("totals") or []}
        seats = []
        for seat, cards in enumerate(self.puddings):
            self.totals[seat] += points[seat]
            category = {
                "category": "pudding",
                "points": points[seat],
                "rules": ["S14" if rules.split_ties else "S15"],
                "count": counts[seat],
                "cards": [c.to_json() for c in cards],
            }
            if not penalty:
                category["note"] = "no pudding penalty in a 2-player game (S14)"
            recorded = recorded_puddings.get(seat)
            category["recorded"] = _points(recorded)
            seats.append(
                {
                    **self._seat(seat),
                    "points": points[seat],
                    "recorded": category["recorded"],
                    "categories": [category],
                    "total": self.totals[seat],
                    "recorded_total": recorded_totals.get(seat),
                }
            )
        self.sections.append(
            {
                "kind": "end",
                "version": version,
                "seats": seats,
                "winners": winners(self.totals, counts, rules.players),  # S16
                "winners_rule": "S16",
            }
        )

    def _seat(self, seat: int) -> dict[str, Any]:
        assert self.rules is not None
        dummy = seat >= self.rules.players
        name = "dummy" if dummy else (self.names[seat] if seat < len(self.names) else None)
        return {"seat": seat, "name": name, "dummy": dummy, "rules": ["S17"] if dummy else []}


def _place(tableau: list[_Placed], card: _Placed, use_wasabi: bool) -> None:
    """S8/S9: a nigiri goes onto the oldest free wasabi unless its owner declines (zoch)."""
    tableau.append(card)
    if card.kind in NIGIRI_POINTS:
        free = next((c for c in tableau if c.kind == WASABI and not c.holds), None)
        if free is not None and use_wasabi:
            free.holds = True
            card.wasabi = free
        card.declined = free is not None and not use_wasabi


def _round_categories(
    tableau: list[_Placed], icons: int, maki: int, rules: Rules
) -> list[dict[str, Any]]:
    """One seat's round, per category (S10–S13)."""

    def of(*kinds: str) -> list[_Placed]:
        return [c for c in tableau if c.kind in kinds]

    def sets(kind: str, size: int, per_set: int) -> dict[str, Any]:
        cards = of(kind)
        complete = len(cards) // size * size
        return {
            "category": kind,
            "points": per_set * (len(cards) // size),
            "rules": ["S10"],
            "count": len(cards),
            "cards": [c.to_json() for c in cards[:complete]],
            "unused": [c.to_json() for c in cards[complete:]],
        }

    dumplings = of(DUMPLING)
    nigiri = of(*NIGIRI_POINTS)
    nigiri_points = [NIGIRI_POINTS[c.kind] * (3 if c.wasabi else 1) for c in nigiri]
    nigiri_rules = ["S10"]
    if any(c.wasabi for c in nigiri):
        nigiri_rules.append("S9" if rules.wasabi_optional else "S8")
    return [
        {
            "category": "maki",
            "points": maki,
            "rules": ["S11" if rules.split_ties else "S12"],
            "icons": icons,
            "cards": [c.to_json() for c in of(*MAKI_ICONS)],
        },
        sets(TEMPURA, 2, 5),
        sets(SASHIMI, 3, 10),
        {
            "category": "dumpling",
            "points": dumpling_points(len(dumplings)),
            "rules": ["S10"],
            "count": len(dumplings),
            "cards": [c.to_json() for c in dumplings],
        },
        {
            "category": "nigiri",
            "points": sum(nigiri_points),
            "rules": nigiri_rules,
            "cards": [c.to_json(p) for c, p in zip(nigiri, nigiri_points, strict=True)],
        },
        {
            "category": "pudding",
            "points": 0,
            "rules": ["S13"],  # kept, and scored at the end
            "count": len(of(PUDDING)),
            "cards": [c.to_json() for c in of(PUDDING)],
        },
    ]


def _points(recorded: Any) -> Any:
    return recorded.get("points") if isinstance(recorded, Mapping) else None
