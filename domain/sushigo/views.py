"""What a viewer may see: of the state (``view``), of each event (``visible_event``), and the
score sheet. Before the end a seat sees its own hand and its own unrevealed pick, never another
seat's hand, another unrevealed pick, the draw pile, the dummy's pile or the seed (S4, S18).
After the end, everything is public."""

from __future__ import annotations

from typing import Any

from ..decider import GAME_ENDED, Event, Viewer
from .cards import display_names
from .game import CARD_PICKED, ROUND_DEALT
from .scoring import CATEGORIES
from .state import State


def view(state: State, viewer: Viewer) -> dict[str, Any]:
    rules = state.rules
    everything = state.over or viewer.everything
    result: dict[str, Any] = {
        "game": "sushi-go",
        "status": state.status,
        "version": state.version,
        "rules": rules.to_json() if rules else None,
        "card_names": display_names(rules.edition) if rules else {},
        "seed_commitment": state.seed_commitment,
        "round": state.round,
        "turn": state.turn,
        "turn_seconds": state.turn_seconds,
        "seats": [_seat(state, seat, viewer, everything) for seat in range(_players(state))],
        "last_round": _last_round(state),
    }
    if state.dummy_seat is not None:
        result["dummy"] = {
            "controller": state.controller,
            "pile_size": len(state.dummy_pile),
            **({"pile": list(state.dummy_pile)} if everything else {}),
            "tableau": _tableau(state, state.dummy_seat),
            "puddings": _puddings(state, state.dummy_seat),
            "score": _total(state, state.dummy_seat),
        }
    if viewer.seat is not None and 0 <= viewer.seat < len(state.hands):
        pick = state.picks[viewer.seat] if state.picks else None
        result["you"] = {
            "seat": viewer.seat,
            "hand": list(state.hands[viewer.seat]),
            "pick": pick.to_json() if pick else None,
            "controls_dummy": viewer.seat == state.controller,
            "chopsticks_available": bool(state.tableaux and state.tableaux[viewer.seat].chopsticks),
            **_may_do(state, viewer.seat, pick is None),
        }
    if state.cancelled:  # over before it started: only the seed to reveal
        result["seed"] = state.seed
    elif state.over:
        result["winners"] = list(state.winners)
        result["totals"] = _totals(state)
        result["seed"] = state.seed
    return result


def _may_do(state: State, seat: int, unpicked: bool) -> dict[str, Any]:
    """What the seat may do now, so that a client need not re-implement the rules: a pick is
    awaited from it (S4; a last card is picked by the service, S5, and so is a Zoch nigiri with
    a free wasabi since issue 39, picks._automatic_seats); two cards with chopsticks are
    possible (S6: placed earlier, and the hand holds enough, the dummy's card included, S17);
    its free wasabi (S8)."""
    hand = state.hands[seat]
    awaiting = state.status == "playing" and unpicked and bool(hand)
    tableau = state.tableaux[seat] if state.tableaux else None
    needed = 2 + (seat == state.controller)
    chopsticks = bool(tableau and tableau.chopsticks) and awaiting and len(hand) >= needed
    return {
        "awaiting_pick": awaiting,
        "chopsticks_usable": chopsticks,
        "free_wasabi": tableau.free_wasabi if tableau else 0,
    }


def _players(state: State) -> int:
    return state.rules.players if state.rules else 0


def _seat(state: State, seat: int, viewer: Viewer, everything: bool) -> dict[str, Any]:
    taken = seat < len(state.names) and state.names[seat] is not None
    taken_over = dict(state.taken_over).get(seat)
    data: dict[str, Any] = {
        "seat": seat,
        "name": state.names[seat] if taken else None,
        "taken": taken,
        "bot": state.bots.get(seat),  # reserved at creation: known before the bot sits
        # Played by the greedy bot since its player resigned, or since it stalled the game.
        "taken_over": taken_over,
        "resigned": taken_over == "resigned",
        "hand_size": _hand_size(state, seat),
        "picked": bool(state.picks) and state.picks[seat] is not None,
        "tableau": _tableau(state, seat),
        "puddings": _puddings(state, seat),
        "score": _total(state, seat),
    }
    if everything and state.hands:
        data["hand"] = list(state.hands[seat])
        pick = state.picks[seat] if state.picks else None
        data["pick"] = pick.to_json() if pick else None
    return data


