"""An account's games (issue 35, ``GET /accounts/{account_id}/games``): the history page and the
export stream, read from ``account_seats`` and the games' own events.

Why read at query time rather than keep an ``account_games`` projection: everything an item
shows beyond the seat is already in the log, behind an index. Its key, ``(game_created_at,
game_id)`` of ``account_seats`` (migration 0019), is written with the seat in the append's
statement; a game's status, start, finish, final scores and winners are its lifecycle events
(``game_started``, ``game_ended``, ``game_cancelled``), found through the partial index
``events_lifecycle`` (at most two rows a game); whether a seat was left before the start is a
short range of versions below ``game_started``. So a page of 100 costs a range scan of the
account's rows plus a few index probes per game (bench/account_history.py measures it against
the lobby's page), and nothing can be behind the log: a projection fed after the fact would
say how far behind it may be, one written with the final event would need rows that change
with the status (these tables take inserts only).

The key never changes, so a walk through the pages while games start and finish neither
repeats nor skips a game (``tests/test_account_history.py``, bench (c)); the status, the result
and the times are read as they are when each page is read. A seat left before the start
(``seat_left`` after its ``taken_at``) is not the account's game. Private games
(migration 0009) are listed only to a viewer whose account sat in them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID

from psycopg import sql

from domain.decider import (
    GAME_CANCELLED,
    GAME_CREATED,
    GAME_ENDED,
    GAME_STARTED,
    SEAT_LEFT,
    SEAT_TAKEN,
    Event,
)
from domain.sequence.upcast import upcast as sequence_upcast
from domain.sushigo.upcast import upcast as sushigo_upcast
from service.store.accounts import bot_account
from service.store.event_types import ORDERS, STATUSES, GameCursor

RESULTS = ("win", "loss", "draw")
NO_VERSION = 2**31 - 1  # above every version: a game not started (yet)
UPCAST = {"sushi-go": sushigo_upcast, "sequence": sequence_upcast}

# Whether the seat of ``{s}`` (an account_seats row) was given up before the start: a
# ``seat_left`` of that seat after it was taken and before ``game_started`` (a seat is left
# only before the start, domain/lifecycle.py). Through the partial index events_seat_left
# (migration 0019): a few rows however large the log.
_LEFT = f"""EXISTS (
    SELECT 1 FROM events x
    WHERE x.game_id = {{s}}.game_id AND x.type = '{SEAT_LEFT}'
    AND x.version > {{s}}.taken_at AND x.version < coalesce(l.start_v, l.final_v, {NO_VERSION})
    AND (x.data->>'seat')::int = {{s}}.seat)"""

# Another account's seat in the same game, not given up (``vs``, and the viewer of a private
# game).
_SAT = f"""EXISTS (
    SELECT 1 FROM account_seats o
    WHERE o.game_id = s.game_id AND o.account_id = %({{who}})s
    AND NOT {_LEFT.format(s="o")})"""

# No seat of the same account before this one in the game (bots only: a person holds one).
_FIRST = f"""NOT EXISTS (
    SELECT 1 FROM account_seats f
    WHERE f.game_id = s.game_id AND f.account_id = s.account_id AND f.seat < s.seat
    AND NOT {_LEFT.format(s="f")})"""

# One row per game of the account: a built-in bot may play several seats of one game; it is
# listed once, from its first seat (``_FIRST``). The lifecycle lateral reads the partial index
# events_lifecycle (its predicate is the IN list); status and result are derived, never stored.
# Rows come in the order of the index account_seats_history: a page evaluates the laterals of
# its own rows only.
HISTORY = f"""
SELECT s.game_id, g.game, s.game_created_at, s.seat, r.status, r.result,
       l.started_at, l.finished_at, l.ended, l.ended_schema, l.upto,
       EXISTS (SELECT 1 FROM private_games p WHERE p.game_id = s.game_id) AS private
