"""The part of deciding that every game shares: creating a game, taking seats in order (bots
take theirs as soon as the seats before them are taken), and starting it when the last seat is
taken; leaving a seat before the start, a person's seat taken over by the greedy bot after it
(resigned or stalled), and cancelling a game whose seats did not fill in time. A game supplies
its rules parser, its bot kinds and what starting means (its deal)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Generic, TypeVar

from . import names
from .bots import bots_from_json, bots_to_json, check_bots, check_turn_seconds
from .decider import (
    BY_STALLED,
    GAME_CANCELLED,
    GAME_CREATED,
    GAME_STARTED,
    SEAT_LEFT,
    SEAT_TAKEN,
    SEAT_TAKEN_OVER,
    TAKE_OVER_REASONS,
    CancelGame,
    Command,
    CreateGame,
    Event,
    LeaveSeat,
    TakeOver,
    TakeSeat,
    commitment,
    conflict,
    forbidden,
    rule_broken,
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
    recorded: Callable[[Any, CreateGame], Mapping[str, Any]] | None = None,
) -> None:
    """``game_created``: the rules, the seed commitment (S18/Q2), bots and the turn clock only
    when used (games without them record what they always did); ``recorded`` adds what a game
    records beside its rules (given the parsed rules and the command)."""
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
    if command.rated:  # an unrated game records what it always did
        _check_rated(rules.players, bots)
        data["rated"] = True
    if recorded is not None:
        data.update(recorded(rules, command))
    log.record(Event(GAME_CREATED, data))
    seat_bots(log, command.seed, start)


def _check_rated(players: int, bots: Sequence[Any]) -> None:
    """A rated game rates people: at least one seat must be a person's (issue 37)."""
    if len(bots) >= players:
        raise rule_broken(
            "invalid_rated",
            "a rated game needs at least one seat for a person: bots alone are not rated",
        )


def take_seat(log: Log[Any], command: TakeSeat, start: Start) -> None:
    """The first free seat (a seat left before the start is free again), for ``command.name``."""
    state = log.state
    if state.rules is None:
        raise conflict("game_not_created", "this game has not been created")
    _check_not_cancelled(state)
    if state.started or state.over:
        raise conflict("game_full", "every seat of this game is taken")
    if command.account is not None:
        _check_one_seat(state, command.account)
    elif getattr(state, "rated", False):
        raise forbidden(
            "account_required",
            "this game is rated: every person's seat is an account's; take the seat with an"
            " account token ('Authorization: Bearer cardroom_pat_...', scope play; POST"
            " /accounts creates an account)",
        )
    name = command.name
    if state.name_rule:
        name = names.normalise(name, state.name_rule)
        names.check_unlike(name, seat_names(state), state.name_rule)
    data: dict[str, Any] = {"seat": first_free(state.names), "name": name}
    if command.account is not None:  # a seat without an account records what it always did
        data["account"] = command.account
    log.record(Event(SEAT_TAKEN, data))
    seat_bots(log, command.seed, start)


def _check_one_seat(state: Any, account: str) -> None:
    """One account holds at most one seat of a game (issue 35)."""
    held = getattr(state, "accounts", ())
    if account in held:
        seat = held.index(account)
        raise conflict(
            "already_seated",
            f"this account already holds seat {seat} of this game: act for it with the"
            " account's token",
            seat=seat,
        )


def first_free(seats: Sequence[str | None]) -> int:
    """The first seat nobody holds: one left before the start, else the next in seat order."""
    for seat, name in enumerate(seats):
        if name is None:
            return seat
    return len(seats)


def seat_names(state: Any) -> list[tuple[int, str]]:
    """Every seat's name so far: the seats taken (not those left) and the seats reserved for
    bots."""
    taken = [(seat, name) for seat, name in enumerate(state.names) if name is not None]
    return taken + [(b.seat, b.name) for b in state.bot_seats if b.seat >= len(state.names)]