def _hand_size(state: State, seat: int) -> int:
    """The size of the hand at the start of the turn: an unrevealed pick must not show how many
    cards it took (a chopsticks pick is secret until the reveal, S4/S6)."""
    if not state.hands:
        return 0
    pick = state.picks[seat] if state.picks else None
    taken = 0 if pick is None else len(pick.cards) + (pick.dummy_card is not None)
    return len(state.hands[seat]) + taken


def _tableau(state: State, seat: int) -> dict[str, Any]:
    if not state.tableaux:
        return {"cards": [], "on_wasabi": []}
    tableau = state.tableaux[seat]
    return {"cards": list(tableau.cards), "on_wasabi": list(tableau.dipped)}


def _last_round(state: State) -> dict[str, Any] | None:
    """The round scored last, as its last reveal left the table: every scored seat's tableau
    (the dummy's last, S17) and the points it made that round. The view after a round's end
    shows the next round's empty table; this is what the round's scores were made of."""
    if not state.round_scores:
        return None
    scores = state.round_scores[-1]
    return {
        "round": len(state.round_scores),
        "seats": [
            {
                "seat": seat,
                "tableau": {"cards": list(tableau.cards), "on_wasabi": list(tableau.dipped)},
                "points": scores[seat]["total"],
            }
            for seat, tableau in enumerate(state.last_tableaux)
        ],
    }


def _puddings(state: State, seat: int) -> int:
    return state.puddings[seat] if state.puddings else 0


def _total(state: State, seat: int) -> int:
    return state.totals[seat] if state.totals else 0


# --- events ---------------------------------------------------------------------------------------

HIDDEN_PICK_FIELDS = ("cards", "chopsticks", "dummy_card", "use_wasabi", "auto", "by")


def visible_event(state: State, event: Event, viewer: Viewer) -> Event:
    """The matching rule for the event log: which parts of ``event`` ``viewer`` may read, given
    the game's current ``state``. Hidden values are replaced by null and listed in ``redacted``."""
    if state.over or viewer.everything or event.type == GAME_ENDED:
        return event
    data = event.data
    if event.type == ROUND_DEALT:
        hands = [hand if seat == viewer.seat else None for seat, hand in enumerate(data["hands"])]
        hidden = [f"hands[{seat}]" for seat, hand in enumerate(hands) if hand is None]
        redacted: dict[str, Any] = {
            **data,
            "hands": hands,
            "hand_sizes": [len(hand) for hand in data["hands"]],
        }
        if "dummy_pile" in data:
            redacted["dummy_pile"] = None
            hidden.append("dummy_pile")
        return Event(event.type, {**redacted, "redacted": hidden}, event.schema_version)
    if event.type == CARD_PICKED and data["seat"] != viewer.seat:
        revealed = (data["round"], data["turn"]) < (state.round, state.turn)
        if not revealed:
            kept = {k: data[k] for k in ("seat", "round", "turn")}
            # always the same list: which fields a pick has would tell what kind of pick it is
            return Event(
                event.type, {**kept, "redacted": list(HIDDEN_PICK_FIELDS)}, event.schema_version
            )
    return event


# --- the score sheet --------------------------------------------------------------------------


def _totals(state: State) -> list[dict[str, Any]]:
    """``{seat, name, total}`` per scored seat (the dummy, named ``dummy``, last): the view's and
    the score sheet's ``totals`` alike."""
    names = [*state.names, *(["dummy"] if state.dummy_seat is not None else [])]
    return [
        {"seat": seat, "name": name, "total": total}
        for seat, (name, total) in enumerate(zip(names, state.totals, strict=False))
    ]


def score_sheet(state: State) -> dict[str, Any]:
    """For every scored round and seat: points per category with the counts behind them."""
    names = [*state.names]
    if state.dummy_seat is not None:
        names.append("dummy")
    rounds = [
        {
            "round": number,
            "seats": [
                {"seat": score["seat"], "name": names[score["seat"]], **score}
                for score in round_scores
            ],
        }
        for number, round_scores in enumerate(state.round_scores, start=1)
    ]
    sheet: dict[str, Any] = {
        "categories": list(CATEGORIES),
        "rounds": rounds,
        "puddings": None,
        "totals": _totals(state),
        "winners": list(state.winners) if state.over else None,
    }
    if state.over:
        sheet["puddings"] = [
            {"seat": score["seat"], "name": names[score["seat"]], **score}
            for score in state.pudding_scores
        ]
    return sheet
