"""The Sushi Go! decider: ``decide`` validates a command into events, ``evolve`` applies one.

Event types (schema version 1 unless said), in the order a game records them:

- ``game_created``  {game, rules, seed_commitment, shuffle, bots?, turn_seconds?}
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
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from ..bots import KINDS as BOT_KINDS
from ..bots import check_origin
from ..decider import (
    GAME_CANCELLED,
    GAME_CREATED,
    GAME_ENDED,
    GAME_STARTED,
    SEAT_LEFT,
    SEAT_TAKEN,
    SEAT_TAKEN_OVER,
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
from ..lifecycle import (
    Log,
    cancel,
    create,
    leave_seat,
    on_cancelled,
    on_created,
    on_seat_left,
    on_seat_taken,
    on_taken_over,
    take_over,
    take_seat,
)
from .cards import CARD_KINDS, CHOPSTICKS, KINDS, NIGIRI_KINDS, PUDDING, WASABI
from .rules import ROUNDS, Rules, parse_rules
from .scoring import pudding_points, round_breakdowns, winners
from .shuffle import ALGORITHM, shuffled
from .state import BOT_SEATS as _BOT_SEATS
from .state import DUMMY_PILE as _DUMMY_PILE
from .state import HANDS as _HANDS
from .state import OVER as _OVER
from .state import PICKS as _PICKS
from .state import ROUND as _ROUND
from .state import RULES as _RULES
from .state import STARTED as _STARTED
from .state import TABLEAUX as _TABLEAUX
from .state import TAKEN_OVER as _TAKEN_OVER
from .state import TURN as _TURN
from .state import TURNS_PLAYED as _TURNS_PLAYED
from .state import VERSION as _VERSION
from .state import Pick, State, Tableau, replace
from .upcast import CURRENT, upcast

GAME = "sushi-go"
ROUND_DEALT = "round_dealt"
CARD_PICKED = "card_picked"
TURN_REVEALED = "turn_revealed"
ROUND_SCORED = "round_scored"


# --- decide -----------------------------------------------------------------------------------


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
    )


def _start(log: Log[State], seed: bytes) -> None:
    """S2: the last seat taken deals the first round."""
    log.record(_deal(log.state, seed))


def _execute_pick(state: State, command: MakeMove) -> tuple[list[Event], State]:
    """A seat's pick, and when it completes the turn, everything that follows (S4).

    The common case (a single card from the hand, nothing else to decide, in a game without the
    dummy) is decided here in as few steps as possible: a game makes ~90 of these, and they are
    most of a random game's instructions (issue 15). Fields are read by index (``state[_HANDS]``),
    which costs a fraction of a named field's lookup. Anything else, and every refusal, goes
    through ``_execute_any_pick``; tests/test_sushigo_fast_path.py checks both against deciding
    with ``evolve`` event by event (``execute_by_evolve``)."""
    seat, move, seed = command
    picks = state[_PICKS]
    if (
        type(move) is Pick
        and type(seat) is int
        and 0 <= seat < len(picks)
        and picks[seat] is None
        and state[_STARTED]
        and not state[_OVER]
    ):
        cards, dummy_card, wasabi, auto, by = move
        hands = state[_HANDS]
        hand = hands[seat]
        if (
            type(cards) is tuple
            and len(cards) == 1
            and dummy_card is None
            and wasabi is None
            and not auto
            and cards[0] in hand
            and not state[_RULES].dummy  # type: ignore[union-attr]
        ):
            if by is not None or state[_BOT_SEATS] or state[_TAKEN_OVER]:
                check_origin(state, seat, by)  # as _check_pick would (no other check can fail)
            card = cards[0]
            round_no, turn = state[_ROUND], state[_TURN]
            if by is None:
                data = {"seat": seat, "cards": [card], "chopsticks": False, "auto": False,
                        "round": round_no, "turn": turn}  # fmt: skip
            else:
                data = {"seat": seat, "cards": [card], "chopsticks": False, "auto": False,
                        "by": by, "round": round_no, "turn": turn}  # fmt: skip
            at = hand.index(card)
            now_hands, now_picks = list(hands), list(picks)
            now_hands[seat] = hand[:at] + hand[at + 1 :]
            now_picks[seat] = move
            event = _new_event(Event, (CARD_PICKED, data, 1))
            if None in now_picks:  # the turn goes on: nothing else happens yet
                values = list(state)
                values[_VERSION] = state[_VERSION] + 1
                values[_HANDS] = tuple(now_hands)
                values[_PICKS] = tuple(now_picks)
                return [event], _new_state(State, values)
            events = [event]
            return events, _complete_turn(state, now_hands, now_picks, events, seed)
    return _execute_any_pick(state, command)


def _place_picks(
    picks: list[Pick | None],  # none None: every seat has picked
    tableaux: list[Tableau],
    hands: list[tuple[str, ...]],
    players: int,
    revealed: list[dict[str, Any]] | None,
) -> None:
    """S4: every pick goes onto its seat's tableau at once (S8/S9: nigiri onto wasabi; S6/S7:
    used chopsticks go back into the hand; S17: the dummy's card onto the dummy's), in the
    working lists ``tableaux`` and ``hands``; ``revealed`` gets the picks as ``turn_revealed``
    lists them (``_reveal``), when given. ``_on_revealed`` on lists, for the fast paths."""
    placed = []
    # strict=False: with the dummy, tableaux has one more (placed below, not zipped)
    for seat, pick, tableau in zip(range(players), picks, tableaux, strict=False):
        cards, dummy_card, wasabi, _, _ = pick  # type: ignore[misc]
        if len(cards) == 1 and dummy_card is None and wasabi is None:  # the common case
            if revealed is not None:
                revealed.append({"seat": seat, "cards": [cards[0]], "chopsticks": False})
            if cards[0] in NIGIRI_KINDS:
                placed.append(_place(tableau, cards, None))
            else:
                placed.append(_new_tableau(Tableau, (tableau[0] + cards, tableau[1])))
            continue
        if revealed is not None:
            revealed.append(pick.to_json(seat=seat, auto=False))  # type: ignore[union-attr]
        tableau = _place(tableau, cards, wasabi)
        if len(cards) == 2:
            tableau = _take_back_chopsticks(tableau)
            hands[seat] = (*hands[seat], CHOPSTICKS)
        placed.append(tableau)
        if dummy_card is not None:
            tableaux[players] = _place(tableaux[players], (dummy_card,), None)
    tableaux[:players] = placed


def _pass_hands(
    passes_left: bool,
    dummy: bool,
    turns_played: int,
    hands: list[tuple[str, ...]],
    pile: tuple[str, ...],
) -> tuple[list[tuple[str, ...]], tuple[str, ...]]:
    """S4: the hands pass on; S17: then the dummy's controller (``turns_played``: counting the
    turn just revealed) draws the top card of the dummy's pile."""
    hands = [hands[-1], *hands[:-1]] if passes_left else [*hands[1:], hands[0]]
    if dummy and pile:
        controller = turns_played % 2
        hands[controller] = (*hands[controller], pile[0])
        pile = pile[1:]
    return hands, pile


