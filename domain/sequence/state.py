"""The state of a Sequence game (the fold of its events) and the moves a seat can make.

Immutable named tuples with a fast ``replace``, like Sushi Go!'s state: a game folds a few hundred
events."""

from __future__ import annotations

from typing import Any, NamedTuple

from ..decider import BotSeat
from .board import SIZE, Cell
from .cards import CANONICAL_DECK
from .rules import Rules
from .sequences import EMPTY, Run, team_counts

EMPTY_BOARD: tuple[int, ...] = (EMPTY,) * (SIZE * SIZE)


# --- moves --------------------------------------------------------------------------------------


class Play(NamedTuple):
    """Q6: play ``card`` on ``cell``: a chip on it (a card showing there, or a two-eyed jack on
    any empty non-corner cell), or with a one-eyed jack the chip on it removed. Every move has
    ``by``: None for the seat's player, ``bot`` or ``clock`` when the service moved for it."""

    card: str
    cell: Cell
    by: str | None = None


class Discard(NamedTuple):
    """Q7: discard a dead card and draw a replacement; the turn goes on (a separate move, so that
    the replacement can be played in the same turn)."""

    card: str
    by: str | None = None


class Pass(NamedTuple):
    """Q8: no legal play this turn."""

    by: str | None = None


Move = Play | Discard | Pass


# --- the state ----------------------------------------------------------------------------------


class State(NamedTuple):
    version: int = 0  # events folded so far
    rules: Rules | None = None
    seed_commitment: str = ""
    names: tuple[str | None, ...] = ()  # seats taken, in seat order (None: left, free again)
    started: bool = False
    over: bool = False
    turn: int = 0  # 1, 2, … once dealt; a play or a pass ends a turn
    hands: tuple[tuple[str, ...], ...] = ()  # per seat, in the order the cards came
    chips: tuple[int, ...] = EMPTY_BOARD  # per cell (row * 10 + column): a team, or EMPTY
    runs: tuple[Run, ...] = ()  # every run holding a sequence (Q9/Q10), in line order
    discard: tuple[str, ...] = ()  # every card played or discarded since the last reshuffle
    # The draw pile (Q2, Q8) is hidden: the state keeps only where it comes from. ``pile_base`` is
    # what was shuffled into it (None: the canonical deck), from word ``pile_offset`` of the
    # seed's stream; ``pile_taken`` cards have been drawn from its top.
    pile_base: tuple[str, ...] | None = None
    pile_offset: int = 0
    pile_taken: int = 0
    reshuffles: int = 0
    discarded: bool = False  # Q7: the seat to move has discarded a dead card this turn
    passes: int = 0  # Q8: turns passed in a row
    result: str | None = None  # "win" or "draw", once over
    winning_team: int | None = None
    winners: tuple[int, ...] = ()
    totals: tuple[int, ...] = ()  # sequences per team, as the end records them
    seed: str | None = None  # revealed by the last event
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
    def current(self) -> int | None:
        """The seat whose turn it is: seat 0 first, then up the seats (Q4)."""
        if self.rules is None or not self.hands or self.over:
            return None
        return (self.turn - 1) % self.rules.players

    @property
    def pile_size(self) -> int:
        base = CANONICAL_DECK if self.pile_base is None else self.pile_base
        return len(base) - self.pile_taken

    def sequences(self) -> tuple[int, ...]:
        """Sequences per team (Q10)."""
        return team_counts(self.runs, self.rules.teams if self.rules else 0)

    def chip(self, cell: Cell) -> int:
        return self.chips[cell[0] * SIZE + cell[1]]


_FIELD_INDEX = {name: index for index, name in enumerate(State._fields)}


def replace(state: State, **changes: Any) -> State:
    """``state._replace(**changes)``, faster."""
    values = list(state)
    for name, value in changes.items():
        values[_FIELD_INDEX[name]] = value
    return tuple.__new__(State, values)
