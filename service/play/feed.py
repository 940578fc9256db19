"""What an append tells the accounts that sit in its game (issue 35): the ``account_feed`` items
written in the append's own statement (service/store/account_feed.py), so that an account's
stream is exact: an item exists exactly when what it announces was committed.

- ``game_started``: to every account seat, when the events start the game;
- ``your_turn``: to each account seat the game waits for at a turn the events opened (Sushi Go!:
  every seat at each turn; Sequence: the seat to play), with the game, round and turn a move
  must name;
- ``game_finished``: to every account seat, when the events end the game (or cancel it);
- ``rematch``: to every account seat of a finished game, when its rematch is created.

Items are thin: the game and where it is. The stream's reader fetches the rest through the API,
as the account's seat may see it: no item shows a hand or a pick.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import UUID

from domain.decider import FINAL_EVENTS, GAME_CANCELLED, GAME_STARTED, Event
from service import autoplay
from service.games.registry import GameAdapter
from service.store.account_feed import GAME_FINISHED, REMATCH, YOUR_TURN, Item
from service.store.account_feed import GAME_STARTED as STARTED


def seats(state: Any) -> list[tuple[int, str]]:
    """Each seat an account holds in ``state``, with the account."""
    return [(seat, a) for seat, a in enumerate(getattr(state, "accounts", ())) if a is not None]


def items(
    adapter: GameAdapter, game_id: UUID, before: Any, after: Any, events: Sequence[Event]
) -> list[Item]:
    """The items of ``events``, appended to the game at ``before`` and leading to ``after``."""
    held = seats(after) or seats(before)
    if not held:
        return []  # the common case: a game without accounts costs nothing more
    game = adapter.game
    types = {event.type for event in events}
    where = {"game": game.name, "version": after.version}
    found: list[Item] = []
    if GAME_STARTED in types:
        found += [Item(a, STARTED, game_id, {**where, "seat": s}) for s, a in seats(after)]
    if types & FINAL_EVENTS:
        status = "cancelled" if GAME_CANCELLED in types else "over"
        found += [
            Item(a, GAME_FINISHED, game_id, {**where, "seat": s, "status": status}) for s, a in held
        ]
    elif adapter.turn(before) != adapter.turn(after) or GAME_STARTED in types:
        turn = adapter.position(after)
        waiting = set(autoplay.awaiting(game, after))
        found += [
            Item(a, YOUR_TURN, game_id, {**turn, "game": game.name, "seat": s})
            for s, a in seats(after)
            if s in waiting
        ]
    return found


def rematch_items(finished: Any, game_name: str, game_id: UUID, rematch_id: UUID) -> list[Item]:
    """``rematch`` to every account seat of the finished game ``game_id``."""
    data = {"game": game_name, "rematch_id": str(rematch_id)}
    return [Item(a, REMATCH, game_id, {**data, "seat": s}) for s, a in seats(finished)]