FROM account_seats s
JOIN games g ON g.id = s.game_id
CROSS JOIN LATERAL (
    SELECT max(e.version) FILTER (WHERE e.type = '{GAME_STARTED}') AS start_v,
           min(e.recorded_at) FILTER (WHERE e.type = '{GAME_STARTED}') AS started_at,
           max(e.version) FILTER (WHERE e.type <> '{GAME_STARTED}') AS final_v,
           min(e.recorded_at) FILTER (WHERE e.type <> '{GAME_STARTED}') AS finished_at,
           coalesce(bool_or(e.type = '{GAME_CANCELLED}'), false) AS cancelled,
           (array_agg(e.data) FILTER (WHERE e.type = '{GAME_ENDED}'))[1] AS ended,
           max(e.schema_version) FILTER (WHERE e.type = '{GAME_ENDED}') AS ended_schema,
           coalesce(max(e.version) FILTER (WHERE e.type = '{GAME_STARTED}'),
                    max(e.version), {NO_VERSION}) AS upto
    FROM events e
    WHERE e.game_id = s.game_id
    AND e.type IN ('{GAME_STARTED}', '{GAME_ENDED}', '{GAME_CANCELLED}')
) l
CROSS JOIN LATERAL (
    SELECT CASE
        WHEN l.cancelled THEN 'cancelled'
        WHEN l.ended IS NOT NULL THEN 'over'
        WHEN l.start_v IS NOT NULL THEN 'playing'
        ELSE 'waiting'
    END AS status,
    CASE
        WHEN l.ended IS NULL THEN NULL
        WHEN l.ended->>'result' = 'draw' THEN 'draw'
        WHEN l.ended->'winners' @> to_jsonb(s.seat) THEN 'win'
        ELSE 'loss'
    END AS result
) r
WHERE {{where}}
ORDER BY {{order}}
LIMIT %(limit)s
"""

# The events that say who sits where: the creation (rules, reserved bots) and every seat taken
# or left, up to the start (seats change only before it).
SEATING = f"""
SELECT p.game_id, e.type, e.schema_version, e.data
FROM unnest(%s::uuid[], %s::int[]) AS p (game_id, upto)
CROSS JOIN LATERAL (
    SELECT e.version, e.type, e.schema_version, e.data FROM events e
    WHERE e.game_id = p.game_id AND e.version <= p.upto
    AND e.type IN ('{GAME_CREATED}', '{SEAT_TAKEN}', '{SEAT_LEFT}')
    OFFSET 0
) e
ORDER BY p.game_id, e.version
"""  # a range of each game's primary key, its first versions (OFFSET 0: kept a nested loop,
# never a scan of every event hashed against the page's games)


@dataclass(frozen=True, slots=True)
class HistoryQuery:
    """A history page's filters (validated by the route's query schema)."""

    account_id: str
    viewer: str | None = None  # the account asking (with history:read): sees its private games
    game: str | None = None
    status: str | None = None
    since: datetime | None = None  # games created at or after
    until: datetime | None = None  # games created before
    vs: str | None = None  # games this other account sat in too
    result: str | None = None
    order: str = "oldest"
    after: GameCursor | None = None


@dataclass(frozen=True, slots=True)
class Seat:
    seat: int
    name: str | None  # None: free
    bot: str | None
    account_id: str | None  # a person's account, ``bot:<kind>`` for a bot, None: anonymous


@dataclass(frozen=True, slots=True)
class HistoryRow:
    """One game of the account's history, with only public facts."""

    game_id: UUID
    game: str
    created_at: datetime
    seat: int
    status: str
    result: str | None
    started_at: datetime | None
    finished_at: datetime | None
    private: bool
    ended: dict[str, Any] | None  # game_ended's data, upcast: winners, totals (its seed too)
    rules: dict[str, Any] = field(default_factory=dict)
    turn_seconds: int | None = None
    seats: tuple[Seat, ...] = ()

    @property
    def cursor(self) -> GameCursor:
        return GameCursor(self.created_at, self.game_id)


def _where(query: HistoryQuery) -> tuple[list[sql.Composable], dict[str, Any]]:
    if query.order not in ORDERS:
        raise ValueError(f"order must be one of {ORDERS}")
    if query.status is not None and query.status not in STATUSES:
        raise ValueError(f"status must be one of {STATUSES}")
    if query.result is not None and query.result not in RESULTS:
        raise ValueError(f"result must be one of {RESULTS}")
    where: list[sql.Composable] = [
        sql.SQL("s.account_id = %(account)s"),
        sql.SQL("NOT " + _LEFT.format(s="s")),
        sql.SQL(_FIRST),
    ]
    params: dict[str, Any] = {"account": query.account_id}
    wanted = (
        ("g.game = %(game)s", "game", query.game),
        ("r.status = %(status)s", "status", query.status),
        ("r.result = %(result)s", "result", query.result),
        ("s.game_created_at >= %(since)s", "since", query.since),
        ("s.game_created_at < %(until)s", "until", query.until),
        (_SAT.format(who="vs"), "vs", query.vs),
    )
    for clause, name, value in wanted:  # only the filters in use go into the SQL
        if value is not None:
            where.append(sql.SQL(clause))
            params[name] = value
    private = "NOT EXISTS (SELECT 1 FROM private_games p WHERE p.game_id = s.game_id)"
    if query.viewer is None:
        where.append(sql.SQL(private))
    else:
        where.append(sql.SQL(f"({private} OR {_SAT.format(who='viewer')})"))
        params["viewer"] = query.viewer
    if query.after is not None:
        past = "<" if query.order == "newest" else ">"
        where.append(sql.SQL(f"(s.game_created_at, s.game_id) {past} (%(after_at)s, %(after_id)s)"))
        params.update(after_at=query.after.created_at, after_id=query.after.id)
    return where, params