def _execute_any_pick(state: State, command: MakeMove) -> tuple[list[Event], State]:
    """A seat's pick, whatever its shape, or the reason it is refused."""
    _check_pick(state, command)
    pick = _validate(state, command.seat, command.move)
    event = _picked(state, command.seat, pick)
    after = _with_pick(state, command.seat, pick, state.version + 1)
    if None in after.picks:
        return [event], after
    events = [event]
    # state, not after: a pick changes only the hands, picks and version _complete_turn is given
    return events, _complete_turn(state, list(after.hands), list(after.picks), events, command.seed)


def _check_pick(state: State, command: MakeMove) -> None:
    """Whether ``command``'s seat may pick now (before looking at the pick itself)."""
    if state.cancelled:
        raise conflict("game_cancelled", "this game was cancelled: its seats did not fill in time")
    if not state.started:
        raise conflict("game_not_started", "the game starts when every seat is taken")
    if state.over:
        raise conflict("game_over", "the game is over")
    seat = command.seat
    if not 0 <= seat < len(state.hands):
        raise forbidden("not_a_seat", f"seat {seat} does not play in this game")
    by = getattr(command.move, "by", None)
    if state.bot_seats or state.taken_over or by is not None:
        check_origin(state, seat, by)  # before already_picked: a bot picks at once
    if state.picks[seat] is not None:
        raise conflict(
            "already_picked",
            f"seat {seat} has already picked this turn; a pick is final (S4)",
            round=state.round,
            turn=state.turn,
        )


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


