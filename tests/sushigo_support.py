"""Building Sushi Go! states for rule tests: real events, with the hands a test chooses."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from domain.decider import (
    GAME_CREATED,
    GAME_STARTED,
    SEAT_TAKEN,
    Event,
    MakeMove,
    commitment,
    fold,
)
from domain.sushigo import SUSHI_GO, Pick, State
from domain.sushigo.game import ROUND_DEALT, execute
from domain.sushigo.shuffle import ALGORITHM

SEED = bytes(range(32))


def dealt(
    hands: Sequence[Sequence[str]],
    *,
    dummy_pile: Sequence[str] | None = None,
    seed: bytes = SEED,
    created: Mapping[str, Any] | None = None,
    **rules: Any,
) -> State:
    """A started game whose first round dealt exactly ``hands`` (and ``dummy_pile``); its
    ``game_created`` records ``created`` besides (``{"last_card_auto": True}``: a game created
    since issue 39; without it, one from before)."""
    options = {"players": len(hands), **rules}
    if dummy_pile is not None:
        options["dummy"] = True
    names = [f"p{i}" for i in range(len(hands))]
    deal: dict[str, Any] = {"round": 1, "hands": [list(h) for h in hands]}
    if dummy_pile is not None:
        deal["dummy_pile"] = list(dummy_pile)
    events = [
        Event(
            GAME_CREATED,
            {
                "game": "sushi-go",
                "rules": {
                    "edition": "gamewright",
                    "pass_direction": "left",
                    "dummy": False,
                    **options,
                },
                "seed_commitment": commitment(seed),
                "shuffle": ALGORITHM,
                **(created or {}),
            },
        ),
        *(Event(SEAT_TAKEN, {"seat": i, "name": n}) for i, n in enumerate(names)),
        Event(GAME_STARTED, {"seats": names}),
        Event(ROUND_DEALT, deal),
    ]
    return fold(SUSHI_GO, events)


def pick(
    state: State,
    seat: int,
    *cards: str,
    dummy: str | None = None,
    wasabi: Sequence[bool] | None = None,
    seed: bytes = SEED,
) -> tuple[list[Event], State]:
    move = Pick(tuple(cards), dummy, None if wasabi is None else tuple(wasabi))
    return execute(state, MakeMove(seat, move, seed))


def play_turn(state: State, *picks: Sequence[str] | Pick) -> tuple[list[Event], State]:
    """Every seat picks, in seat order; returns all events and the state after the turn."""
    events: list[Event] = []
    for seat, chosen in enumerate(picks):
        if isinstance(chosen, Pick):
            new, state = execute(state, MakeMove(seat, chosen, SEED))
        else:
            new, state = pick(state, seat, *chosen)
        events.extend(new)
    return events, state


def types(events: Sequence[Event]) -> list[str]:
    return [e.type for e in events]
