"""Typed games, seats, views, moves and events for both games, read from the service's JSON.

Every object keeps the JSON it was read from in ``raw``, so that a field this version does not
name is still at hand. Card names are one type per game (``SushiGoCard``, ``SequenceCard``):
plain strings, checked by a type checker, sent as they are."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

SushiGoCard: TypeAlias = Literal[
    "tempura", "sashimi", "dumpling", "maki_1", "maki_2", "maki_3", "egg_nigiri",
    "salmon_nigiri", "squid_nigiri", "pudding", "wasabi", "chopsticks",
]  # fmt: skip
# Two decks of rank + suit (A 2 … 10 J Q K; S H D C); jacks: JD JC two-eyed, JH JS one-eyed.
SequenceCard: TypeAlias = str
Cell: TypeAlias = tuple[int, int]
GameKind: TypeAlias = Literal["sushi-go", "sequence"]
Status: TypeAlias = Literal["waiting", "playing", "over", "cancelled"]


# --- moves ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SushiGoPick:
    """A Sushi Go! pick for the turn it answers (S4): one card, or two in order with chopsticks
    (S6); ``dummy_card`` when the seat controls the dummy (S17); ``use_wasabi`` (Zoch, S9)."""

    round: int
    turn: int
    cards: tuple[SushiGoCard, ...]
    dummy_card: SushiGoCard | None = None
    use_wasabi: tuple[bool, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"round": self.round, "turn": self.turn, "cards": list(self.cards)}
        if self.dummy_card is not None:
            body["dummy_card"] = self.dummy_card
        if self.use_wasabi is not None:
            body["use_wasabi"] = list(self.use_wasabi)
        return body


@dataclass(frozen=True)
class SequencePlay:
    """Play ``card`` on ``cell`` (Q6; a one-eyed jack removes the chip there)."""

    turn: int
    card: SequenceCard
    cell: Cell

    def to_json(self) -> dict[str, Any]:
        return {"turn": self.turn, "card": self.card, "cell": list(self.cell)}


@dataclass(frozen=True)
class SequenceDiscard:
    """Discard a dead card and draw another; the turn goes on (Q7)."""

    turn: int
    card: SequenceCard

    def to_json(self) -> dict[str, Any]:
        return {"turn": self.turn, "discard": self.card}


@dataclass(frozen=True)
class SequencePass:
    """No card can be played (Q8)."""

    turn: int

    def to_json(self) -> dict[str, Any]:
        return {"turn": self.turn, "pass": True}


SequenceMove: TypeAlias = SequencePlay | SequenceDiscard | SequencePass
Move: TypeAlias = SushiGoPick | SequenceMove


# --- views ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SeatInfo:
    """A seat as every viewer sees it (``hand`` only once the game is over)."""

    seat: int
    name: str | None
    taken: bool
    bot: str | None
    taken_over: str | None
    hand_size: int
    raw: dict[str, Any] = field(repr=False)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SeatInfo:
        return cls(
            data["seat"], data.get("name"), data["taken"], data.get("bot"),
            data.get("taken_over"), data.get("hand_size", 0), data,
        )  # fmt: skip


@dataclass(frozen=True)
class SushiGoYou:
    """What only this seat sees: its hand, its pick, and what it may do now."""

    seat: int
    hand: tuple[SushiGoCard, ...]
    picked: bool
    awaiting_pick: bool
    chopsticks_usable: bool
    controls_dummy: bool
    free_wasabi: int


@dataclass(frozen=True)
class SushiGoView:
    game_id: str
    status: Status
    version: int
    rules: dict[str, Any]
    round: int
    turn: int
    seats: tuple[SeatInfo, ...]
    you: SushiGoYou | None
    totals: tuple[dict[str, Any], ...]
    winners: tuple[int, ...]
    raw: dict[str, Any] = field(repr=False)
    game: Literal["sushi-go"] = "sushi-go"

    @property
    def my_move(self) -> bool:
        """Whether the game waits for this seat's pick now."""
        return self.status == "playing" and self.you is not None and self.you.awaiting_pick

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SushiGoView:
        you = data.get("you")
        return cls(
            game_id=str(data.get("game_id", "")),
            status=data["status"],
            version=data["version"],
            rules=data.get("rules") or {},
            round=data["round"],
            turn=data["turn"],
            seats=tuple(SeatInfo.from_json(s) for s in data["seats"]),
            you=None
            if you is None
            else SushiGoYou(
                seat=you["seat"],
                hand=tuple(you["hand"]),
                picked=you.get("pick") is not None,
                awaiting_pick=you["awaiting_pick"],
                chopsticks_usable=you["chopsticks_usable"],
                controls_dummy=you["controls_dummy"],
                free_wasabi=you["free_wasabi"],
            ),
            totals=tuple(data.get("totals") or ()),
            winners=tuple(data.get("winners") or ()),
            raw=data,
        )