def _validate(state: State, seat: int, move: Any) -> Pick:
    """The pick as recorded, or the rule it breaks."""
    if not isinstance(move, Pick):
        raise TypeError(f"a Sushi Go! move is a Pick, not {move!r}")
    cards, dummy_card, wasabi = move.cards, move.dummy_card, move.use_wasabi
    if (  # the common case, valid as it is: one card from the hand, nothing else to decide
        type(cards) is tuple
        and len(cards) == 1
        and dummy_card is None
        and wasabi is None
        and not move.auto
        and cards[0] in state.hands[seat]
        and seat != state.controller
    ):
        return move
    cards = tuple(cards)
    taken = cards if dummy_card is None else (*cards, dummy_card)
    if not CARD_KINDS.issuperset(taken):
        unknown = next(k for k in taken if k not in CARD_KINDS)
        raise rule_broken("unknown_card", f"{unknown!r} is not a card; use one of {list(KINDS)}")
    if not 1 <= len(cards) <= 2:
        raise rule_broken(
            "wrong_number_of_cards", "pick one card, or two in order when using chopsticks (S6)"
        )
    if len(cards) == 2 and CHOPSTICKS not in state.tableaux[seat].cards:
        raise rule_broken(
            "chopsticks_not_available",
            "two cards need a chopsticks card placed in an earlier turn (S6)",
        )
    controls_dummy = seat == state.controller
    if controls_dummy and dummy_card is None:
        raise rule_broken(
            "dummy_card_missing", "you control the dummy this turn: name its card too (S17)"
        )
    if not controls_dummy and dummy_card is not None:
        raise rule_broken("dummy_card_not_allowed", "you do not control the dummy this turn (S17)")
    hand = state.hands[seat]
    if len(taken) > 1 or taken[0] not in hand:
        missing = sorted({k for k in taken if taken.count(k) > hand.count(k)})
        if missing:
            raise rule_broken(
                "card_not_in_hand",
                f"your hand does not hold {', '.join(missing)} (as many times as picked)",
                hand=sorted(hand),
            )
    if wasabi is not None:
        if not state.rules.wasabi_optional:  # type: ignore[union-attr]
            raise rule_broken(
                "wasabi_choice_not_allowed",
                "in the gamewright edition a nigiri always goes onto a free wasabi (S8)",
            )
        if len(wasabi) != len(cards):
            raise rule_broken(
                "wrong_number_of_wasabi_choices",
                "use_wasabi needs one true/false per picked card, in the same order (S9)",
            )
        wasabi = tuple(wasabi)
    return Pick(cards, dummy_card, wasabi, False, move.by)


def _picked(state: State, seat: int, pick: Pick) -> Event:
    if pick.dummy_card is None and pick.use_wasabi is None and pick.by is None:
        data = {  # pick.to_json(seat=seat), built at once for the common case
            "seat": seat,
            "cards": list(pick.cards),
            "chopsticks": len(pick.cards) == 2,
            "auto": pick.auto,
        }
    else:
        data = pick.to_json(seat=seat)
    data["round"], data["turn"] = state.round, state.turn
    return _new_event(Event, (CARD_PICKED, data, 1))


def _consequences(log: Log[State], seed: bytes) -> None:
    """Everything a completed turn causes, the plain way (``execute_by_evolve``; ``execute``
    decides the same with ``_complete_turn``): reveal and pass (S4), round scoring (S10–S12),
    the next deal (S3), automatic last picks (S5), pudding scoring and the end (S13–S16)."""
    while None not in log.state.picks:
        log.record(_reveal(log.state))
        state = log.state
        if any(state.hands) or state.dummy_pile:
            for seat in _automatic_seats(state):
                log.record(_picked(log.state, seat, Pick((state.hands[seat][0],), auto=True)))
            continue
        _end_round(log, seed)
        return


def _end_round(log: Log[State], seed: bytes) -> None:
    """S3/S13: score the round, then deal the next one or end the game."""
    log.record(_score_round(log.state))
    if log.state.round < ROUNDS:
        log.record(_deal(log.state, seed))
    else:
        log.record(_end(log.state, seed))


