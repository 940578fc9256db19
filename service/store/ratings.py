"""Ratings (issue 37, migration 0022): written in the transaction of a rated game's last event,
read by the ratings routes.

Why in the append's transaction, under a lock of the pool: a rebuild from exports folds the
games "in finish order, ties broken by game_id", so the live ratings must be folded in an order
the exports show. Two games of one pool finishing at once on two hosts would otherwise each read
the ratings before the other's change (a lost update) or apply in an order no export shows. So
the transaction that appends a rated game's last events first takes the pool's advisory lock
(per transaction, on the database: every host's finishes of the pool queue on it), then takes
the finish time under it (``clock_timestamp()``, made strictly later than the pool's last
finish), writes the events with that ``recorded_at`` (the export's last line carries it), reads
the players' ratings, computes the changes (domain/ratings.py) and writes them. Rated finishes
of a pool commit in the order of their finish times; a rebuild sorts by them. The
``rated_games`` primary key rates a game once, whatever else happens: a second append of the
game's end loses on the events' own key anyway.

An advisory lock rather than ``SELECT ... FOR UPDATE`` of a pool row: the app role may not lock
rows (that needs UPDATE, see service/store/invitations.py), and the history stays append-only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple
from uuid import UUID

from domain import ratings as model
from domain.ratings import Change, Rating
from service.store import account_feed

LOCK_CLASS = 0x726174  # "rat": the advisory locks' first key, for rating pools
LOCK = "SELECT pg_advisory_xact_lock(%s, hashtext(%s::text))"
# Under the lock: now, or just after the pool's last finish if the clock says otherwise
# (another host's clock ahead of this one, or the same microsecond).
FINISH_TIME = """
SELECT greatest(clock_timestamp(),
                (SELECT max(finished_at) FROM rated_games WHERE pool = %s)
                + interval '1 microsecond')
"""
INSERT_GAME = "INSERT INTO rated_games (game_id, pool, finished_at) VALUES (%s, %s, %s)"
CURRENT = (
    "SELECT account_id, mu, sigma, games FROM ratings WHERE pool = %s AND account_id = ANY(%s)"
)
INSERT_CHANGE = """
INSERT INTO rating_changes (account_id, pool, games, game_id, seat, rank, mu_before,
    sigma_before, mu, sigma, finished_at)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
"""
UPSERT = """
INSERT INTO ratings (account_id, pool, mu, sigma, ordinal, games, provisional, game_id,
    updated_at)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)
ON CONFLICT (account_id, pool) DO UPDATE SET mu = excluded.mu, sigma = excluded.sigma,
    ordinal = excluded.ordinal, games = excluded.games, provisional = excluded.provisional,
    game_id = excluded.game_id, updated_at = excluded.updated_at
"""


class RatedFinish(NamedTuple):
    """An append that ends a rated game: the game's name and the state the events lead to."""

    game: str
    state: Any


def append(
    conn: Any,
    game_id: UUID,
    finish: RatedFinish,
    query: str,
    params: list[Any],
    rows: Sequence[tuple[Any, ...]],
    before: Callable[[Any], None] | None = None,
) -> list[Change]:
    """Append the events ``rows`` (with the statement ``query`` and its ``params`` before the
    rows') and rate the game they end, in one transaction; ``before``: checks of the caller
    in it first (a private game's invitation). The changes made."""
    pool = model.pool_of(finish.game, finish.state.rules)
    with conn.transaction(), conn.cursor() as cur:
        if before is not None:
            before(cur)
        cur.execute(LOCK, (LOCK_CLASS, pool))
        finished_at = cur.execute(FINISH_TIME, (pool,)).fetchone()[0]
        cur.execute(query, [*params, *(v for row in rows for v in (*row, finished_at))])
        game = model.rated_game(finish.game, str(game_id), finish.state, finished_at)
        assert game is not None, "a rated finish of a game that is not rated"
        changes = _rate(cur, game)
        cur.execute(INSERT_GAME, (game_id, pool, finished_at))
        _write(cur, game_id, changes, finished_at)
    return changes


