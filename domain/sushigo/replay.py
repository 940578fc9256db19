"""The commands behind a recorded game, for replaying it (S18): every event of a game is either
caused by a command (``game_created``, a person's ``seat_taken``, a ``card_picked`` that is not
``auto`` — the seat's own, a bot's, the clock's or the greedy bot's for a seat taken over;
``seat_left``, ``seat_taken_over``, ``game_cancelled``) or follows from one (bots taking their
reserved seats, the start, deals, reveals, automatic last picks, scoring, the end)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ..decider import (
    GAME_CANCELLED,
    GAME_CREATED,
    GAME_ENDED,
    GAME_STARTED,
    SEAT_LEFT,
    SEAT_TAKEN,
    SEAT_TAKEN_OVER,
    Command,
    Event,
    MakeMove,
    TakeSeat,
)
from ..lifecycle import create_command, lifecycle_command
from .game import CARD_PICKED, ROUND_DEALT, ROUND_SCORED, TURN_REVEALED
from .state import Pick
from .upcast import upcast as upcast_event

EVENT_TYPES = frozenset(
    {
        GAME_CREATED,
        SEAT_TAKEN,
        GAME_STARTED,
        ROUND_DEALT,
        CARD_PICKED,
        TURN_REVEALED,
        ROUND_SCORED,
        GAME_ENDED,
        SEAT_LEFT,
        SEAT_TAKEN_OVER,
        GAME_CANCELLED,
    }
)


def upcast(event: Event) -> Event:
    """``event`` in the current schema; a type Sushi Go! does not record is refused."""
    if event.type not in EVENT_TYPES:
        raise ValueError(f"unknown Sushi Go! event type {event.type!r}")
    return upcast_event(event)


def commands(events: Sequence[Event], seed: bytes) -> Iterator[tuple[int, Command]]:
    """``(index of the event it produced first, command)`` for every command behind ``events``.
    A pick the service made itself (S5, ``auto``) is a consequence, not a command; a bot's or
    the clock's pick (``by``) is a command, re-decided by the rules like any other."""
    for index, event in enumerate(events):
        data = event.data
        if event.type == GAME_CREATED:
            yield index, create_command(data, seed)
        elif event.type == SEAT_TAKEN and "bot" not in data:
            yield index, TakeSeat(data["name"], seed, data.get("account"))
        elif event.type == CARD_PICKED and not data.get("auto"):
            yield index, MakeMove(data["seat"], Pick.from_json(dict(data)), seed)
        elif (command := lifecycle_command(event, seed)) is not None:
            yield index, command
