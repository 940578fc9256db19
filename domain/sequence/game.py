"""The Sequence decider: ``decide`` validates a command into events, ``evolve`` applies one.

Event types (schema version 1 unless said), in the order a game records them:

- ``game_created``        {game, rules: {players, teams, advanced_jacks}, seed_commitment, shuffle,
                          bots?, turn_seconds?}
- ``seat_taken``          {seat, name, bot?}
- ``game_started``        {seats: [names]}
- ``cards_dealt``         {hands: [[card…] per seat]}                      (hidden per seat)
- ``dead_card_discarded`` {seat, turn, card, drawn, by?}                   (drawn: hidden)
- ``card_played``         {seat, turn, team, card, cell, removed, drawn, by?} (drawn: hidden)
- ``turn_passed``         {seat, turn, auto, by?}
- ``sequence_completed``  {seat, team, count, sequences: [{team, cells, count}]}
- ``deck_reshuffled``     {reshuffle, cards, stream_offset}
- ``game_ended``          {result, team, winners, totals: [{team, total}], seed} — schema
                          version 2 (v1 listed the totals by position, see upcast.py)

and, from the lifecycle every game shares (domain/lifecycle.py): ``seat_left``,
``seat_taken_over`` (the seat's moves are then ``by`` its reason; a team's resigned seat is
played by the greedy bot for its team) and ``game_cancelled``.

``by`` (``bot``, ``clock``, ``resigned`` or ``stalled``) marks a move the service made for the
seat (``domain.bots``).
A move is a ``Play``, a ``Discard`` (Q7: the turn goes on) or a ``Pass`` (Q8); ``evolve`` is in
evolve.py.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from ..bots import KINDS as BOT_KINDS
from ..bots import check_origin
from ..decider import (
    GAME_ENDED,
    CancelGame,
    Command,
    CreateGame,
    Event,
    LeaveSeat,
    MakeMove,
    TakeOver,
    TakeSeat,
    commitment,
    conflict,
    forbidden,
    rule_broken,
)
from ..lifecycle import Log, cancel, create, leave_seat, take_over, take_seat
from ..shuffle import ALGORITHM, fisher_yates
from .board import CELLS_OF, CORNERS, code, index, on_board
from .cards import CANONICAL_DECK, CARDS, ONE_EYED_JACKS, TWO_EYED_JACKS
from .evolve import (
    CARD_PLAYED,
    CARDS_DEALT,
    DEAD_CARD_DISCARDED,
    DECK_RESHUFFLED,
    EVENT_TYPES,
    GAME,
    SEQUENCE_COMPLETED,
    TURN_PASSED,
    evolve,
)
from .legal import can_discard, has_legal_play, is_dead
from .rules import parse_rules
from .sequences import EMPTY, locked_cells
from .state import Discard, Pass, Play, State
from .upcast import CURRENT

__all__ = [
    "CARDS_DEALT",
    "CARD_PLAYED",
    "DEAD_CARD_DISCARDED",
    "DECK_RESHUFFLED",
    "EVENT_TYPES",
    "GAME",
    "SEQUENCE_COMPLETED",
    "TURN_PASSED",
    "decide",
    "evolve",
    "execute",
    "pile_order",
]


# --- decide -----------------------------------------------------------------------------------


def decide(state: State, command: Command) -> list[Event]:
    return execute(state, command)[0]


def execute(state: State, command: Command) -> tuple[list[Event], State]:
    """``decide``, also returning the state after the events."""
    log = Log(state, evolve)
    if isinstance(command, MakeMove):
        _move(log, command)
    elif isinstance(command, TakeSeat):
        take_seat(log, command, _start)
    elif isinstance(command, CreateGame):
        _create(log, command)
    elif isinstance(command, LeaveSeat):
        leave_seat(log, command)
    elif isinstance(command, TakeOver):
        take_over(log, command, [] if state.current is None else [state.current])
    elif isinstance(command, CancelGame):
        cancel(log, command)
    else:
        raise TypeError(f"not a Sequence command: {command!r}")
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
    )


def _start(log: Log[State], seed: bytes) -> None:
    """Q5: the last seat taken deals, and play begins (automatic passes, Q8)."""
    log.record(_deal(log.state, seed))
    _next_turns(log, seed)


def _deal(state: State, seed: bytes) -> Event:
    """Q2/Q5: each seat's whole hand from the top of the shuffled deck, seat 0 first."""
    assert state.rules is not None
    deck = _pile(state, seed)
    size = state.rules.hand_size
    hands = [list(deck[i * size : (i + 1) * size]) for i in range(state.rules.players)]
    return Event(CARDS_DEALT, {"hands": hands})