def create_command(data: Any, seed: bytes) -> CreateGame:
    """The command behind a recorded ``game_created`` (for replays and the audit)."""
    return CreateGame(
        data["rules"],
        data["seed_commitment"],
        seed,
        bots_from_json(data.get("bots")),
        data.get("turn_seconds"),
        data.get("name_rule", 0),
        bool(data.get("rated", False)),
        bool(data.get("last_card_auto", False)),
    )


def seat_bots(log: Log[Any], seed: bytes, start: Start) -> None:
    """Bots take their reserved seats as soon as every seat before them is taken (so seats are
    always taken in seat order); the last seat taken starts the game."""
    bots = {bot.seat: bot for bot in log.state.bot_seats}
    while (seat := first_free(log.state.names)) in bots:
        bot = bots[seat]
        log.record(Event(SEAT_TAKEN, {"seat": seat, "name": bot.name, "bot": bot.kind}))
    if first_free(log.state.names) == log.state.rules.players:
        log.record(Event(GAME_STARTED, {"seats": list(log.state.names)}))
        start(log, seed)


def leave_seat(log: Log[Any], command: LeaveSeat) -> None:
    """``seat_left``: a person's seat is free again, while the game waits for its seats."""
    state, seat = log.state, command.seat
    if state.rules is None:
        raise conflict("game_not_created", "this game has not been created")
    _check_not_cancelled(state)
    if state.started or state.over:
        raise conflict(
            "game_started",
            "a seat can be left only before the start; once the game has started, resign"
            " instead (POST /games/{id}/resign): the greedy bot plays your seat from then on",
        )
    if not 0 <= seat < len(state.names) or state.names[seat] is None:
        raise forbidden("not_a_seat", f"seat {seat} is not taken in this game")
    if seat in {bot.seat for bot in state.bot_seats}:
        raise forbidden("bot_seat", f"seat {seat} is a bot's: it cannot be left")
    log.record(Event(SEAT_LEFT, {"seat": seat, "name": state.names[seat]}))


def take_over(log: Log[Any], command: TakeOver, awaiting: Sequence[int]) -> None:
    """``seat_taken_over``: the greedy bot plays a person's seat from now on. ``awaiting``: the
    seats the game waits for now (a stalled seat must be one of them, and have waited its
    limit)."""
    state, seat, reason = log.state, command.seat, command.reason
    if reason not in TAKE_OVER_REASONS:
        raise ValueError(f"a seat is taken over for one of {TAKE_OVER_REASONS}, not {reason!r}")
    _check_not_cancelled(state)
    if not state.started:
        raise conflict(
            "game_not_started",
            "resigning is for a game that has started; before the start, leave the seat"
            " instead (POST /games/{id}/leave)",
        )
    if state.over:
        raise conflict("game_over", "the game is over")
    if not 0 <= seat < len(state.names):
        raise forbidden("not_a_seat", f"seat {seat} does not play in this game")
    if seat in {bot.seat for bot in state.bot_seats}:
        raise forbidden("bot_seat", f"seat {seat} is a bot's: it cannot be taken over")
    taken = dict(state.taken_over)
    if seat in taken:
        raise conflict(
            "seat_taken_over",
            f"seat {seat} is already played by the greedy bot ({taken[seat]})",
        )
    data: dict[str, Any] = {"seat": seat, "reason": reason}
    if reason == BY_STALLED:
        idle, limit = command.idle_seconds, command.limit_seconds
        if seat not in awaiting or idle is None or limit is None or idle < limit:
            raise conflict("not_stalled", f"seat {seat} has not stalled the game")
        data.update(idle_seconds=idle, limit_seconds=limit)
    log.record(Event(SEAT_TAKEN_OVER, data))


def cancel(log: Log[Any], command: CancelGame) -> None:
    """``game_cancelled``: a waiting game whose seats did not fill within its limit. It reveals
    the seed (nothing was dealt from it), so that an audit can replay the game like any other."""
    state = log.state
    if state.rules is None:
        raise conflict("game_not_created", "this game has not been created")
    _check_not_cancelled(state)
    if state.started or state.over:
        raise conflict("game_started", "a game that has started is not cancelled")
    if command.waited_seconds < command.limit_seconds:
        raise conflict("not_due", "the game has not waited its limit for its seats to fill")
    if commitment(command.seed) != state.seed_commitment:
        raise ValueError("the seed given does not match the game's commitment")
    data = {
        "reason": "not_filled",
        "waited_seconds": command.waited_seconds,
        "limit_seconds": command.limit_seconds,
        "seed": command.seed.hex(),
    }
    log.record(Event(GAME_CANCELLED, data))


