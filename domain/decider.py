"""The game-independent shape every game implements: a decider, views and domain errors.

A game is a *decider* (Jérémie Chassaing's pattern):

- ``initial_state()`` is the state before any event;
- ``decide(state, command) -> list[Event]`` validates a command and returns the events it causes,
  or raises :class:`DomainError`;
- ``evolve(state, event) -> state`` applies one event; a game's state is the fold of its events.

Both functions are pure: no clock, no I/O, and no randomness but the seed a command carries.

Every game uses the same lifecycle commands and lifecycle event types, so that storage and HTTP
never need to know which game they serve:

- :class:`CreateGame` -> ``game_created`` (the first event: rules, seats, seed commitment);
- :class:`TakeSeat` -> ``seat_taken``, and when the last seat is taken ``game_started`` followed by
  whatever the game deals; seats reserved for bots (``CreateGame.bots``) are taken right after
  the seat before them (by ``CreateGame`` itself when they come first), each a ``seat_taken``
  with ``bot``: consequences, not commands;
- :class:`MakeMove` -> the game's own move events; the last one of a game is ``game_ended``, which
  reveals the seed;
- :class:`LeaveSeat` -> ``seat_left`` (before the start: the seat is free again);
- :class:`TakeOver` -> ``seat_taken_over`` (after the start: the greedy bot plays a person's
  seat from then on, because its player resigned or because it stalled the game);
- :class:`CancelGame` -> ``game_cancelled`` (a waiting game whose seats did not fill in time; it
  reveals the seed like ``game_ended``, and nothing follows it).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol, TypeVar

# Lifecycle event types shared by every game (the store lists games by them).
GAME_CREATED = "game_created"
SEAT_TAKEN = "seat_taken"
GAME_STARTED = "game_started"
GAME_ENDED = "game_ended"
SEAT_LEFT = "seat_left"  # a person gave their seat up before the start
SEAT_TAKEN_OVER = "seat_taken_over"  # the greedy bot plays a person's seat from now on
GAME_CANCELLED = "game_cancelled"  # a waiting game whose seats did not fill in time
FINAL_EVENTS = frozenset({GAME_ENDED, GAME_CANCELLED})  # nothing follows them; the seed is out


class Event(NamedTuple):
    """One immutable fact. ``data`` is plain JSON-serialisable data."""

    type: str
    data: Mapping[str, Any]
    schema_version: int = 1

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "schema_version": self.schema_version, "data": self.data}


# --- commands ---------------------------------------------------------------------------------

NAME_RULE = 2  # the seat names rule new games are created under (domain/names.py)


class BotSeat(NamedTuple):
    """A seat played by one of the game's built-in bots (``kind``: every game has ``random``
    and ``greedy``), reserved when the game is created and taken as soon as the seats before
    it are: ``seat_taken`` then says ``bot``."""

    seat: int
    kind: str
    name: str


class CreateGame(NamedTuple):
    """Create a game with ``options`` (the game's rules) and the SHA-256 commitment of its seed.

    ``bots`` reserve seats for bots; ``turn_seconds`` times every turn (the service enforces it:
    the domain only records it). ``seed`` deals when bots take every seat at creation.
    ``name_rule``: the seat names rule the game is created under (recorded in
    ``game_created``; see domain/names.py). ``rated``: the game counts for its players' ratings
    (issue 37, domain/ratings.py): every person's seat must be an account's.
    ``last_card_auto``: Sushi Go! (zoch) picks every last one-card hand automatically (S5, S9's
    default; issue 39); False re-decides a game created before, whose ``game_created`` does not
    record it."""

    options: Mapping[str, Any]
    seed_commitment: str
    seed: bytes = b""
    bots: tuple[BotSeat, ...] = ()
    turn_seconds: int | None = None
    # NAME_RULE; 1: the light table before UTS #39; 0: a game created before names were checked
    name_rule: int = 2
    rated: bool = False
    last_card_auto: bool = True


class TakeSeat(NamedTuple):
    """Take the next free seat. ``seed``, the game's secret, deals if this seat starts the game.
    ``account``: the account the seat is taken for; one account holds at most one seat a game."""

    name: str
    seed: bytes
    account: str | None = None  # the account taking the seat (issue 35), recorded with it


class MakeMove(NamedTuple):
    """A seat's move. ``move`` is the game's own move object; ``seed`` lets the decider deal.
    A move the service makes for a seat says so in the move object: ``by`` is ``BY_BOT`` (a
    bot's seat) or ``BY_CLOCK`` (a seat whose time ran out), and the event records it."""

    seat: int
    move: Any
    seed: bytes


class LeaveSeat(NamedTuple):
    """A person gives up ``seat`` before the start: it is free again (``seat_left``)."""

    seat: int


class TakeOver(NamedTuple):
    """The greedy bot plays ``seat`` from now on (``seat_taken_over``), its moves marked ``by``
    ``reason``: ``BY_RESIGNED`` (the seat's player resigned) or ``BY_STALLED`` (the seat had
    not moved for ``idle_seconds`` of the ``limit_seconds`` allowed; the service measures
    both, the rules only compare them)."""

    seat: int
    reason: str
    idle_seconds: int | None = None
    limit_seconds: int | None = None


class CancelGame(NamedTuple):
    """Cancel a waiting game that has waited ``waited_seconds`` of the ``limit_seconds`` allowed
    for its seats to fill (``game_cancelled``, which reveals ``seed``: nothing was dealt)."""

    waited_seconds: int
    limit_seconds: int
    seed: bytes


Command = CreateGame | TakeSeat | MakeMove | LeaveSeat | TakeOver | CancelGame

BY_BOT = "bot"  # a move made by a bot seat's bot
BY_CLOCK = "clock"  # a move made for a seat whose turn timed out (by the greedy bot)
BY_RESIGNED = "resigned"  # a move made for a seat whose player resigned (by the greedy bot)
BY_STALLED = "stalled"  # a move made for a seat taken over for not moving (by the greedy bot)
TAKE_OVER_REASONS = (BY_RESIGNED, BY_STALLED)


# --- viewers ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Viewer:
    """Who is looking: a seat (``seat`` set) or a spectator (``seat`` is None). ``everything``
    is for looking back at a game that is over: then all of it is public, past states too."""

    seat: int | None = None
    everything: bool = False

    @property
    def is_spectator(self) -> bool:
        return self.seat is None


SPECTATOR = Viewer()


# --- errors -----------------------------------------------------------------------------------


@dataclass
class DomainError(Exception):
    """A command the rules refuse. ``code`` is stable and machine-readable.

    ``kind`` says why, so that an adapter can map it (to HTTP, say) without knowing every code:
    ``conflict``  the command does not fit the game's state (not started, over, already picked);
    ``rule``      the command breaks a rule of the game (card not in hand, bad rules);
    ``forbidden`` the command names a seat that cannot act here.
    """

    code: str
    message: str
    kind: str = "rule"
    details: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        super().__init__(self.message)

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


def conflict(code: str, message: str, **details: Any) -> DomainError:
    return DomainError(code, message, "conflict", details)


def rule_broken(code: str, message: str, **details: Any) -> DomainError:
    return DomainError(code, message, "rule", details)


def forbidden(code: str, message: str, **details: Any) -> DomainError:
    return DomainError(code, message, "forbidden", details)


def commitment(seed: bytes) -> str:
    """The published commitment to a secret seed: its SHA-256, hex-encoded (S18)."""
    return hashlib.sha256(seed).hexdigest()


# --- the shape a game implements --------------------------------------------------------------

S = TypeVar("S")


class Game(Protocol[S]):
    """What a game module provides. Storage and HTTP use only this."""

    @property
    def name(self) -> str: ...

    def initial_state(self) -> S: ...

    def decide(self, state: S, command: Command) -> list[Event]: ...

    def evolve(self, state: S, event: Event) -> S: ...

    def execute(self, state: S, command: Command) -> tuple[list[Event], S]:
        """``decide`` and the state its events lead to (which deciding computes anyway)."""
        ...

    def view(self, state: S, viewer: Viewer) -> dict[str, Any]:
        """What ``viewer`` may see of ``state`` (everything, once the game is over)."""
        ...

    def visible_event(self, state: S, event: Event, viewer: Viewer) -> Event:
        """``event`` as ``viewer`` may read it, hidden parts removed, in the current ``state``."""
        ...

    def score_sheet(self, state: S) -> dict[str, Any]: ...

    def is_over(self, state: S) -> bool: ...

    def seat_count(self, state: S) -> int: ...

    # --- bots and the turn clock (game-independent: the service drives them) -----------------

    def awaiting(self, state: S) -> Sequence[int]:
        """The seats whose move the game waits for now (none before the start or once over)."""
        ...

    def bots(self, state: S) -> Mapping[int, str]:
        """Bot seats (reserved or taken) and the kind of bot playing each."""
        ...

    def turn_seconds(self, state: S) -> int | None:
        """The time a seat has for each move, as recorded at creation; None: untimed."""
        ...

    def taken_over(self, state: S) -> Mapping[int, str]:
        """People's seats the greedy bot plays from now on, and why (``TakeOver.reason``)."""
        ...

    def cancelled(self, state: S) -> bool:
        """Whether the game was cancelled before it started (``game_cancelled``)."""
        ...

    def bot_move(self, state: S, seat: int, kind: str, seed: bytes, by: str = BY_BOT) -> Any:
        """The move bot ``kind`` makes for awaiting ``seat``, marked ``by`` (BY_BOT or BY_CLOCK).
        Pure and deterministic: any randomness comes from ``seed`` and ``state`` (see
        ``domain.bots.bot_random``), so a retried append decides the same move."""
        ...

    # --- replay and audit (S18) ---------------------------------------------------------------

    def upcast(self, event: Event) -> Event:
        """``event`` in the current schema of its type; raises ValueError for a type (or schema
        version) this game does not know."""
        ...

    def commands(self, events: Sequence[Event], seed: bytes) -> Iterator[tuple[int, Command]]:
        """The commands that produced ``events`` (upcast, in version order), each with the index
        of the first event it produced. Executing them in order from ``initial_state()`` with
        the revealed ``seed`` must give back exactly ``events``."""
        ...

    def provenance(self, events: Sequence[Event]) -> list[dict[str, Any]]:
        """Where every scored point of ``events`` comes from, one section per scoring event:
        ``{"kind", "version", "seats": [{"seat", "name", "points", "recorded",
        "categories": [{"category", "points", "rules", "cards", …}], "recorded_total"?}]}``
        (``recorded``: what the event at ``version`` records; ``recorded_total``: the final
        total the last event records)."""
        ...


def fold(game: Game[S], events: Sequence[Event], state: S | None = None) -> S:
    """The state after ``events`` (from ``state``, or from the beginning). A game may fold
    faster than event by event (``GamePackage.fold``); it must give what ``evolve`` gives."""
    fast = getattr(game, "fold", None)
    if fast is not None:
        result: S = fast(events, state)
        return result
    evolve = game.evolve
    current = game.initial_state() if state is None else state
    for event in events:
        current = evolve(current, event)
    return current


@dataclass(frozen=True)
class GamePackage:
    """A game made of its package's functions: the ``Game`` protocol as plain data, so that a
    game's ``__init__`` only names its functions (see domain/sushigo/__init__.py)."""

    name: str
    initial_state: Callable[[], Any]
    decide: Callable[[Any, Command], list[Event]]
    execute: Callable[[Any, Command], tuple[list[Event], Any]]
    evolve: Callable[[Any, Event], Any]
    view: Callable[[Any, Viewer], dict[str, Any]]
    visible_event: Callable[[Any, Event, Viewer], Event]
    score_sheet: Callable[[Any], dict[str, Any]]
    awaiting: Callable[[Any], list[int]]
    bot_move: Callable[..., Any]
    upcast: Callable[[Event], Event]
    commands: Callable[[Sequence[Event], bytes], Iterator[tuple[int, Command]]]
    provenance: Callable[[Sequence[Event]], list[dict[str, Any]]]
    # ``fold(events, state)``: the state after ``events`` (from ``state``; None: the start),
    # equal to evolving them one by one, only faster; None: ``decider.fold`` evolves them.
    fold: Callable[[Sequence[Event], Any], Any] | None = None

    # What every game's state has (see the states' fields of the same names).
    @staticmethod
    def is_over(state: Any) -> bool:
        return bool(state.over)

    @staticmethod
    def seat_count(state: Any) -> int:
        return int(state.rules.players) if state.rules else 0

    @staticmethod
    def bots(state: Any) -> Mapping[int, str]:
        bots: Mapping[int, str] = state.bots
        return bots

    @staticmethod
    def taken_over(state: Any) -> Mapping[int, str]:
        """Seats the greedy bot plays for their person (seat -> ``BY_RESIGNED``/``BY_STALLED``)."""
        return dict(state.taken_over)

    @staticmethod
    def cancelled(state: Any) -> bool:
        return bool(state.cancelled)

    @staticmethod
    def turn_seconds(state: Any) -> int | None:
        seconds: int | None = state.turn_seconds
        return seconds