def _move(log: Log[State], command: MakeMove) -> None:
    state = log.state
    if state.cancelled:
        raise conflict("game_cancelled", "this game was cancelled: its seats did not fill in time")
    if not state.started:
        raise conflict("game_not_started", "the game starts when every seat is taken")
    if state.over:
        raise conflict("game_over", "the game is over")
    seat = command.seat
    if not 0 <= seat < len(state.hands):
        raise forbidden("not_a_seat", f"seat {seat} does not play in this game")
    move = command.move
    if state.bot_seats or state.taken_over or getattr(move, "by", None) is not None:
        check_origin(state, seat, move.by)  # before the turn: the bot moves for it at once
    if seat != state.current:
        raise conflict(
            "not_your_turn",
            f"it is seat {state.current}'s turn, not seat {seat}'s (Q4: play goes up the seats)",
            turn=state.turn,
            seat_to_move=state.current,
        )
    if isinstance(move, Play):
        _play(log, seat, move, command.seed)
    elif isinstance(move, Discard):
        _discard(log, seat, move, command.seed)
    elif isinstance(move, Pass):
        _pass(log, seat, move, command.seed)
    else:
        raise TypeError(f"a Sequence move is a Play, Discard or Pass, not {move!r}")
    if not log.state.over:
        _next_turns(log, command.seed)


def _by(data: dict[str, Any], by: str | None) -> dict[str, Any]:
    if by is not None:
        data["by"] = by
    return data


def _check_card(state: State, seat: int, card: str) -> None:
    if card not in CARDS:
        raise rule_broken("unknown_card", f"{card!r} is not a card; cards are like AS, 10H, JD")
    if card not in state.hands[seat]:
        raise rule_broken(
            "card_not_in_hand", f"your hand does not hold {card}", hand=list(state.hands[seat])
        )


def _play(log: Log[State], seat: int, move: Play, seed: bytes) -> None:
    """Q6: play a card, place or remove a chip, draw; then Q9/Q10 sequences and Q12 the win."""
    state = log.state
    rules = state.rules
    assert rules is not None
    card, cell = move.card, (int(move.cell[0]), int(move.cell[1]))
    _check_card(state, seat, card)
    if not on_board(cell):
        raise rule_broken("invalid_cell", f"{list(cell)} is not a cell: rows and columns are 0–9")
    team = rules.team_of(seat)
    owner = state.chips[index(cell)]
    if card in ONE_EYED_JACKS:
        if owner in (EMPTY, team):
            raise rule_broken(
                "no_opponent_chip",
                f"a one-eyed jack removes another team's chip; {list(cell)} holds none (Q6)",
            )
        if not rules.advanced_jacks and cell in locked_cells(state.runs):
            raise rule_broken(
                "chip_locked",
                f"the chip on {list(cell)} is part of a completed sequence (Q10; the"
                " advanced_jacks rule, Q11, would allow it)",
            )
    else:
        if card in TWO_EYED_JACKS:
            if cell in CORNERS:
                raise rule_broken("corner_cell", "a corner is every team's: no chip goes there")
        elif code(cell) != card:
            raise rule_broken(
                "card_does_not_match_cell",
                f"{card} is played on a cell showing {card}, not on {code(cell)} (Q6)",
                cells=[list(c) for c in CELLS_OF[card]],
            )
        if owner != EMPTY:
            raise rule_broken("cell_occupied", f"{list(cell)} already holds a chip (Q6)")
    removes = card in ONE_EYED_JACKS
    data: dict[str, Any] = {
        "seat": seat,
        "turn": state.turn,
        "team": team,
        "card": card,
        "cell": None if removes else list(cell),
        "removed": list(cell) if removes else None,
        "drawn": _draw(state, seed),  # Q6: the service draws, never forgets
    }
    before = state.sequences()[team]
    log.record(Event(CARD_PLAYED, _by(data, move.by)))
    after = log.state.sequences()[team]
    if after > before:
        runs = [run.to_json() for run in log.state.runs if run.team == team]
        completed = {"seat": seat, "team": team, "count": after, "sequences": runs}
        log.record(Event(SEQUENCE_COMPLETED, completed))
    if after >= rules.to_win:  # Q12: the game ends at once
        log.record(_end(log.state, seed, team))
        return
    _reshuffle_if_empty(log, seed)