def _rate(cur: Any, game: model.RatedGame) -> list[Change]:
    people = [p.player for p in game.placings if not model.is_anchor(p.player)]
    rows = cur.execute(CURRENT, (game.pool, people)).fetchall()
    held = {(game.pool, a): Rating(mu, sigma, games) for a, mu, sigma, games in rows}
    return model.rate(game, lambda player: model.current(held, game.pool, player))


def _write(cur: Any, game_id: UUID, changes: Sequence[Change], finished_at: datetime) -> None:
    if not changes:
        return
    cur.executemany(
        INSERT_CHANGE,
        [
            (c.player, c.pool, c.after.games, game_id, c.seat, c.rank)
            + (c.before.mu, c.before.sigma, c.after.mu, c.after.sigma, finished_at)
            for c in changes
        ],
    )
    cur.executemany(
        UPSERT,
        [
            (c.player, c.pool, c.after.mu, c.after.sigma, c.after.ordinal, c.after.games)
            + (c.after.provisional, game_id, finished_at)
            for c in changes
        ],
    )
    account_feed.insert(cur, [_item(game_id, c) for c in changes])


def _item(game_id: UUID, change: Change) -> account_feed.Item:
    return account_feed.Item(
        change.player,
        account_feed.RATING_CHANGED,
        game_id,
        {
            "pool": change.pool,
            "seat": change.seat,
            "rank": change.rank,
            "before": shown(change.before),
            "after": shown(change.after),
        },
    )


def shown(rating: Rating) -> dict[str, Any]:
    return {
        "mu": rating.mu,
        "sigma": rating.sigma,
        "ordinal": rating.ordinal,
        "games": rating.games,
        "provisional": rating.provisional,
    }


# --- reads ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Current:
    """An account's rating in a pool as stored, with when it last changed."""

    pool: str
    rating: Rating
    updated_at: datetime | None
    anchor: bool = False


@dataclass(frozen=True, slots=True)
class HistoryRow:
    account_id: str
    game_id: UUID
    pool: str
    seat: int
    rank: int
    before: Rating
    after: Rating
    finished_at: datetime


def of_account(store: Any, account_id: str) -> list[Current]:
    """Every pool's rating of the account (an anchor's fixed ones for a built-in bot)."""
    anchor = model.ANCHORS.get(account_id)
    if anchor is not None:
        return [Current(pool, anchor, None, True) for pool in model.POOLS]
    with store.connection() as conn:
        rows = conn.execute(
            "SELECT pool, mu, sigma, games, updated_at FROM ratings WHERE account_id = %s"
            " ORDER BY pool",
            (account_id,),
        ).fetchall()
    return [Current(pool, Rating(mu, sigma, games), at) for pool, mu, sigma, games, at in rows]


def in_pools(store: Any, wanted: Sequence[tuple[str, str]]) -> dict[tuple[str, str], Current]:
    """The current rating of each ``(pool, account)`` asked for that has one (an anchor's fixed
    one for a built-in bot), in one read: the lobby's rated games, a page at a time."""
    found = {
        (pool, who): Current(pool, model.ANCHORS[who], None, True)
        for pool, who in wanted
        if model.is_anchor(who)
    }
    asked = sorted({(pool, who) for pool, who in wanted if not model.is_anchor(who)})
    if not asked:
        return found
    with store.connection() as conn:
        rows = conn.execute(
            "SELECT pool, account_id, mu, sigma, games, updated_at FROM ratings"
            " WHERE (pool, account_id) IN (SELECT * FROM unnest(%s::text[], %s::text[]))",
            ([pool for pool, _ in asked], [who for _, who in asked]),
        ).fetchall()
    for pool, who, mu, sigma, games, at in rows:
        found[(pool, who)] = Current(pool, Rating(mu, sigma, games), at)
    return found


