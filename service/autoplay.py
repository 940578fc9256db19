"""Moves the service makes itself: bots move as soon as a turn needs them, and the turn clock
moves for seats whose time ran out. Pure: decided in memory, appended by the caller.

``run`` executes a command (a person's join or pick, a creation, or nothing) and then every move
a bot owes, in order, until the game waits for a person or is over; with ``expired`` (a timed
out turn), first a move for every seat that turn still waits for: a bot seat's own bot, else the
clock's (``greedy``, marked ``by: clock``). Seats taken over (resigned or stalled) are played by
the greedy bot like bot seats. Every move is an ordinary command, so one append records them
all, all or nothing, and the audit re-decides them like any other.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from domain.bots import CLOCK_KIND, MAX_BOT_MOVES, bot_command
from domain.decider import BY_BOT, BY_CLOCK, Command, Event, Game, MakeMove
from service.games.registry import GameAdapter


@dataclass(frozen=True)
class Outcome:
    events: list[Event]
    state: Any
    # Set when the events leave the game at a new turn: (the version at which that turn opened
    # for moves — its deal or reveal, or the automatic picks (S5) right after it —, its seconds,
    # its kind): the turn_deadlines row to append with them. ``turn``: the turn clock's;
    # ``stall``: a game without a clock (or with a longer one) is taken over after
    # ``stall_seconds`` (service/live/clock.py).
    deadline: tuple[int, int, str] | None
    timeouts: int  # moves made for seats whose time ran out


_NOT_EXPIRED = object()


def run(
    adapter: GameAdapter,
    state: Any,
    seed: bytes,
    commands: Iterable[Command] = (),
    expired: Hashable = _NOT_EXPIRED,
    stall_seconds: int | None = None,
) -> Outcome:
    """``commands``, then the clock's moves for turn ``expired`` (if it is still the turn), then
    the bots' moves; the events, the state after them, and the deadline row they need (a new
    turn gets a ``stall`` row after ``stall_seconds`` unless its clock is sooner)."""
    game = adapter.game
    queue = list(commands)
    events: list[Event] = []
    turn, started, timeouts = adapter.turn(state), None, 0
    for _ in range(MAX_BOT_MOVES):
        if queue:
            command: Command | None = queue.pop(0)
        elif expired is not _NOT_EXPIRED and turn == expired and awaiting(game, state):
            command = _timeout(game, state, seed)
            timeouts += 1
        else:
            command = bot_command(game, state, seed) if has_bots(game) else None
        if command is None:
            break
        produced, state = game.execute(state, command)
        events.extend(produced)
        if adapter.turn(state) != turn:
            turn, started = adapter.turn(state), state.version
    else:
        raise RuntimeError(f"bots made {MAX_BOT_MOVES} moves without the game waiting for anyone")
    deadline = None
    if started is not None and awaiting(game, state):
        deadline = _deadline(started, turn_seconds(game, state), stall_seconds)
    return Outcome(events, state, deadline, timeouts)


def _deadline(
    started: int, seconds: int | None, stall_seconds: int | None
) -> tuple[int, int, str] | None:
    """The row of a new turn: its clock's, unless the stall limit comes first."""
    if seconds and (stall_seconds is None or seconds <= stall_seconds):
        return (started, seconds, "turn")
    if stall_seconds:
        return (started, stall_seconds, "stall")
    return None


def _timeout(game: Game[Any], state: Any, seed: bytes) -> MakeMove:
    seat = awaiting(game, state)[0]
    kind = game.bots(state).get(seat)
    if kind is None:
        return MakeMove(seat, game.bot_move(state, seat, CLOCK_KIND, seed, BY_CLOCK), seed)
    return MakeMove(seat, game.bot_move(state, seat, kind, seed, BY_BOT), seed)


# A game that does not implement the bot part of domain.decider.Game (yet) has no bots and no
# clock: the service stays usable for it.


def has_bots(game: Game[Any]) -> bool:
    return hasattr(game, "bot_move")


def awaiting(game: Game[Any], state: Any) -> Sequence[int]:
    return game.awaiting(state) if has_bots(game) else ()


def bots(game: Game[Any], state: Any) -> Mapping[int, str]:
    return game.bots(state) if has_bots(game) else {}


def turn_seconds(game: Game[Any], state: Any) -> int | None:
    return game.turn_seconds(state) if has_bots(game) else None


def taken_over(game: Game[Any], state: Any) -> Mapping[int, str]:
    return game.taken_over(state) if hasattr(game, "taken_over") else {}


def cancels(game: Game[Any]) -> bool:
    """Whether the game can be cancelled (``CancelGame``) and its seats left or taken over."""
    return hasattr(game, "cancelled")
