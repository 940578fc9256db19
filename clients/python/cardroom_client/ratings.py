"""Recompute ratings yourself (issue 37): ``rebuild(exports)`` folds the rated games among game
exports (JSON Lines text, each one game's) in finish order, ties broken by ``game_id``, with the
service's own code (the repository's ``domain/ratings.py``, on ``openskill``);
``rebuild_from(client)`` fetches those exports from the service first (every rated game of the
pools, listed by ``GET /leaderboards/{pool}/games``); and ``check(client, ledger)`` compares the
result, float for float, with what the service says (``GET /accounts/{id}/ratings``).

Like ``cardroom_client.env``, this needs the game rules installed (cardroom-rules, the
repository's ``domain/``: ``pip install ./domain``, which brings ``openskill`` at the service's
pinned version); the rest of the package does not. ``cardroom ratings rebuild EXPORT…
--check URL`` and ``cardroom ratings rebuild --from URL --check`` are the same from the command
line.

A rating depends on every rated game of its pool before it (the opponents' ratings at the
time): rebuild from the exports of every rated game of the pool, not only your own.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from domain.ratings import Ledger, RatedGame

    from .client import Client


def rebuild(exports: Iterable[str]) -> Ledger:
    """Every rating recomputed from the exports' text (each one game's JSON Lines)."""
    from domain.audit import parse_export
    from domain.ratings import rebuild as fold_exports

    return fold_exports(parse_export(text) for text in exports)


def fetched(client: Client, pool: str) -> Iterator[RatedGame]:
    """Every rated game of ``pool`` from its export on the service, each checked against the
    service's list (rated, of the pool, finished when listed): ValueError if one is not."""
    from domain.audit import parse_export
    from domain.ratings import from_export

    for row in client.pool_games(pool):
        game = from_export(parse_export(client.export_text(row["game_id"])))
        if game is None or game.pool != pool:
            raise ValueError(f"the export of {row['game_id']} is not a rated game of {pool}")
        if game.finished_at != datetime.fromisoformat(row["finished_at"]):
            raise ValueError(f"the export of {row['game_id']} finished at another time")
        yield game


def rebuild_from(client: Client, pools: Sequence[str] | None = None) -> Ledger:
    """Every rating of ``pools`` (every pool if None) recomputed from the exports of every rated
    game the service lists: the lists only say which exports to read, the fold reads nothing
    else."""
    from domain.ratings import POOLS, fold

    return fold(game for pool in pools or POOLS for game in fetched(client, pool))


def same(a: float, b: float) -> bool:
    """Bit for bit (``==`` takes -0.0 for 0.0)."""
    return struct.pack("<d", a) == struct.pack("<d", b)


def check(client: Client, ledger: Ledger) -> list[str]:
    """What differs between ``ledger`` and the service's ratings of the same accounts; empty
    when every mu and sigma is the very same float. A rating the service has moved on since
    (rated games that finished after the rebuild read its exports) is compared with the
    service's after as many games (its history)."""
    differences = []
    held: dict[str, dict[str, Any]] = {}
    for (pool, account), rating in sorted(ledger.ratings.items()):
        if account not in held:
            held[account] = {r["pool"]: r for r in client.ratings(account)}
        stored = held[account].get(pool)
        if stored is not None and stored["games"] > rating.games >= 1:
            stored = client.rating_after(account, pool, rating.games)
        if stored is None or stored["games"] != rating.games:
            differences.append(
                f"{account} {pool}: rebuilt after {rating.games} games, the service has"
                f" {0 if stored is None else stored['games']}"
            )
        elif not (same(stored["mu"], rating.mu) and same(stored["sigma"], rating.sigma)):
            differences.append(
                f"{account} {pool}: rebuilt {rating.mu!r}/{rating.sigma!r},"
                f" the service {stored['mu']!r}/{stored['sigma']!r}"
            )
    return differences
