"""Deciding a pick (S4–S9, S17): the fast path of the common pick, the checks and validation of
any other (every refusal), and everything a completed turn causes: the reveal, the hands passed,
automatic last picks, and the round's end (rounds.py). ``_consequences`` decides the same the
plain way, for ``execute_by_evolve``."""

from __future__ import annotations

from typing import Any

from ..bots import check_origin
from ..decider import Event, MakeMove, conflict, forbidden, rule_broken
from ..lifecycle import Log
from .cards import CARD_KINDS, CHOPSTICKS, KINDS, NIGIRI_KINDS
from .evolution import CARD_PICKED, TURN_REVEALED, evolve
from .rounds import _end_round
from .rules import Rules
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
from .state import Pick, State
from .table import _new_event, _new_pick, _new_state, _pass_hands, _place_picks, _with_pick


def _execute_pick(state: State, command: MakeMove) -> tuple[list[Event], State]:
    """A seat's pick, and when it completes the turn, everything that follows (S4).

    The common case (a single card from the hand, nothing else to decide, in a game without the
    dummy) is decided here in as few steps as possible: a game makes ~90 of these, and they are
    most of a random game's instructions (issue 15). The state's fields are copied into a list
    once (``fields``): read by index there, a field costs half of ``state[_HANDS]`` (a State is
    a tuple subclass, which the interpreter does not specialise) and a fraction of
    ``state.hands``, and the same list becomes the next state. Anything else, and every
    refusal, goes through ``_execute_any_pick``; tests/test_sushigo_fast_path.py checks both
    against deciding with ``evolve`` event by event (``execute_by_evolve``)."""
    seat, move, seed = command
    fields: list[Any] = [*state]  # not list(state): a shorter call, the same list
    picks = fields[_PICKS]
    if (
        type(move) is Pick
        and type(seat) is int
        and 0 <= seat < len(picks)
        and picks[seat] is None
        and fields[_STARTED]
        and not fields[_OVER]
    ):
        cards, dummy_card, wasabi, auto, by = move
        hands = fields[_HANDS]
        hand = hands[seat]
        if (
            type(cards) is tuple
            and len(cards) == 1
            and dummy_card is None
            and wasabi is None
            and not auto
            and cards[0] in hand
            and not fields[_RULES].dummy
        ):
            if by is not None or fields[_BOT_SEATS] or fields[_TAKEN_OVER]:
                check_origin(state, seat, by)  # as _check_pick would (no other check can fail)
            card = cards[0]
            round_no, turn = fields[_ROUND], fields[_TURN]
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
                fields[_VERSION] += 1
                fields[_HANDS] = tuple(now_hands)
                fields[_PICKS] = tuple(now_picks)
                return [event], _new_state(State, fields)
            events = [event]
            return events, _complete_turn(fields, now_hands, now_picks, events, seed)
    return _execute_any_pick(state, command)


def _execute_any_pick(state: State, command: MakeMove) -> tuple[list[Event], State]:
    """A seat's pick, whatever its shape, or the reason it is refused."""
    _check_pick(state, command)
    pick = _validate(state, command.seat, command.move)
    event = _picked(state, command.seat, pick)
    after = _with_pick(state, command.seat, pick, state.version + 1)
    if None in after.picks:
        return [event], after
    events = [event]
    # state's fields, not after's: a pick changes only the hands, picks and version
    # _complete_turn is given
    hands, picks = list(after.hands), list(after.picks)
    return events, _complete_turn([*state], hands, picks, events, command.seed)


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


def _complete_turn(
    fields: list[Any],
    hands: list[tuple[str, ...]],
    picks: list[Pick | None],
    events: list[Event],
    seed: bytes,
) -> State:
    """What ``_consequences`` decides, on one working copy of the state's moving parts (hands,
    picks, tableaux, turn) instead of a new immutable state per event: frozen once, when a seat
    must decide again or the round is over. ``fields`` are the fields of the state before the
    pick that completed the turn (its other fields hold), a list this fills in and makes the
    state after; ``hands`` and ``picks`` include that pick, whose event is already (and alone)
    in ``events``; the events that follow are appended to it."""
    rules: Rules = fields[_RULES]
    players, dummy = rules.players, rules.dummy
    waits = rules.last_card_waits
    tableaux = list(fields[_TABLEAUX])
    pile = fields[_DUMMY_PILE]
    round_no, turn, turns_played = fields[_ROUND], fields[_TURN], fields[_TURNS_PLAYED]
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
            if waits and card in NIGIRI_KINDS and tableaux[seat].free_wasabi:
                continue
            data = {"seat": seat, "cards": [card], "chopsticks": False, "auto": True}
            data["round"], data["turn"] = round_no, turn
            append(_new_event(Event, (CARD_PICKED, data, 1)))
            hands[seat] = ()
            picks[seat] = _new_pick(Pick, ((card,), None, None, True, None))
        if None in picks:
            break
    fields[_VERSION] += len(events)
    fields[_TURN], fields[_TURNS_PLAYED], fields[_DUMMY_PILE] = turn, turns_played, pile
    fields[_HANDS], fields[_PICKS], fields[_TABLEAUX] = tuple(hands), tuple(picks), tuple(tableaux)
    after: State = _new_state(State, fields)
    if not round_over:
        return after
    log = Log(after, evolve)
    log.events = events
    _end_round(log, seed)
    return log.state


def _automatic_seats(state: State) -> list[int]:
    """S5: seats whose hand holds exactly one card and who have no other decision to make.

    A last nigiri with a free wasabi (zoch, S9) is one of them: the round ends with this card
    (S3), a wasabi alone scores nothing (S10), so keeping the nigiri off can only lose points,
    and S9's default (onto the wasabi) is applied. Left to choose, that one seat waited while
    every other last card was played, and whoever watched learnt its hidden card (issue 39,
    item 8). Games created before keep their recorded behaviour (``Rules.last_card_auto``)."""
    rules: Rules = state.rules  # type: ignore[assignment]
    controller = state.controller  # who has drawn the dummy's card: a decision to make
    seats = []
    for seat, hand in enumerate(state.hands):
        if len(hand) != 1 or seat == controller:
            continue
        if rules.last_card_waits and hand[0] in NIGIRI_KINDS and state.tableaux[seat].free_wasabi:
            continue  # S9, games before issue 39: whether to use the wasabi was a decision
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