def _complete_turn(
    state: State,
    hands: list[tuple[str, ...]],
    picks: list[Pick | None],
    events: list[Event],
    seed: bytes,
) -> State:
    """What ``_consequences`` decides, on one working copy of the state's moving parts (hands,
    picks, tableaux, turn) instead of a new immutable state per event: frozen once, when a seat
    must decide again or the round is over. ``state`` is the state before the pick that
    completed the turn (its other fields hold); ``hands`` and ``picks`` include that pick, whose
    event is already (and alone) in ``events``; the events that follow are appended to it."""
    rules: Rules = state.rules  # type: ignore[assignment]
    players, dummy = rules.players, rules.dummy
    zoch = rules.wasabi_optional
    tableaux = list(state.tableaux)
    pile = state.dummy_pile
    round_no, turn, turns_played = state.round, state.turn, state.turns_played
    passes_left = rules.passes_left(round_no)
    append = events.append
    while True:
        revealed: list[dict[str, Any]] = []  # _reveal and _on_revealed at once
        _place_picks(picks, tableaux, hands, players, revealed)
        append(
            _new_event(
                Event, (TURN_REVEALED, {"round": round_no, "turn": turn, "picks": revealed}, 1)
            )
        )
        hands, pile = _pass_hands(passes_left, dummy, turns_played + 1, hands, pile)
        turn, turns_played = turn + 1, turns_played + 1
        picks = [None] * players
        controller = turns_played % 2 if dummy else None  # S17: who drew the dummy's card
        round_over = not (any(hands) or pile)
        if round_over:
            break
        if 1 not in map(len, hands):  # nobody holds a last card
            break
        for seat, hand in enumerate(hands):  # _automatic_seats (S5, S9)
            if len(hand) != 1 or seat == controller:
                continue
            card = hand[0]
            if zoch and card in NIGIRI_KINDS and tableaux[seat].free_wasabi:
                continue
            data = {"seat": seat, "cards": [card], "chopsticks": False, "auto": True}
            data["round"], data["turn"] = round_no, turn
            append(_new_event(Event, (CARD_PICKED, data, 1)))
            hands[seat] = ()
            picks[seat] = _new_pick(Pick, ((card,), None, None, True, None))
        if None in picks:
            break
    values = list(state)
    values[_VERSION] = state.version + len(events)
    values[_TURN], values[_TURNS_PLAYED], values[_DUMMY_PILE] = turn, turns_played, pile
    values[_HANDS], values[_PICKS], values[_TABLEAUX] = tuple(hands), tuple(picks), tuple(tableaux)
    after: State = tuple.__new__(State, values)
    if not round_over:
        return after
    log = Log(after, evolve)
    log.events = events
    _end_round(log, seed)
    return log.state


def _automatic_seats(state: State) -> list[int]:
    """S5: seats whose hand holds exactly one card and who have no other decision to make."""
    rules: Rules = state.rules  # type: ignore[assignment]
    controller = state.controller  # who has drawn the dummy's card: a decision to make
    seats = []
    for seat, hand in enumerate(state.hands):
        if len(hand) != 1 or seat == controller:
            continue
        if rules.wasabi_optional and hand[0] in NIGIRI_KINDS and state.tableaux[seat].free_wasabi:
            continue  # S9: whether to use the wasabi is a decision
        seats.append(seat)
    return seats


def _reveal(state: State) -> Event:
    picks = []
    for seat, pick in enumerate(state.picks):
        assert pick is not None
        if pick.dummy_card is None and pick.use_wasabi is None:
            cards = pick.cards  # pick.to_json(seat=seat, auto=False), at once
            picks.append({"seat": seat, "cards": list(cards), "chopsticks": len(cards) == 2})
        else:
            picks.append(pick.to_json(seat=seat, auto=False))
    return _new_event(
        Event, (TURN_REVEALED, {"round": state.round, "turn": state.turn, "picks": picks}, 1)
    )


def _deal(state: State, seed: bytes) -> Event:
    """S2/S3: deal each seat a hand from the top of the remaining draw pile (then the dummy)."""
    _check_seed(state, seed)
    rules: Rules = state.rules  # type: ignore[assignment]
    deck = shuffled(seed)
    size = rules.hand_size
    start = state.dealt
    hands = [list(deck[start + i * size : start + (i + 1) * size]) for i in range(rules.players)]
    data: dict[str, Any] = {"round": state.round + 1, "deck_offset": start, "hands": hands}
    if rules.dummy:
        at = start + rules.players * size
        data["dummy_pile"] = list(deck[at : at + size])
    return Event(ROUND_DEALT, data, CURRENT[ROUND_DEALT])


