"""The state of a Sushi Go! game: the fold of its events.

Immutable named tuples: ``evolve`` returns a new state (``_replace`` is cheap, so that folding a
whole game costs well under a millisecond)."""

from __future__ import annotations

from typing import Any, Final, NamedTuple

from ..decider import BotSeat
from .cards import CHOPSTICKS, WASABI
from .rules import Rules


class Tableau(NamedTuple):
    """The cards a seat has placed this round, in order. ``dipped`` lists the nigiri that went
    onto a wasabi (S8/S9); those wasabi and nigiri are in ``cards`` too."""

    cards: tuple[str, ...] = ()
    dipped: tuple[str, ...] = ()

    @property
    def free_wasabi(self) -> int:
        return self.cards.count(WASABI) - len(self.dipped)

    @property
    def chopsticks(self) -> int:
        return self.cards.count(CHOPSTICKS)


class Pick(NamedTuple):
    """A seat's pick (S4): one card, or two in order with chopsticks (S6); the controller of the
    dummy also names the dummy's card (S17); in zoch, ``use_wasabi`` may decline wasabi (S9).
    ``by`` says who made a pick the seat's player did not send: ``bot`` or ``clock``."""

    cards: tuple[str, ...]
    dummy_card: str | None = None
    use_wasabi: tuple[bool, ...] | None = None
    auto: bool = False
    by: str | None = None

    @property
    def chopsticks(self) -> bool:
        return len(self.cards) == 2

    @property
    def taken(self) -> tuple[str, ...]:
        """Every card this pick takes from the hand (the dummy's card included)."""
        return self.cards if self.dummy_card is None else (*self.cards, self.dummy_card)

    def to_json(self, seat: int | None = None, auto: bool = True) -> dict[str, Any]:
        """The pick as event data, with ``seat`` first if given and ``auto`` (and ``by``, if
        set) unless told not."""
        data: dict[str, Any] = {} if seat is None else {"seat": seat}
        data["cards"] = list(self.cards)
        data["chopsticks"] = len(self.cards) == 2
        if self.dummy_card is not None:
            data["dummy_card"] = self.dummy_card
        if self.use_wasabi is not None:
            data["use_wasabi"] = list(self.use_wasabi)
        if auto:
            data["auto"] = self.auto
            if self.by is not None:
                data["by"] = self.by
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Pick:
        wasabi: Any = data.get("use_wasabi")  # Any: mypyc refuses an inferred None
        return cls(
            tuple(data["cards"]),
            data.get("dummy_card"),
            wasabi if wasabi is None else tuple(wasabi),
            data.get("auto", False),
            data.get("by"),
        )


class State(NamedTuple):
    version: int = 0  # events folded so far
    rules: Rules | None = None
    seed_commitment: str = ""
    names: tuple[str | None, ...] = ()  # seats taken, in seat order (None: left, free again)
    started: bool = False
    over: bool = False
    round: int = 0  # 1..3
    turn: int = 0  # 1.. within the round
    turns_played: int = 0  # across the game: who controls the dummy (S17)
    hands: tuple[tuple[str, ...], ...] = ()  # per player seat
    dummy_pile: tuple[str, ...] = ()  # S17: face down, drawn from the top
    picks: tuple[Pick | None, ...] = ()  # this turn's recorded, unrevealed picks
    tableaux: tuple[Tableau, ...] = ()  # per scored seat (players, then the dummy)
    puddings: tuple[int, ...] = ()  # per scored seat, kept across rounds (S3)
    discard: tuple[str, ...] = ()  # cards discarded after scoring a round (S3)
    dealt: int = 0  # cards dealt from the shuffled deck so far (S3: never reshuffled)
    round_scores: tuple[tuple[dict[str, Any], ...], ...] = ()  # per round, per scored seat
    # The tableaux as the last scored round ended (its last reveal): the next round starts
    # empty, and a client shows the round's outcome beside the cards that earned it.
    last_tableaux: tuple[Tableau, ...] = ()
    pudding_scores: tuple[dict[str, Any], ...] = ()
    totals: tuple[int, ...] = ()
    winners: tuple[int, ...] = ()
    seed: str | None = None  # revealed by the last event (S18)
    bot_seats: tuple[BotSeat, ...] = ()  # seats reserved for bots at creation, in seat order
    turn_seconds: int | None = None  # the turn clock, enforced by the service
    name_rule: int = 0  # domain/names.py: 0 for games created before names were checked
    seated_at: tuple[int, ...] = ()  # per seat: the version of its seat_taken (0: free)
    taken_over: tuple[tuple[int, str], ...] = ()  # (seat, reason) the greedy bot plays
    cancelled: bool = False  # game_cancelled: the seats did not fill in time
    # per seat: the account holding it (issue 35; None: anonymous, a bot or free)
    accounts: tuple[str | None, ...] = ()
    rated: bool = False  # counts for its players' ratings (issue 37, domain/ratings.py)

    @property
    def bots(self) -> dict[int, str]:
        """Bot seat -> kind of bot."""
        return {bot.seat: bot.kind for bot in self.bot_seats}

    @property
    def status(self) -> str:
        if self.rules is None:
            return "new"
        if self.cancelled:
            return "cancelled"
        if self.over:
            return "over"
        return "playing" if self.started else "waiting"

    @property
    def dummy_seat(self) -> int | None:
        """The dummy's index among scored seats, if it plays."""
        return self.rules.players if self.rules is not None and self.rules.dummy else None

    @property
    def controller(self) -> int | None:
        """The seat controlling the dummy this turn: seat 0 first, alternating every turn (S17)."""
        rules = self.rules
        if rules is None or not rules.dummy or not self.started or self.over:
            return None
        return self.turns_played % 2


# Field positions, for the hot paths of deciding and folding (issue 15): ``state[HANDS]`` costs
# a fraction of ``state.hands`` (a named field of a NamedTuple is looked up on its class).
# Literals, so that type checkers know each field's type; checked against State right below.
VERSION: Final = 0
RULES: Final = 1
STARTED: Final = 4
OVER: Final = 5
ROUND: Final = 6
TURN: Final = 7
TURNS_PLAYED: Final = 8
HANDS: Final = 9
DUMMY_PILE: Final = 10
PICKS: Final = 11
TABLEAUX: Final = 12
BOT_SEATS: Final = 22
TAKEN_OVER: Final = 26
_POSITIONS = {"version": VERSION, "rules": RULES, "started": STARTED, "over": OVER,
              "round": ROUND, "turn": TURN, "turns_played": TURNS_PLAYED, "hands": HANDS,
              "dummy_pile": DUMMY_PILE, "picks": PICKS, "tableaux": TABLEAUX,
              "bot_seats": BOT_SEATS, "taken_over": TAKEN_OVER}  # fmt: skip
if any(State._fields[at] != name for name, at in _POSITIONS.items()):
    raise ImportError("a State field moved: update the positions above")

_FIELD_INDEX = {name: index for index, name in enumerate(State._fields)}


def replace(state: State, **changes: Any) -> State:
    """``state._replace(**changes)``, about twice as fast: folding a game makes ~150 of these."""
    values = list(state)
    for name, value in changes.items():
        values[_FIELD_INDEX[name]] = value
    return tuple.__new__(State, values)
