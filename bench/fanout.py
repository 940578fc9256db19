"""Issue 40's row "live fan-out to 10,000 watchers, p99 from commit", with the reader's interval
stated: the paced fan-out of bench/streams.py on its own, for `make bench`.

One ``cardroom serve`` with its defaults (rate limits off: the bench creates its games from one
address; access log off), ``--games`` 2-player Sushi Go games (a greedy bot in seat 1), and
``--watchers`` connections spread over them (bench/streams.py's mix: 20 % long polls, the rest
event streams, half of those with the seat's token), held by bench/crowd.py's processes. Then one
pick in each game, the picks spread evenly over ``--spread`` seconds, and for each game the time
until the last of its watchers has read the pick's first event, from that event's
``recorded_at``. ``recorded_at`` is the append transaction's time (``now()``), taken at or before
its commit: the figure is an upper bound on the time from the commit. The log reader polls every
``CARDROOM_LIVE_INTERVAL`` (service/live/reader.py), which the server takes from this process's
environment and the row states.

    python -m bench.fanout --url postgresql://postgres@127.0.0.1:5432/test   # a scratch db
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import tempfile
from pathlib import Path

from bench import http_bench
from bench.crowd import Crowds
from bench.streams import (
    Api,
    FanOut,
    accounted,
    fan_out,
    new_game,
    percentile,
    raise_open_files_limit,
    start_server,
    tear_down,
    wait_open,
    watcher_specs,
)

GOAL_P99_MS = 250.0
Goal = tuple[str, str, str, bool]  # what, measured, goal, met (as bench/run.py's)


async def measure(
    url: str, watchers: int, games_count: int, spread: float, processes: int = 4
) -> FanOut:
    """The paced fan-out to ``watchers`` watchers of ``games_count`` games on a migrated
    database ``url``."""
    port = http_bench.free_port()
    site = Path(tempfile.mkdtemp(prefix="cardroom-fanout-site-"))
    server = start_server(url, port, "gevent", site)
    crowds = Crowds(port, processes)
    try:
        api = Api(port)
        games = [await new_game(api) for _ in range(games_count)]
        crowds.open(watcher_specs(games, watchers))
        await wait_open(crowds, watchers, 300)
        await asyncio.sleep(2)  # the last long polls reach the server
        apis = [api] + [Api(port) for _ in range(7)]
        phase = fan_out(crowds, apis, games, watchers // games_count, spread)
        paced = await accounted(server.pid, url, phase)  # the server's CPU, transactions
        await paced.settle(apis)
        crowds.close()
        return paced
    finally:
        tear_down(crowds, server, site)


def interval_ms() -> float:
    from service.settings import settings

    return settings().live_interval * 1000


def bench(admin: str, watchers: int, games: int = 1000, spread: float = 20.0) -> list[Goal]:
    """What `make bench` runs: the fan-out's line and its goal row (none when ``watchers`` is 0
    or the open files limit is too low)."""
    if watchers <= 0:
        return []
    limit = raise_open_files_limit()
    if limit < watchers + 1024:
        print(f"\nfan-out: skipped, open files limited to {limit} (needs {watchers + 1024})")
        return []
    from service.store import db

    what = f"fan-out {watchers:,} watchers p99 (interval {interval_ms():g} ms)"
    name = f"cardroom_fanout_{secrets.token_hex(4)}"
    url = db.ensure_database(admin, name)
    try:
        db.migrate(url)
        print(f"\nlive fan-out to {watchers:,} watchers of {games:,} games:", flush=True)
        paced = asyncio.run(asyncio.wait_for(measure(url, watchers, games, spread), 900))
    except (RuntimeError, TimeoutError) as failed:  # a row that says so, not a stopped bench
        print(f"  not measured: {failed}")
        return [(what, "not measured", f"<= {GOAL_P99_MS:g} ms", False)]
    finally:
        db.drop_database(admin, name)
    print(f"  paced, {paced.rate()}, reader interval {interval_ms():g} ms:\n  {paced.row()}")
    p99 = percentile(paced.from_commit, 0.99) * 1000
    met = p99 <= GOAL_P99_MS and paced.missing == 0
    return [(what, f"{p99:.1f} ms", f"<= {GOAL_P99_MS:g} ms", met)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--url", default="postgresql://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--watchers", type=int, default=10_000)
    parser.add_argument("--games", type=int, default=1_000)
    parser.add_argument("--spread", type=float, default=20.0, help="seconds the picks spread over")
    args = parser.parse_args()
    for what, measured, goal, met in bench(args.url, args.watchers, args.games, args.spread):
        print(f"{what}  {measured}  {goal}  {'met' if met else 'MISSED'}")


if __name__ == "__main__":
    main()
