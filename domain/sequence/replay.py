"""The commands behind a recorded Sequence game, for replaying it (Q2): ``game_created``,
a person's ``seat_taken``, ``card_played``, ``dead_card_discarded`` and a seat's own
``turn_passed``, ``seat_left``, ``seat_taken_over`` and ``game_cancelled`` each come from a
command (a bot's or the clock's move, ``by``, too); bots taking
their seats, the start, the deal, passes the service made (``auto``), sequences, reshuffles and
the end follow from them."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ..decider import GAME_CREATED, SEAT_TAKEN, Command, Event, MakeMove, TakeSeat
from ..lifecycle import create_command, lifecycle_command
from .game import CARD_PLAYED, DEAD_CARD_DISCARDED, EVENT_TYPES, TURN_PASSED
from .state import Discard, Pass, Play
from .upcast import upcast as upcast_event


def upcast(event: Event) -> Event:
    """``event`` in the current schema (upcast.py); a type Sequence does not record is refused."""
    if event.type not in EVENT_TYPES:
        raise ValueError(f"unknown Sequence event type {event.type!r}")
    return upcast_event(event)


def commands(events: Sequence[Event], seed: bytes) -> Iterator[tuple[int, Command]]:
    """``(index of the event it produced first, command)`` for every command behind ``events``."""
    for position, event in enumerate(events):
        data = event.data
        by = data.get("by")
        if event.type == GAME_CREATED:
            yield position, create_command(data, seed)
        elif event.type == SEAT_TAKEN and "bot" not in data:
            yield position, TakeSeat(data["name"], seed, data.get("account"))
        elif event.type == CARD_PLAYED:
            cell = data["cell"] if data["cell"] is not None else data["removed"]
            play = Play(data["card"], (cell[0], cell[1]), by)
            yield position, MakeMove(data["seat"], play, seed)
        elif event.type == DEAD_CARD_DISCARDED:
            yield position, MakeMove(data["seat"], Discard(data["card"], by), seed)
        elif event.type == TURN_PASSED and not data["auto"]:
            yield position, MakeMove(data["seat"], Pass(by), seed)
        elif (command := lifecycle_command(event, seed)) is not None:
            yield position, command
