"""The part of deciding that every game shares: creating a game, taking seats in order (bots
take theirs as soon as the seats before them are taken), and starting it when the last seat is
taken. A game supplies its rules parser, its bot kinds and what starting means (its deal)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from . import names
from .bots import bots_from_json, bots_to_json, check_bots, check_turn_seconds
from .decider import (
    GAME_CREATED,
    GAME_STARTED,
    SEAT_TAKEN,
    CreateGame,
    Event,
    TakeSeat,
    conflict,
)

S = TypeVar("S")


class Log(Generic[S]):
    """The events decided so far and the state they lead to."""

    def __init__(self, state: S, evolve: Callable[[S, Event], S]) -> None:
        self.state = state
        self.events: list[Event] = []
        self._evolve = evolve

    def record(self, event: Event, after: S | None = None) -> None:
        """Add ``event``; ``after`` is the state it leads to, when the caller already built it."""
        self.events.append(event)
        self.state = self._evolve(self.state, event) if after is None else after


Start = Callable[[Log[Any], bytes], None]  # deal (and whatever else begins play)


def create(
    log: Log[Any],
    command: CreateGame,
    *,
    game: str,
    parse_rules: Callable[[Any], Any],
    bot_kinds: Sequence[str],
    shuffle: str,
    start: Start,
) -> None:
    """``game_created``: the rules, the seed commitment (S18/Q2), bots and the turn clock only
    when used (games without them record what they always did)."""
    if log.state.rules is not None:
        raise conflict("game_exists", "this game has already been created")
    rules = parse_rules(command.options)
    bots = check_bots(command.bots, rules.players, bot_kinds, command.name_rule)
    seconds = check_turn_seconds(command.turn_seconds)
    data: dict[str, Any] = {
        "game": game,
        "rules": rules.to_json(),
        "seed_commitment": command.seed_commitment,
        "shuffle": shuffle,
    }
    if bots:
        data["bots"] = bots_to_json(bots)
    if seconds is not None:
        data["turn_seconds"] = seconds
    if command.name_rule:
        data["name_rule"] = command.name_rule
    log.record(Event(GAME_CREATED, data))
    seat_bots(log, command.seed, start)


def take_seat(log: Log[Any], command: TakeSeat, start: Start) -> None:
    """The next free seat, for ``command.name``."""
    state = log.state
    if state.rules is None:
        raise conflict("game_not_created", "this game has not been created")
    if state.started or state.over:
        raise conflict("game_full", "every seat of this game is taken")
    name = command.name
    if state.name_rule:
        name = names.normalise(name)
        names.check_unlike(name, seat_names(state))
    log.record(Event(SEAT_TAKEN, {"seat": len(state.names), "name": name}))
    seat_bots(log, command.seed, start)


def seat_names(state: Any) -> list[tuple[int, str]]:
    """Every seat's name so far: the seats taken and the seats reserved for bots."""
    taken = list(enumerate(state.names))
    return taken + [(b.seat, b.name) for b in state.bot_seats if b.seat >= len(taken)]


def create_command(data: Any, seed: bytes) -> CreateGame:
    """The command behind a recorded ``game_created`` (for replays and the audit)."""
    return CreateGame(
        data["rules"],
        data["seed_commitment"],
        seed,
        bots_from_json(data.get("bots")),
        data.get("turn_seconds"),
        data.get("name_rule", 0),
    )


def seat_bots(log: Log[Any], seed: bytes, start: Start) -> None:
    """Bots take their reserved seats as soon as every seat before them is taken (so seats are
    always taken in seat order); the last seat taken starts the game."""
    bots = {bot.seat: bot for bot in log.state.bot_seats}
    while (seat := len(log.state.names)) in bots:
        bot = bots[seat]
        log.record(Event(SEAT_TAKEN, {"seat": seat, "name": bot.name, "bot": bot.kind}))
    if len(log.state.names) == log.state.rules.players:
        log.record(Event(GAME_STARTED, {"seats": list(log.state.names)}))
        start(log, seed)


# --- evolving: the lifecycle facts every game's state records the same way ---------------------


def on_created(state: Any, data: Any, version: int, *, parse_rules: Callable[[Any], Any]) -> Any:
    """``game_created``: the rules, the seed commitment, reserved bot seats, the turn clock."""
    return _replace(
        state,
        version=version,
        rules=parse_rules(data["rules"]),
        seed_commitment=data["seed_commitment"],
        bot_seats=bots_from_json(data.get("bots")),
        turn_seconds=data.get("turn_seconds"),
        name_rule=data.get("name_rule", 0),
    )


def on_seat_taken(state: Any, data: Any, version: int) -> Any:
    """``seat_taken``: seats are taken in seat order, so the name goes last."""
    return _replace(state, version=version, names=(*state.names, data["name"]))


def _replace(state: Any, **changes: Any) -> Any:
    """``state._replace(**changes)`` for a game's NamedTuple state, several times cheaper."""
    fields = type(state)._fields
    values = list(state)
    for name, value in changes.items():
        values[fields.index(name)] = value
    return tuple.__new__(type(state), values)
