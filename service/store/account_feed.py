"""What an account's stream tells it (issue 35, migration 0018): ``account_feed`` rows, written in
the transaction that makes them true (the append that starts a game or opens a seat's turn, the
insert of a challenge), each naming its account.

Rows commit out of ``id`` order: two transactions take ids, the later one commits first. A
reader that went by ``id`` alone would skip the earlier one. Ordered by ``(tx, id)`` (``tx`` is the
writing transaction's id) and read only below ``pg_snapshot_xmin(pg_current_snapshot())``, the
oldest transaction still running, every row a reader has not seen comes after its cursor: every
transaction below that bound has ended, and every later one gets a ``tx`` at or above it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple
from uuid import UUID

from psycopg.types.json import Jsonb

INSERT = "INSERT INTO account_feed (account_id, type, game_id, data) VALUES {values}"
VALUES = "(%s, %s, %s, %s)"

# The types of items (GET /accounts/me/stream's events).
GAME_STARTED = "game_started"
YOUR_TURN = "your_turn"
GAME_FINISHED = "game_finished"
REMATCH = "rematch"
CHALLENGE = "challenge"
CHALLENGE_ANSWERED = "challenge_answered"
TYPES = (GAME_STARTED, YOUR_TURN, GAME_FINISHED, REMATCH, CHALLENGE, CHALLENGE_ANSWERED)


class Item(NamedTuple):
    """A row to write: for ``account_id``, of ``type``, about ``game_id`` (if any)."""

    account_id: str
    type: str
    game_id: UUID | None
    data: Mapping[str, Any]


def cte(rows: int) -> str:
    """The CTE of an append's statement that writes ``rows`` items."""
    return f"account_feed_rows AS ({_insert(rows)})"


def _insert(rows: int) -> str:
    return INSERT.format(values=", ".join([VALUES] * rows))


def params(items: Sequence[Item]) -> list[Any]:
    return [
        v
        for item in items
        for v in (item.account_id, item.type, item.game_id, Jsonb(dict(item.data)))
    ]


def insert(cur: Any, items: Sequence[Item]) -> None:
    """Write ``items`` in the caller's transaction (``cur``'s)."""
    if items:
        cur.execute(_insert(len(items)), params(items))
