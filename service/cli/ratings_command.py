"""``cardroom ratings rebuild EXPORT…`` and ``cardroom ratings rebuild --from URL`` (issue 37):
every rating recomputed from game exports alone, with the same fold the service runs
(domain/ratings.py), and with ``--check`` compared, float for float, with what the service
stores.

``--from URL`` reads the exports from the service itself: the pool's rated games in finish order
(``GET /leaderboards/{pool}/games``), then each one's export. Nothing but the exports enters the
fold; the list only says which games to fetch, and each export must agree with it (the pool,
the finish time), else the rebuild stops: a list that hid or reordered games would show."""

from __future__ import annotations

import json
import struct
import sys
import time
import urllib.request
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from itertools import islice
from pathlib import Path
from typing import Any
from urllib.parse import quote, urljoin

from domain import ratings
from domain.audit import parse_export
from service.store.exports import TIMEOUT, is_url, read_export

PAGE = 1000  # games a page of GET /leaderboards/{pool}/games (its maximum)
FETCHES = 8  # exports fetched at once


def sources(given: Sequence[str]) -> Iterator[str]:
    """Each export named: a file, a game's URL, or a folder of ``*.jsonl`` files (sorted)."""
    for source in given:
        path = Path(source)
        if not is_url(source) and path.is_dir():
            yield from (str(p) for p in sorted(path.glob("*.jsonl")))
        else:
            yield source


def from_files(given: Sequence[str]) -> Iterator[ratings.RatedGame]:
    """The rated games among the exports ``given`` (read one at a time)."""
    for source in sources(given):
        game = ratings.from_export(parse_export(read_export(source)))
        if game is not None:
            yield game


def _get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=TIMEOUT) as response:
        return json.load(response)


def listed(base_url: str, pool: str) -> Iterator[dict[str, Any]]:
    """The pool's rated games as the service lists them, in finish order, every page."""
    base = base_url.rstrip("/")
    after: str | None = None
    while True:
        query = f"?limit={PAGE}" + ("" if after is None else f"&after={quote(after)}")
        page = _get_json(f"{base}/leaderboards/{quote(pool)}/games{query}")
        yield from page["games"]
        after = page["next_after"]
        if after is None:
            return


def fetched(base_url: str, pool: str) -> Iterator[ratings.RatedGame]:
    """Every rated game of ``pool`` on the service at ``base_url``, from its export, each
    checked against the list: rated, of the pool, finished when the list says."""

    def one(row: dict[str, Any]) -> ratings.RatedGame:
        source = urljoin(base_url.rstrip("/") + "/", row["export"])
        game = ratings.from_export(parse_export(read_export(source)))
        listed_at = datetime.fromisoformat(row["finished_at"])
        if game is None or game.pool != pool or game.finished_at != listed_at:
            raise ValueError(
                f"the export of {row['game_id']} is not the rated game of {pool} the service"
                f" lists (finished at {row['finished_at']})"
            )
        return game

    rows = listed(base_url, pool)
    with ThreadPoolExecutor(FETCHES) as pool_of_fetches:
        while chunk := list(islice(rows, FETCHES * 8)):  # a bounded number of exports held
            yield from pool_of_fetches.map(one, chunk)


def rebuild(
    given: Sequence[str], from_url: str | None = None, pools: Sequence[str] = ()
) -> ratings.Ledger:
    """The ledger of the rated games among the exports ``given``, or of every rated game on the
    service at ``from_url``; only the pools named (every pool if none)."""
    wanted = tuple(pools) or ratings.POOLS
    games: Iterable[ratings.RatedGame]
    if from_url is not None:
        games = (game for pool in wanted for game in fetched(from_url, pool))
    else:
        games = (game for game in from_files(given) if game.pool in wanted)
    return ratings.fold(games)


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


def _service_rating(base: str, account: str, pool: str, games: int) -> dict[str, Any] | None:
    """The service's rating of ``account`` in ``pool`` after its ``games``-th rated game
    (its history), or None if it has not played that many."""
    query = f"pool={quote(pool)}&order=oldest&limit=1&after={games - 1}"
    page = _get_json(f"{base}/accounts/{quote(account)}/ratings/history?{query}")
    changes = page["changes"]
    return changes[0]["after"] if changes and changes[0]["after"]["games"] == games else None


def check(ledger: ratings.Ledger, base_url: str) -> list[str]:
    """What differs between the rebuilt ratings and the service's (``GET /accounts/{id}/
    ratings`` of every account rebuilt); empty if every mu and sigma is the same float. Where
    the service has rated more games of an account since (games finishing during the
    rebuild), the rebuilt rating is compared with the service's after as many games."""
    differences = []
    base = base_url.rstrip("/")
    for account in sorted({account for _, account in ledger.ratings}):
        stored = {r["pool"]: r for r in _get_json(f"{base}/accounts/{account}/ratings")["ratings"]}
        for (pool, who), rating in ledger.ratings.items():
            if who != account:
                continue
            held = stored.get(pool)
            if held is not None and held["games"] > rating.games >= 1:
                held = _service_rating(base, account, pool, rating.games)
            if held is None or held["games"] != rating.games:
                differences.append(
                    f"{account} {pool}: rebuilt after {rating.games} games, but the service has"
                    f" {0 if held is None else held['games']}"
                )
            elif not (same(held["mu"], rating.mu) and same(held["sigma"], rating.sigma)):
                differences.append(
                    f"{account} {pool}: rebuilt mu {rating.mu!r} sigma {rating.sigma!r},"
                    f" the service has mu {held['mu']!r} sigma {held['sigma']!r}"
                )
    return differences


def ratings_command(
    given: Sequence[str],
    check_url: str | None,
    from_url: str | None = None,
    pools: Sequence[str] = (),
) -> int:
    """Print every rebuilt rating as JSON Lines; with ``check_url``, compare them with the
    service's (``""``: the ``from_url`` service). 0 if they match (or without a check), 1 if
    not, 2 if the exports cannot be read (or the arguments name none)."""
    problem = _usage(given, from_url, check_url, pools)
    if problem:
        print(f"cardroom ratings rebuild: {problem}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    try:
        ledger = rebuild(given, from_url, pools)
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
    differences = check(ledger, check_url or str(from_url))
    for difference in differences:
        print(difference, file=sys.stderr)
    print(
        f"{len(ledger.ratings) - len(differences)} of {len(ledger.ratings)} ratings are the"
        " service's, bit for bit",
        file=sys.stderr,
    )
    return 1 if differences else 0


def _usage(
    given: Sequence[str], from_url: str | None, check_url: str | None, pools: Sequence[str]
) -> str | None:
    """What is wrong with the arguments, if anything."""
    if bool(given) == (from_url is not None):
        return "give either exports (files, folders, game URLs) or --from URL, not both"
    if from_url is not None and not is_url(from_url):
        return f"--from takes the service's URL (http(s)://host), not {from_url!r}"
    if check_url == "" and from_url is None:
        return "--check without a URL checks against --from's service: name one"
    unknown = [pool for pool in pools if pool not in ratings.POOLS]
    if unknown:
        return f"no such pool {unknown[0]!r}; pools: {', '.join(ratings.POOLS)}"
    return None