def lifecycle_command(event: Event, seed: bytes) -> Command | None:
    """The command behind a ``seat_left``, ``seat_taken_over`` or ``game_cancelled`` (for the
    replay, domain/replay.py); None for any other event."""
    data = event.data
    if event.type == SEAT_LEFT:
        return LeaveSeat(data["seat"])
    if event.type == SEAT_TAKEN_OVER:
        idle, limit = data.get("idle_seconds"), data.get("limit_seconds")
        return TakeOver(data["seat"], data["reason"], idle, limit)
    if event.type == GAME_CANCELLED:
        return CancelGame(data["waited_seconds"], data["limit_seconds"], seed)
    return None


def _check_not_cancelled(state: Any) -> None:
    if getattr(state, "cancelled", False):  # a game may do without cancelling (minimal games)
        raise conflict(
            "game_cancelled",
            "this game was cancelled: its seats did not fill in time; create or join another",
        )


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
        # a state without the field (a minimal game) is never rated
        **({"rated": True} if data.get("rated") else {}),
    )


def on_seat_taken(state: Any, data: Any, version: int) -> Any:
    """``seat_taken``: the name goes to its seat (the first free one: last, unless a seat before
    it was left). ``seated_at`` keeps the version, which names the seat's token (its row)."""
    seat = data["seat"]
    if not hasattr(state, "seated_at"):  # a game without leaving (tests/test_minimal_game.py)
        return _replace(state, version=version, names=(*state.names, data["name"]))
    names, seated = list(state.names), list(state.seated_at)
    if seat == len(names):  # the common case
        names.append(data["name"])
        seated.append(version)
    else:
        names[seat], seated[seat] = data["name"], version
    changes = {"names": tuple(names), "seated_at": tuple(seated)}
    account = data.get("account")
    if account is not None or len(state.accounts) > seat:
        changes["accounts"] = _set_seat(state.accounts, seat, account)
    return _replace(state, version=version, **changes)


def _set_seat(
    accounts: tuple[str | None, ...], seat: int, account: str | None
) -> tuple[str | None, ...]:
    """``accounts`` with ``seat``'s account set (None-padded up to it)."""
    held = list(accounts) + [None] * (seat + 1 - len(accounts))
    held[seat] = account
    return tuple(held)


def on_seat_left(state: Any, data: Any, version: int) -> Any:
    """``seat_left``: the seat is free again (free seats at the end are dropped)."""
    names, seated = list(state.names), list(state.seated_at)
    names[data["seat"]], seated[data["seat"]] = None, 0
    while names and names[-1] is None:
        names.pop()
        seated.pop()
    changes = {"names": tuple(names), "seated_at": tuple(seated)}
    if len(state.accounts) > data["seat"]:  # the seat's account holds it no more
        changes["accounts"] = _set_seat(state.accounts, data["seat"], None)
    return _replace(state, version=version, **changes)


def on_taken_over(state: Any, data: Any, version: int) -> Any:
    """``seat_taken_over``: the seat's moves are the greedy bot's from now on."""
    taken = (*state.taken_over, (data["seat"], data["reason"]))
    return _replace(state, version=version, taken_over=taken)


def on_cancelled(state: Any, data: Any, version: int) -> Any:
    """``game_cancelled``: the game is over before it started (nothing follows it; status
    ``cancelled``); the seed is revealed."""
    return _replace(state, version=version, cancelled=True, over=True, seed=data["seed"])


def _replace(state: Any, **changes: Any) -> Any:
    """``state._replace(**changes)`` for a game's NamedTuple state, several times cheaper."""
    fields = type(state)._fields
    values = list(state)
    for name, value in changes.items():
        values[fields.index(name)] = value
    return tuple.__new__(type(state), values)
