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
RATING_CHANGED = "rating_changed"  # a rated game ended: the account's rating in its pool moved
TYPES = (
    GAME_STARTED,
    YOUR_TURN,
    GAME_FINISHED,
    REMATCH,
    CHALLENGE,
    CHALLENGE_ANSWERED,
    RATING_CHANGED,
)


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


class Cursor(NamedTuple):
    """A place in one account's feed: past every row of a transaction below ``tx``, and of
    ``tx`` itself up to ``id``. Sent as an SSE ``id`` (``<tx>-<id>``) and taken back from
    ``Last-Event-ID``."""

    tx: int
    id: int

    def encode(self) -> str:
        return f"{self.tx}-{self.id}"

    @classmethod
    def decode(cls, text: str) -> Cursor:
        """Inverse of :meth:`encode`; ``ValueError`` for anything else."""
        tx, sep, row = text.partition("-")
        if not sep or not tx.isdigit() or not row.isdigit() or len(text) > 42:
            raise ValueError(f"not a cursor of this stream: {text!r}")
        return cls(int(tx), int(row))


class Row(NamedTuple):
    tx: int
    id: int
    type: str
    game_id: UUID | None
    data: Mapping[str, Any]
    created_at: Any


READ = """
SELECT pg_snapshot_xmin(pg_current_snapshot())::text, f.tx::text, f.id, f.type, f.game_id,
       f.data, f.created_at
FROM (SELECT 1) one
LEFT JOIN LATERAL (
    SELECT * FROM account_feed
    WHERE account_id = %(account)s AND (tx, id) > (%(tx)s::xid8, %(id)s)
    ORDER BY tx, id LIMIT %(limit)s
) f ON true
"""
HEAD = "SELECT pg_snapshot_xmin(pg_current_snapshot())::text"
NEWEST = 2**62  # an id past any row's: a cursor "after every row of this tx"


def read(conn: Any, account_id: str, after: Cursor, limit: int) -> tuple[int, list[Row]]:
    """The oldest transaction still running (``xmin``: every row below it has committed or
    never will) and the account's rows after ``after``, at most ``limit``, in ``(tx, id)``
    order. Rows at or above ``xmin`` are visible now, but a row that commits later may come
    before them: a cursor moves only over rows below ``xmin``."""
    params = {"account": account_id, "tx": str(after.tx), "id": after.id, "limit": limit}
    rows = conn.execute(READ, params).fetchall()
    xmin = int(rows[0][0])
    found = [Row(int(r[1]), r[2], r[3], r[4], r[5], r[6]) for r in rows if r[1] is not None]
    return xmin, found


def head(conn: Any) -> Cursor:
    """A cursor before every row that may still commit, past every row that has for sure:
    a new stream starts there (rows just committed above it may be sent: at least once)."""
    row = conn.execute(HEAD).fetchone()
    return _below(row[0])


def _below(xmin: str) -> Cursor:
    """A cursor past every transaction below ``xmin`` (all ended), before any at or above it."""
    return Cursor(int(xmin) - 1, NEWEST)


OPENING = """
SELECT x.xmin::text, array(
    SELECT id FROM account_feed WHERE account_id = %s AND tx >= x.xmin::text::xid8
)
FROM (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS xmin) x
"""


def opening(conn: Any, account_id: str) -> tuple[Cursor, set[int]]:
    """Where a new stream of ``account_id`` starts (:func:`head`), and its rows already
    committed past there: what the stream's opening (the turns waiting now, read after this)
    already tells, so they are not sent again. A bot would take such a row for a turn still
    to play and answer it twice."""
    row = conn.execute(OPENING, (account_id,)).fetchone()
    return _below(row[0]), set(row[1])