def _score_round(state: State) -> Event:
    rules: Rules = state.rules  # type: ignore[assignment]
    scores = round_breakdowns(state.tableaux, rules.split_ties)
    named = [{"seat": seat, **score} for seat, score in enumerate(scores)]
    return Event(ROUND_SCORED, {"round": state.round, "scores": named}, CURRENT[ROUND_SCORED])


def _end(state: State, seed: bytes) -> Event:
    _check_seed(state, seed)
    rules: Rules = state.rules  # type: ignore[assignment]
    penalty = rules.scored_seats > 2  # S14: no pudding penalty in a 2-player game without dummy
    points = pudding_points(state.puddings, rules.split_ties, penalty)
    totals = [t + p for t, p in zip(state.totals, points, strict=True)]
    return Event(
        GAME_ENDED,
        {
            "puddings": [
                {"seat": seat, "count": c, "points": p}
                for seat, (c, p) in enumerate(zip(state.puddings, points, strict=True))
            ],
            "totals": [{"seat": seat, "total": t} for seat, t in enumerate(totals)],
            "winners": winners(totals, state.puddings, rules.players),
            "seed": seed.hex(),
        },
        CURRENT[GAME_ENDED],
    )


def _check_seed(state: State, seed: bytes) -> None:
    if commitment(seed) != state.seed_commitment:
        raise ValueError("the seed given does not match the game's commitment (S18)")


# --- evolve -----------------------------------------------------------------------------------


def evolve(state: State, event: Event) -> State:
    apply = _APPLY.get(event.type)
    if apply is None:
        raise ValueError(f"unknown Sushi Go! event type {event.type!r}")
    if event.schema_version != CURRENT.get(event.type, 1):
        event = upcast(event)  # an event recorded in an older schema
    return apply(state, event.data, state.version + 1)


def fold_events(events: Sequence[Event], state: State | None = None) -> State:
    """The state after ``events`` (from ``state``, or from the beginning): what ``evolve`` gives
    event by event (``decider.fold`` calls this), with each run of ``card_picked`` and
    ``turn_revealed`` events (all but a few of a game's) applied to one working copy of the
    hands, picks and tableaux, frozen once at the end of the run (issue 15: the fold of a
    finished game). tests/test_sushigo_fast_path.py compares the two on every prefix."""
    current = State() if state is None else state
    at, count = 0, len(events)
    while at < count:
        if events[at][0] in _PLAY and current[_STARTED] and not current[_OVER]:
            current, at = _fold_play(current, events, at)
            if at == count:
                break
        current = evolve(current, events[at])  # anything else, and where a run stopped
        at += 1
    return current


def _fold_play(state: State, events: Sequence[Event], at: int) -> tuple[State, int]:
    """``card_picked`` and ``turn_revealed`` events from ``events[at]`` on, as ``_on_picked`` and
    ``_on_revealed`` apply them, until another event (or one they would refuse: left to
    ``evolve``, which raises what it raises); the state after them and where the run stopped."""
    rules: Rules = state.rules  # type: ignore[assignment]
    players, dummy = rules.players, rules.dummy
    passes_left = rules.passes_left(state.round)
    hands, picks, tableaux = list(state.hands), list(state.picks), list(state.tableaux)
    pile, turn, turns_played = state.dummy_pile, state.turn, state.turns_played
    start, count = at, len(events)
    while at < count:
        kind, data, schema = events[at]
        if schema != 1:
            break
        if kind == CARD_PICKED:
            cards, dummy_card, wasabi = tuple(data["cards"]), data.get("dummy_card"), None
            if (chosen := data.get("use_wasabi")) is not None:
                wasabi = tuple(chosen)
            pick = _new_pick(
                Pick, (cards, dummy_card, wasabi, data.get("auto", False), data.get("by"))
            )
            seat = data["seat"]
            if type(seat) is not int or not -players <= seat < players:
                break  # evolve's to refuse
            hand = hands[seat]
            for card in cards if dummy_card is None else (*cards, dummy_card):
                if card not in hand:
                    break
                i = hand.index(card)
                hand = hand[:i] + hand[i + 1 :]
            else:
                hands[seat], picks[seat] = hand, pick
                at += 1
                continue
            break  # a card not in the hand: evolve's to refuse
        if kind != TURN_REVEALED or None in picks:
            break
        _place_picks(picks, tableaux, hands, players, None)
        turns_played += 1
        hands, pile = _pass_hands(passes_left, dummy, turns_played, hands, pile)
        turn += 1
        picks = [None] * players
        at += 1
    if at == start:
        return state, at
    values = list(state)
    values[_VERSION] = state.version + at - start
    values[_TURN], values[_TURNS_PLAYED], values[_DUMMY_PILE] = turn, turns_played, pile
    values[_HANDS], values[_PICKS], values[_TABLEAUX] = tuple(hands), tuple(picks), tuple(tableaux)
    return _new_state(State, values), at


