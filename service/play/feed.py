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

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple
from uuid import UUID

from domain.decider import FINAL_EVENTS, GAME_CANCELLED, GAME_STARTED, Event
from service import autoplay
from service.games.registry import GameAdapter
from service.store.account_feed import GAME_FINISHED, REMATCH, YOUR_TURN, Item
from service.store.account_feed import GAME_STARTED as STARTED


class Moment(NamedTuple):
    """What a batch of events tells, whoever follows the game: an item ``type`` (the feed's), the
    ``seats`` it concerns (every seat for a start or an end; for a turn, those it waits for) and
    where the game is. The account feed tells it to the seats' accounts; webhooks
    (service/webhooks/messages.py) to a seat's or the creator's endpoints."""

    type: str
    seats: tuple[int, ...]
    data: Mapping[str, Any]


def seats(state: Any) -> list[tuple[int, str]]:
    """Each seat an account holds in ``state``, with the account."""
    return [(seat, a) for seat, a in enumerate(getattr(state, "accounts", ())) if a is not None]


def _taken(state: Any) -> tuple[int, ...]:
    """Each seat somebody (a person or a bot) holds in ``state``."""
    return tuple(seat for seat, name in enumerate(getattr(state, "names", ())) if name is not None)


def moments(adapter: GameAdapter, before: Any, after: Any, events: Sequence[Event]) -> list[Moment]:
    """What ``events``, appended to the game at ``before`` and leading to ``after``, tell."""
    game = adapter.game
    types = {event.type for event in events}
    where = {"game": game.name, "version": after.version}
    found: list[Moment] = []
    if GAME_STARTED in types:
        found.append(Moment(STARTED, _taken(after), where))
    if types & FINAL_EVENTS:
        status = "cancelled" if GAME_CANCELLED in types else "over"
        held = tuple(sorted({*_taken(before), *_taken(after)}))
        found.append(Moment(GAME_FINISHED, held, {**where, "status": status}))
    elif adapter.turn(before) != adapter.turn(after) or GAME_STARTED in types:
        waiting = set(autoplay.awaiting(game, after))
        turn = {**adapter.position(after), "game": game.name}
        found.append(Moment(YOUR_TURN, tuple(s for s in _taken(after) if s in waiting), turn))
    return found


def items(
    adapter: GameAdapter, game_id: UUID, before: Any, after: Any, events: Sequence[Event]
) -> list[Item]:
    """The items of ``events``, appended to the game at ``before`` and leading to ``after``."""
    if not (seats(after) or seats(before)):
        return []  # the common case: a game without accounts costs nothing more
    now, then = dict(seats(after)), dict(seats(before))
    found: list[Item] = []
    for moment in moments(adapter, before, after, events):
        # An end tells the accounts seated after it, or (none left) those seated before.
        held = (now or then) if moment.type == GAME_FINISHED else now
        found += [
            Item(held[s], moment.type, game_id, {**moment.data, "seat": s})
            for s in moment.seats
            if s in held
        ]
    return found


def rematch_items(finished: Any, game_name: str, game_id: UUID, rematch_id: UUID) -> list[Item]:
    """``rematch`` to every account seat of the finished game ``game_id``."""
    data = {"game": game_name, "rematch_id": str(rematch_id)}
    return [Item(a, REMATCH, game_id, {**data, "seat": s}) for s, a in seats(finished)]
