"""Building Sequence states for rule tests: real events, with the hands, chips and draw pile a test
chooses.

Chips are put on the board by ``card_played`` events of two-eyed jacks (``JD``) that the deal gave
the placing seat on top of its chosen hand, so that the hands end up exactly as chosen. A small draw
pile is a ``deck_reshuffled`` event of the chosen cards (Q8)."""

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
from domain.sequence import SEQUENCE, Discard, Pass, Play, State
from domain.sequence.board import Cell
from domain.sequence.game import (
    CARD_PLAYED,
    CARDS_DEALT,
    DECK_RESHUFFLED,
    TURN_PASSED,
    execute,
)
from domain.shuffle import ALGORITHM

SEED = bytes(range(32))


def lifecycle(players: int, seed: bytes = SEED, **rules: Any) -> list[Event]:
    """``game_created`` … ``game_started`` of a game with ``rules``."""
    names = [f"p{i}" for i in range(players)]
    teams = rules.pop("teams", 3 if players in (3, 9) else 2)
    return [
        Event(
            GAME_CREATED,
            {
                "game": "sequence",
                "rules": {"players": players, "teams": teams, "advanced_jacks": False, **rules},
                "seed_commitment": commitment(seed),
                "shuffle": ALGORITHM,
            },
        ),
        *(Event(SEAT_TAKEN, {"seat": i, "name": n}) for i, n in enumerate(names)),
        Event(GAME_STARTED, {"seats": names}),
    ]


def placed(seat: int, cell: Cell, turn: int, card: str = "JD") -> Event:
    data = {
        "seat": seat,
        "turn": turn,
        "team": -1,  # not read by evolve
        "card": card,
        "cell": list(cell),
        "removed": None,
        "drawn": None,
    }
    return Event(CARD_PLAYED, data)


def setup(
    hands: Sequence[Sequence[str]],
    chips: Mapping[Cell, int] | None = None,
    *,
    to_move: int = 0,
    pile: Sequence[str] | None = None,
    seed: bytes = SEED,
    **rules: Any,
) -> State:
    """A started game whose seats hold ``hands``, with ``chips`` (cell -> team) on the board, seat
    ``to_move`` to move, and (if given) exactly ``pile`` as the draw pile (in a seed order)."""
    players = len(hands)
    chips = dict(chips or {})
    events = lifecycle(players, seed, **rules)
    teams = fold(SEQUENCE, events).rules.teams  # type: ignore[union-attr]
    owners = list(chips.values())
    extra = [["JD"] * owners.count(seat % teams) if seat < teams else [] for seat in range(players)]
    events.append(
        Event(CARDS_DEALT, {"hands": [[*extra[s], *hand] for s, hand in enumerate(hands)]})
    )
    # passes first (a play resets the count of passes in a row), then the placements
    passes = (to_move - len(chips)) % players
    for turn in range(1, passes + 1):
        events.append(
            Event(TURN_PASSED, {"seat": (turn - 1) % players, "turn": turn, "auto": True})
        )
    for turn, (cell, team) in enumerate(chips.items(), start=passes + 1):
        events.append(placed(team, cell, turn))
    if pile is not None:
        events.append(
            Event(DECK_RESHUFFLED, {"reshuffle": 1, "cards": list(pile), "stream_offset": 500})
        )
    state = fold(SEQUENCE, events)
    assert state.current == to_move and [list(h) for h in state.hands] == [list(h) for h in hands]
    return state


def play(state: State, seat: int, card: str, cell: Cell) -> tuple[list[Event], State]:
    return execute(state, MakeMove(seat, Play(card, cell), SEED))


def discard(state: State, seat: int, card: str) -> tuple[list[Event], State]:
    return execute(state, MakeMove(seat, Discard(card), SEED))


def pass_turn(state: State, seat: int) -> tuple[list[Event], State]:
    return execute(state, MakeMove(seat, Pass(), SEED))


def types(events: Sequence[Event]) -> list[str]:
    return [e.type for e in events]


def row(r: int, columns: range, team: int) -> dict[Cell, int]:
    return {(r, c): team for c in columns}
