"""The Sushi Go! decider: ``decide`` validates a command into events, ``evolve`` applies one.

Event types (schema version 1 unless said), in the order a game records them:

- ``game_created``  {game, rules, seed_commitment, shuffle, bots?, turn_seconds?, name_rule?,
                    last_card_auto? (zoch games since issue 39: every last card automatic)}
- ``seat_taken``    {seat, name, bot?} (``bot``: the kind of bot playing the seat)
- ``game_started``  {seats: [names]}
- ``round_dealt``   {round, deck_offset, hands: [[card…] per seat], dummy_pile: [card…] (dummy
                    variant only)} — schema version 2, see upcast.py
- ``card_picked``   {seat, round, turn, cards, chopsticks, dummy_card?, use_wasabi?, auto, by?}
                    (``by``: ``bot``, ``clock``, ``resigned`` or ``stalled`` when the service
                    picked for the seat)
- ``turn_revealed`` {round, turn, picks: [{seat, cards, chopsticks, dummy_card?, use_wasabi?}]}
- ``round_scored``  {round, scores: [{seat, <category>: points with counts…, total} per scored
                    seat]} — schema version 2
- ``game_ended``    {puddings: [{seat, count, points}], totals: [{seat, total}], winners, seed}
                    — schema version 2 (v1 listed them by position, see upcast.py)

and, from the lifecycle every game shares (domain/lifecycle.py): ``seat_left`` {seat, name}
(before the start), ``seat_taken_over`` {seat, reason, idle_seconds?, limit_seconds?} (after
it; the seat's picks are then ``by`` the reason) and ``game_cancelled`` {reason,
waited_seconds, limit_seconds, seed} (instead of the start).

The module is the decider's entry (``decide``, ``execute``, and ``evolve`` and the event type
names re-exported); by what they hold: picks.py (deciding a pick and the turn it completes),
rounds.py (deals, round scores, the end), evolution.py (``evolve``, ``fold_events``),
table.py (the card movements both sides share).
"""

from __future__ import annotations

from typing import Any

from ..bots import KINDS as BOT_KINDS
from ..decider import (
    CancelGame,
    Command,
    CreateGame,
    Event,
    LeaveSeat,
    MakeMove,
    TakeOver,
    TakeSeat,
)
from ..lifecycle import Log, cancel, create, leave_seat, take_over, take_seat
from .evolution import (
    CARD_PICKED,
    GAME,
    ROUND_DEALT,
    ROUND_SCORED,
    TURN_REVEALED,
    evolve,
    fold_events,
)
from .picks import _check_pick, _consequences, _execute_pick, _picked, _validate
from .rounds import _deal
from .rules import Rules, parse_rules
from .shuffle import ALGORITHM
from .state import State

__all__ = [
    "CARD_PICKED",
    "GAME",
    "ROUND_DEALT",
    "ROUND_SCORED",
    "TURN_REVEALED",
    "decide",
    "evolve",
    "execute",
    "execute_by_evolve",
    "fold_events",
]


def decide(state: State, command: Command) -> list[Event]:
    return execute(state, command)[0]


def execute(state: State, command: Command) -> tuple[list[Event], State]:
    """``decide``, also returning the state after the events (computed on the way anyway)."""
    if isinstance(command, MakeMove):  # by far the most frequent
        return _execute_pick(state, command)
    log = Log(state, evolve)
    if isinstance(command, TakeSeat):
        take_seat(log, command, _start)
    elif isinstance(command, CreateGame):
        _create(log, command)
    elif isinstance(command, LeaveSeat):
        leave_seat(log, command)
    elif isinstance(command, TakeOver):
        awaiting = [seat for seat, pick in enumerate(state.picks) if pick is None]
        take_over(log, command, awaiting)
    elif isinstance(command, CancelGame):
        cancel(log, command)
    else:
        raise TypeError(f"not a Sushi Go! command: {command!r}")
    return log.events, log.state


def _create(log: Log[State], command: CreateGame) -> None:
    create(
        log,
        command,
        game=GAME,
        parse_rules=parse_rules,
        bot_kinds=BOT_KINDS,
        shuffle=ALGORITHM,
        start=_start,
        recorded=_recorded,
    )


def _recorded(rules: Rules, command: CreateGame) -> dict[str, Any]:
    """``last_card_auto`` (zoch, since issue 39): every last card is picked automatically (S5;
    picks._automatic_seats says why). Only zoch records it: in gamewright a nigiri always goes
    onto a free wasabi (S8), so nothing changed there and its games record what they did."""
    return {"last_card_auto": True} if rules.wasabi_optional and command.last_card_auto else {}


def _start(log: Log[State], seed: bytes) -> None:
    """S2: the last seat taken deals the first round."""
    log.record(_deal(log.state, seed))


def execute_by_evolve(state: State, command: Command) -> tuple[list[Event], State]:
    """``execute`` the plain way, the reference the fast paths are checked against
    (tests/test_sushigo_fast_path.py): every event applied by ``evolve`` as it is decided, with
    the reveal, automatic picks and the end decided from the state before each of them."""
    if not isinstance(command, MakeMove):
        return execute(state, command)
    _check_pick(state, command)
    pick = _validate(state, command.seat, command.move)
    log = Log(state, evolve)
    log.record(_picked(state, command.seat, pick))
    _consequences(log, command.seed)
    return log.events, log.state