def page(store: Any, query: HistoryQuery, limit: int) -> list[HistoryRow]:
    """Up to ``limit`` games of the account past ``query.after`` in ``query.order``, each with
    its seats. Two statements on one pooled connection."""
    where, params = _where(query)
    order = "DESC" if query.order == "newest" else "ASC"
    statement = sql.SQL(HISTORY).format(
        where=sql.SQL(" AND ").join(where),
        order=sql.SQL(f"s.game_created_at {order}, s.game_id {order}"),
    )
    with store.connection() as conn:
        rows = conn.execute(statement, {**params, "limit": limit}).fetchall()
        if not rows:
            return []
        ids = [row[0] for row in rows]
        seating = conn.execute(SEATING, (ids, [row[10] for row in rows])).fetchall()
    by_game: dict[UUID, list[tuple[str, int, dict[str, Any]]]] = {}
    for game_id, kind, schema, data in seating:
        by_game.setdefault(game_id, []).append((kind, schema, data))
    return [_row(row, by_game.get(row[0], [])) for row in rows]


FIRST_BATCH = 20  # the export's first lines leave before a page of 100 would be read


def walk(
    store: Any, query: HistoryQuery, cap: int, batch: int, start: Any = None
) -> Iterator[HistoryRow]:
    """Up to ``cap`` games of the account in ``query.order``, read ``batch`` at a time (a small
    first batch) by the same keyset as the pages: memory stays one batch, no connection is
    held between batches. ``start``: called before each batch (a fresh time budget)."""
    sent = 0
    after = query.after
    while sent < cap:
        if start is not None:
            start()
        want = min(batch if sent else min(batch, FIRST_BATCH), cap - sent)
        rows = page(store, _with_after(query, after), want)
        yield from rows
        sent += len(rows)
        if len(rows) < want:
            return
        after = rows[-1].cursor


def _with_after(query: HistoryQuery, after: GameCursor | None) -> HistoryQuery:
    fields = {name: getattr(query, name) for name in HistoryQuery.__slots__}
    return HistoryQuery(**{**fields, "after": after})


def _row(row: Sequence[Any], seating: list[tuple[str, int, dict[str, Any]]]) -> HistoryRow:
    (game_id, game, created_at, seat, status, result) = row[:6]
    (started_at, finished_at, ended, ended_schema, _upto, private) = row[6:]
    upcast = UPCAST.get(game)
    if ended is not None and upcast is not None:
        ended = dict(upcast(Event(GAME_ENDED, ended, ended_schema)).data)
    rules, turn_seconds, seats = _seats(seating)
    return HistoryRow(
        game_id,
        game,
        created_at,
        int(seat),
        status,
        result,
        started_at,
        finished_at,
        bool(private),
        ended,
        rules,
        turn_seconds,
        seats,
    )


def _seats(
    seating: list[tuple[str, int, dict[str, Any]]],
) -> tuple[dict[str, Any], int | None, tuple[Seat, ...]]:
    """The rules and who sits where, folded from the creation and the seats' events (a seat
    left is free again; a seat kept for a bot names its kind before the bot sits)."""
    rules: dict[str, Any] = {}
    turn_seconds = None
    seats: dict[int, Seat] = {}
    reserved: dict[int, str] = {}
    for kind, _schema, data in seating:
        if kind == GAME_CREATED:
            rules = dict(data.get("rules") or {})
            turn_seconds = data.get("turn_seconds")
            reserved = {b["seat"]: b["kind"] for b in data.get("bots") or ()}
        elif kind == SEAT_TAKEN:
            bot = data.get("bot")
            account = data.get("account") or (bot_account(bot) if bot else None)
            seats[data["seat"]] = Seat(data["seat"], data.get("name"), bot, account)
        elif kind == SEAT_LEFT:
            seats.pop(data["seat"], None)
    players = int(rules.get("players") or (max(seats, default=-1) + 1))
    every = tuple(seats.get(n) or Seat(n, None, reserved.get(n), None) for n in range(players))
    return rules, turn_seconds, every