_PLAY = frozenset((CARD_PICKED, TURN_REVEALED))


def _on_started(state: State, data: Any, version: int) -> State:
    seats = state.rules.scored_seats  # type: ignore[union-attr]
    return replace(
        state,
        version=version,
        started=True,
        tableaux=(Tableau(),) * seats,
        puddings=(0,) * seats,
        totals=(0,) * seats,
    )


def _on_dealt(state: State, data: Any, version: int) -> State:
    rules: Rules = state.rules  # type: ignore[assignment]
    dealt = tuple(tuple(hand) for hand in data["hands"])
    dummy_pile = tuple(data.get("dummy_pile", ()))
    hands, pile = _draw_for_dummy(rules, state.turns_played, dealt, dummy_pile)
    return replace(
        state,
        version=version,
        round=data["round"],
        turn=1,
        hands=hands,
        dummy_pile=pile,
        picks=_NO_PICKS[rules.players],
        dealt=state.dealt + sum(map(len, dealt)) + len(dummy_pile),
    )


def _on_picked(state: State, data: Any, version: int) -> State:
    wasabi = data.get("use_wasabi")
    pick = _new_pick(  # Pick.from_json(data), without keyword handling: a fold makes ~100
        Pick,
        (
            tuple(data["cards"]),
            data.get("dummy_card"),
            None if wasabi is None else tuple(wasabi),
            data.get("auto", False),
            data.get("by"),
        ),
    )
    return _with_pick(state, data["seat"], pick, version)


def _with_pick(state: State, seat: int, pick: Pick, version: int) -> State:
    """S4: the pick is recorded, hidden; its cards leave the hand."""
    hand = state.hands[seat]
    for kind in pick.cards if pick.dummy_card is None else pick.taken:
        at = hand.index(kind)
        hand = hand[:at] + hand[at + 1 :]
    hands = list(state.hands)
    hands[seat] = hand
    picks = list(state.picks)
    picks[seat] = pick
    values = list(state)  # replace(state, version=…, hands=…, picks=…), without keywords
    values[_VERSION], values[_HANDS], values[_PICKS] = version, tuple(hands), tuple(picks)
    return tuple.__new__(State, values)


# Event(…) and Pick(…) without their keyword-handling __new__: the hot paths make ~200 a game.
_new_event = _new_pick = _new_tableau = _new_state = tuple.__new__


def _on_revealed(state: State, data: Any, version: int) -> State:
    """S4: place every pick at once; S7: used chopsticks go back into the hand passed on."""
    rules: Rules = state.rules  # type: ignore[assignment]
    tableaux = list(state.tableaux)
    hands = list(state.hands)
    for seat, pick in enumerate(state.picks):
        assert pick is not None
        cards, tableau = pick.cards, tableaux[seat]
        if NIGIRI_KINDS.isdisjoint(cards):  # _place's common case, inline: no wasabi to use
            tableaux[seat] = tuple.__new__(Tableau, (tableau.cards + cards, tableau.dipped))
        else:
            tableaux[seat] = _place(tableau, cards, pick.use_wasabi)
        if len(cards) == 2:  # S6
            tableaux[seat] = _take_back_chopsticks(tableaux[seat])
            hands[seat] = (*hands[seat], CHOPSTICKS)
        if pick.dummy_card is not None:
            dummy = rules.players
            tableaux[dummy] = _place(tableaux[dummy], (pick.dummy_card,), None)
    if rules.pass_direction == "left" or state.round != 2:  # rules.passes_left(state.round)
        passed = (hands[-1], *hands[:-1])  # seat i passes to seat i + 1
    else:
        passed = (*hands[1:], hands[0])
    turns_played = state.turns_played + 1
    if state.dummy_pile and rules.dummy:
        hands_now, pile = _draw_for_dummy(rules, turns_played, passed, state.dummy_pile)
    else:
        hands_now, pile = passed, state.dummy_pile
    return replace(
        state,
        version=version,
        turn=state.turn + 1,
        turns_played=turns_played,
        hands=hands_now,
        dummy_pile=pile,
        picks=_NO_PICKS[rules.players],
        tableaux=tuple(tableaux),
    )


