"""Recompute ratings yourself (issue 37), without the server: ``rebuild(exports)`` folds the rated
games among game exports (JSON Lines text, each one game's) in finish order, ties broken by
``game_id``, with the service's own code (the repository's ``domain/ratings.py``, on
``openskill``), and ``check(client, ledger)`` compares the result, float for float, with what
the service says (``GET /accounts/{id}/ratings``).

Like ``cardroom_client.env``, this needs the repository's ``domain/`` engine importable (and
``openskill``, pinned to the service's version: pip install "openskill==6.2.0"); the rest of the
package does not. ``cardroom ratings rebuild EXPORT… --check URL`` is the same from the command
line.

A rating depends on every rated game of its pool before it (the opponents' ratings at the
time): rebuild from the exports of every rated game of the pool, not only your own.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from domain.ratings import Ledger

    from .client import Client


def rebuild(exports: Iterable[str]) -> Ledger:
    """Every rating recomputed from the exports' text (each one game's JSON Lines)."""
    from domain.audit import parse_export
    from domain.ratings import rebuild as fold_exports

    return fold_exports(parse_export(text) for text in exports)


def same(a: float, b: float) -> bool:
    """Bit for bit (``==`` takes -0.0 for 0.0)."""
    return struct.pack("<d", a) == struct.pack("<d", b)


def check(client: Client, ledger: Ledger) -> list[str]:
    """What differs between ``ledger`` and the service's ratings of the same accounts; empty
    when every mu and sigma is the very same float."""
    differences = []
    held: dict[str, dict[str, Any]] = {}
    for (pool, account), rating in sorted(ledger.ratings.items()):
        if account not in held:
            held[account] = {r["pool"]: r for r in client.ratings(account)}
        stored = held[account].get(pool)
        if stored is None:
            differences.append(f"{account} {pool}: rebuilt, not on the service")
        elif not (same(stored["mu"], rating.mu) and same(stored["sigma"], rating.sigma)):
            differences.append(
                f"{account} {pool}: rebuilt {rating.mu!r}/{rating.sigma!r},"
                f" the service {stored['mu']!r}/{stored['sigma']!r}"
            )
    return differences