@dataclass(frozen=True)
class SequencePlays:
    """A card of the hand and the cells it can go on now (none: it is dead or blocked)."""

    card: SequenceCard
    cells: tuple[Cell, ...]


@dataclass(frozen=True)
class SequenceYou:
    seat: int
    team: int
    hand: tuple[SequenceCard, ...]
    your_turn: bool
    plays: tuple[SequencePlays, ...]
    dead_cards: tuple[SequenceCard, ...]
    can_discard: bool


@dataclass(frozen=True)
class SequenceView:
    game_id: str
    status: Status
    version: int
    rules: dict[str, Any]
    turn: int
    seat_to_move: int | None
    chips: tuple[tuple[int | None, ...], ...]
    seats: tuple[SeatInfo, ...]
    you: SequenceYou | None
    winners: tuple[int, ...]
    totals: tuple[dict[str, Any], ...]
    raw: dict[str, Any] = field(repr=False)
    game: Literal["sequence"] = "sequence"

    @property
    def my_move(self) -> bool:
        """Whether it is this seat's turn."""
        return self.status == "playing" and self.you is not None and self.you.your_turn

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SequenceView:
        you = data.get("you")
        return cls(
            game_id=str(data.get("game_id", "")),
            status=data["status"],
            version=data["version"],
            rules=data.get("rules") or {},
            turn=data["turn"],
            seat_to_move=data.get("seat_to_move"),
            chips=tuple(tuple(row) for row in data["chips"]),
            seats=tuple(SeatInfo.from_json(s) for s in data["seats"]),
            you=None
            if you is None
            else SequenceYou(
                seat=you["seat"],
                team=you["team"],
                hand=tuple(you["hand"]),
                your_turn=you["your_turn"],
                plays=tuple(
                    SequencePlays(p["card"], tuple((c[0], c[1]) for c in p["cells"]))
                    for p in you["plays"]
                ),
                dead_cards=tuple(you["dead_cards"]),
                can_discard=you["can_discard"],
            ),
            winners=tuple(data.get("winners") or ()),
            totals=tuple(data.get("totals") or ()),
            raw=data,
        )


View: TypeAlias = SushiGoView | SequenceView


def parse_view(data: dict[str, Any]) -> View:
    """The typed view of either game."""
    if data["game"] == "sushi-go":
        return SushiGoView.from_json(data)
    if data["game"] == "sequence":
        return SequenceView.from_json(data)
    raise ValueError(f"unknown game {data['game']!r}")


# --- seats, events ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Event:
    """One event of a game's log as the caller may read it (hidden parts null, named in
    ``data["redacted"]``)."""

    version: int
    type: str
    data: dict[str, Any]
    raw: dict[str, Any] = field(repr=False)

    @classmethod
    def from_json(cls, record: dict[str, Any]) -> Event:
        return cls(record["version"], record["type"], record.get("data") or {}, record)


@dataclass(frozen=True)
class BotSeat:
    """A seat the service's own bot plays (``kind``: ``random`` or ``greedy``)."""

    seat: int
    kind: Literal["random", "greedy"] = "greedy"
    name: str | None = None

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"seat": self.seat, "kind": self.kind}
        if self.name is not None:
            body["name"] = self.name
        return body
