"""``cardroom ratings rebuild EXPORT…`` (issue 37): every rating recomputed from game exports
alone, with the same fold the service runs (domain/ratings.py), and with ``--check URL``
compared, float for float, with what the service stores."""

from __future__ import annotations

import json
import struct
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from domain import ratings
from domain.audit import parse_export
from service.store.exports import TIMEOUT, is_url, read_export


def sources(given: Sequence[str]) -> Iterator[str]:
    """Each export named: a file, a game's URL, or a folder of ``*.jsonl`` files (sorted)."""
    for source in given:
        path = Path(source)
        if not is_url(source) and path.is_dir():
            yield from (str(p) for p in sorted(path.glob("*.jsonl")))
        else:
            yield source


def rebuild(given: Sequence[str]) -> ratings.Ledger:
    """The ledger of every rated game among the exports ``given`` (read one at a time)."""
    return ratings.rebuild(parse_export(read_export(source)) for source in sources(given))


def lines(ledger: ratings.Ledger) -> Iterator[dict[str, Any]]:
    for (pool, account), rating in sorted(ledger.ratings.items()):
        yield {
            "pool": pool,
            "account_id": account,
            "mu": rating.mu,
            "sigma": rating.sigma,
            "ordinal": rating.ordinal,
            "games": rating.games,
            "provisional": rating.provisional,
        }


def same(a: float, b: float) -> bool:
    """Bit for bit (``==`` would take -0.0 for 0.0)."""
    return struct.pack("<d", a) == struct.pack("<d", b)


def check(ledger: ratings.Ledger, base_url: str) -> list[str]:
    """What differs between the rebuilt ratings and the service's (``GET /accounts/{id}/
    ratings`` of every account rebuilt); empty if every mu and sigma is the same float."""
    differences = []
    for account in sorted({account for _, account in ledger.ratings}):
        url = f"{base_url.rstrip('/')}/accounts/{account}/ratings"
        with urllib.request.urlopen(url, timeout=TIMEOUT) as response:
            stored = {r["pool"]: r for r in json.load(response)["ratings"]}
        for (pool, who), rating in ledger.ratings.items():
            if who != account:
                continue
            held = stored.get(pool)
            if held is None:
                differences.append(f"{account} {pool}: rebuilt, but the service has none")
            elif not (same(held["mu"], rating.mu) and same(held["sigma"], rating.sigma)):
                differences.append(
                    f"{account} {pool}: rebuilt mu {rating.mu!r} sigma {rating.sigma!r},"
                    f" the service has mu {held['mu']!r} sigma {held['sigma']!r}"
                )
    return differences


def ratings_command(given: Sequence[str], check_url: str | None) -> int:
    """Print every rebuilt rating as JSON Lines; with ``check_url``, compare them with the
    service's. 0 if they match (or without a check), 1 if not, 2 if an export is unreadable."""
    started = time.perf_counter()
    try:
        ledger = rebuild(given)
    except (OSError, ValueError, KeyError) as exc:
        print(f"cardroom ratings rebuild: {exc}", file=sys.stderr)
        return 2
    for line in lines(ledger):
        print(json.dumps(line))
    seconds = time.perf_counter() - started
    print(
        f"rebuilt {len(ledger.ratings)} ratings from {ledger.games} rated games in {seconds:.2f} s",
        file=sys.stderr,
    )
    if check_url is None:
        return 0
    differences = check(ledger, check_url)
    for difference in differences:
        print(difference, file=sys.stderr)
    print(
        f"{len(ledger.ratings) - len(differences)} of {len(ledger.ratings)} ratings are the"
        " service's, bit for bit",
        file=sys.stderr,
    )
    return 1 if differences else 0