def history(
    store: Any, account_id: str, pool: str, after: int | None, limit: int, newest: bool = True
) -> list[HistoryRow]:
    """The account's rated games of ``pool``, keyset-paged by their number (``games``)."""
    order = "DESC" if newest else "ASC"
    past = "" if after is None else ("AND games < %s" if newest else "AND games > %s")
    query = f"""
        SELECT account_id, game_id, pool, seat, rank, mu_before, sigma_before, games, mu, sigma,
               finished_at
        FROM rating_changes WHERE account_id = %s AND pool = %s {past}
        ORDER BY games {order} LIMIT %s
    """
    params = [account_id, pool, *([] if after is None else [after]), limit]
    with store.connection() as conn:
        rows = conn.execute(query, params).fetchall()
    return [_history(row) for row in rows]


@dataclass(frozen=True, slots=True)
class Standing:
    account_id: str
    name: str
    rating: Rating

    @property
    def cursor(self) -> tuple[float, str]:
        return (self.rating.ordinal, self.account_id)


def leaderboard(
    store: Any, pool: str, after: tuple[float, str] | None, limit: int
) -> list[Standing]:
    """Non-provisional ratings of ``pool``, best ordinal first (then account id), keyset-paged
    on the index ratings_leaderboard."""
    past = "" if after is None else "AND (r.ordinal, r.account_id) < (%s, %s)"
    order = "ORDER BY r.ordinal DESC, r.account_id DESC"
    query = f"""
        SELECT r.account_id, a.name, r.mu, r.sigma, r.games FROM ratings r
        JOIN accounts a ON a.id = r.account_id
        WHERE r.pool = %s AND NOT r.provisional {past} {order} LIMIT %s
    """
    params = [pool, *([] if after is None else after), limit]
    with store.connection() as conn:
        rows = conn.execute(query, params).fetchall()
    return [Standing(a, name, Rating(mu, sg, games)) for a, name, mu, sg, games in rows]


@dataclass(frozen=True, slots=True)
class PoolGame:
    """A rated game of a pool, where it stands in the rebuild's order."""

    game_id: UUID
    finished_at: datetime

    @property
    def cursor(self) -> tuple[datetime, UUID]:
        return (self.finished_at, self.game_id)


def games_of_pool(
    store: Any, pool: str, after: tuple[datetime, UUID] | None, limit: int
) -> list[PoolGame]:
    """The rated games of ``pool`` in finish order, ties by game id (the rebuild's order),
    keyset-paged on ``rated_games_pool_order``. Rated finishes of a pool commit in finish order
    (they queue on the pool's lock, see above), so any snapshot holds a prefix of that order: a
    walk of the pages misses none and later games only ever come after its last page."""
    past = "" if after is None else "AND (finished_at, game_id) > (%s, %s)"
    query = f"""
        SELECT game_id, finished_at FROM rated_games WHERE pool = %s {past}
        ORDER BY finished_at, game_id LIMIT %s
    """
    params = [pool, *([] if after is None else after), limit]
    with store.connection() as conn:
        rows = conn.execute(query, params).fetchall()
    return [PoolGame(game_id, at) for game_id, at in rows]


def of_game(store: Any, game_id: UUID) -> dict[int, HistoryRow]:
    """The rating changes a rated game made, by seat (empty until it is rated)."""
    with store.connection() as conn:
        rows = conn.execute(
            "SELECT account_id, game_id, pool, seat, rank, mu_before, sigma_before, games, mu,"
            " sigma, finished_at FROM rating_changes WHERE game_id = %s ORDER BY seat",
            (game_id,),
        ).fetchall()
    return {row.seat: row for row in map(_history, rows)}


def _history(row: Sequence[Any]) -> HistoryRow:
    account, gid, pool, seat, rank, mu_before, sigma_before, games, mu, sigma, at = row
    before, after = Rating(mu_before, sigma_before, games - 1), Rating(mu, sigma, games)
    return HistoryRow(account, gid, pool, seat, rank, before, after, at)


def stored(store: Any) -> dict[tuple[str, str], Rating]:
    """Every account's current rating in every pool (the rebuild's check)."""
    with store.connection() as conn:
        rows = conn.execute("SELECT pool, account_id, mu, sigma, games FROM ratings").fetchall()
    return {(pool, a): Rating(mu, sigma, games) for pool, a, mu, sigma, games in rows}