def _draw_for_dummy(
    rules: Rules, turns_played: int, hands: tuple[tuple[str, ...], ...], pile: tuple[str, ...]
) -> tuple[tuple[tuple[str, ...], ...], tuple[str, ...]]:
    """S17: at the start of a turn the dummy's controller draws the top card of its pile."""
    if not (pile and rules.dummy):
        return hands, pile
    controller = turns_played % 2
    drawn = tuple((*h, pile[0]) if i == controller else h for i, h in enumerate(hands))
    return drawn, pile[1:]


_NO_PICKS: dict[int, tuple[None, ...]] = {n: (None,) * n for n in range(2, 6)}


def _place(
    tableau: Tableau, cards: tuple[str, ...], use_wasabi: tuple[bool, ...] | None
) -> Tableau:
    """S8/S9: cards go down in the order given; a nigiri goes onto a free wasabi unless declined."""
    placed, dipped = tableau.cards, tableau.dipped
    if NIGIRI_KINDS.isdisjoint(cards):  # the common case: nothing to put on a wasabi
        return tuple.__new__(Tableau, (placed + cards, dipped))  # Tableau(…), without keywords
    for i, kind in enumerate(cards):
        placed = (*placed, kind)
        if (
            kind in NIGIRI_KINDS
            and (use_wasabi is None or use_wasabi[i])
            and placed.count(WASABI) > len(dipped)
        ):
            dipped = (*dipped, kind)
    return Tableau(placed, dipped)


def _take_back_chopsticks(tableau: Tableau) -> Tableau:
    cards = list(tableau.cards)
    cards.remove(CHOPSTICKS)
    return Tableau(tuple(cards), tableau.dipped)


def _on_scored(state: State, data: Any, version: int) -> State:
    """S3: all played cards but puddings are discarded; puddings stay with their owner."""
    scores = data["scores"]
    discard = list(state.discard)
    puddings = list(state.puddings)
    for seat, tableau in enumerate(state.tableaux):
        kept = tableau.cards.count(PUDDING)
        puddings[seat] += kept
        discard.extend(filter(PUDDING.__ne__, tableau.cards))  # in order, without a genexpr
    return replace(
        state,
        version=version,
        tableaux=(Tableau(),) * len(state.tableaux),
        last_tableaux=state.tableaux,
        puddings=tuple(puddings),
        discard=tuple(discard),
        round_scores=(*state.round_scores, tuple(scores)),
        totals=_added(state.totals, {s["seat"]: s["total"] for s in scores}),
    )


def _on_ended(state: State, data: Any, version: int) -> State:
    return replace(
        state,
        version=version,
        over=True,
        pudding_scores=tuple(data["puddings"]),
        totals=_added((0,) * len(state.totals), {t["seat"]: t["total"] for t in data["totals"]}),
        winners=tuple(data["winners"]),
        seed=data["seed"],
        picks=(),
    )


def _added(totals: tuple[int, ...], points: dict[int, int]) -> tuple[int, ...]:
    """``totals`` plus the ``points`` of each seat named (events name seats, v2)."""
    return tuple(total + points.get(seat, 0) for seat, total in enumerate(totals))


_APPLY: dict[str, Callable[[State, Any, int], State]] = {
    GAME_CREATED: partial(on_created, parse_rules=parse_rules),
    SEAT_TAKEN: on_seat_taken,
    GAME_STARTED: _on_started,
    ROUND_DEALT: _on_dealt,
    CARD_PICKED: _on_picked,
    TURN_REVEALED: _on_revealed,
    ROUND_SCORED: _on_scored,
    GAME_ENDED: _on_ended,
    SEAT_LEFT: on_seat_left,
    SEAT_TAKEN_OVER: on_taken_over,
    GAME_CANCELLED: on_cancelled,
}