def _discard(log: Log[State], seat: int, move: Discard, seed: bytes) -> None:
    """Q7: once per turn, before playing, a dead card for a new one."""
    state = log.state
    if state.discarded:
        raise rule_broken(
            "already_discarded", "a dead card can be discarded once per turn (Q7); play a card"
        )
    _check_card(state, seat, move.card)
    if not is_dead(state, move.card):
        raise rule_broken(
            "card_not_dead",
            f"{move.card} is not dead: a dead card is a non-jack card whose two cells are both"
            " taken (Q7)",
        )
    data = {"seat": seat, "turn": state.turn, "card": move.card, "drawn": _draw(state, seed)}
    log.record(Event(DEAD_CARD_DISCARDED, _by(data, move.by)))
    _reshuffle_if_empty(log, seed)


def _pass(log: Log[State], seat: int, move: Pass, seed: bytes) -> None:
    if has_legal_play(log.state, seat):
        raise rule_broken(
            "legal_play_exists", "a seat passes only when none of its cards can be played (Q8)"
        )
    _record_pass(log, seat, seed, auto=False, by=move.by)


def _record_pass(
    log: Log[State], seat: int, seed: bytes, auto: bool, by: str | None = None
) -> None:
    data = {"seat": seat, "turn": log.state.turn, "auto": auto}
    log.record(Event(TURN_PASSED, _by(data, by)))
    state = log.state
    assert state.rules is not None
    if state.passes >= state.rules.players:  # Q8: every seat passed in a row: a draw
        log.record(_end(state, seed, None))


def _next_turns(log: Log[State], seed: bytes) -> None:
    """Q8: the service passes for a seat with nothing to decide (no legal play and no dead card
    to discard), until a seat can act or everybody has passed in a row."""
    while not log.state.over:
        state = log.state
        seat = state.current
        assert seat is not None
        if has_legal_play(state, seat) or can_discard(state, seat):
            return
        _record_pass(log, seat, seed, auto=True)


def _reshuffle_if_empty(log: Log[State], seed: bytes) -> None:
    """Q8: when the draw pile is empty, the discard pile is shuffled into a new one, resuming the
    seed's stream where the previous shuffle stopped."""
    state = log.state
    if state.pile_size or not state.discard:
        return
    offset = pile_order(_checked(state, seed), state.pile_base, state.pile_offset)[1]
    data = {
        "reshuffle": state.reshuffles + 1,
        "cards": list(state.discard),
        "stream_offset": offset,
    }
    log.record(Event(DECK_RESHUFFLED, data))


def _draw(state: State, seed: bytes) -> str | None:
    """The top card of the draw pile, or None when there is none (Q8: play on with fewer)."""
    if not state.pile_size:
        return None
    return _pile(state, seed)[state.pile_taken]


def _pile(state: State, seed: bytes) -> tuple[str, ...]:
    """The current draw pile in full, top first, cards already drawn included."""
    return pile_order(_checked(state, seed), state.pile_base, state.pile_offset)[0]


@lru_cache(maxsize=512)
def pile_order(
    seed: bytes, base: tuple[str, ...] | None, offset: int
) -> tuple[tuple[str, ...], int]:
    return fisher_yates(CANONICAL_DECK if base is None else base, seed, offset)


def _checked(state: State, seed: bytes) -> bytes:
    if commitment(seed) != state.seed_commitment:
        raise ValueError("the seed given does not match the game's commitment (Q2)")
    return seed


def _end(state: State, seed: bytes, team: int | None) -> Event:
    assert state.rules is not None
    data = {
        "result": "draw" if team is None else "win",
        "team": team,
        "winners": [] if team is None else state.rules.seats_of(team),
        "totals": [{"team": t, "total": n} for t, n in enumerate(state.sequences())],
        "seed": _checked(state, seed).hex(),
    }
    return Event(GAME_ENDED, data, CURRENT[GAME_ENDED])
