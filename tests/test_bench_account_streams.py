"""bench/account_streams.py at a tiny size (20 account streams, 10 picks, one pick client, one
pair of loads), so that CI keeps it working: every stream opens, every pick's ``your_turn``
arrives on its account's stream, none twice on one connection."""

from __future__ import annotations

import asyncio
import math

from bench.account_streams import Options, run


def test_the_account_streams_bench_runs_at_a_tiny_size(database_url: str) -> None:
    options = Options(
        streams=20,
        playing=5,
        picks=10,
        spread=1,
        quiet=1,
        pick_clients=1,
        processes=1,
        pairs=1,
        settle=0,
    )
    report = asyncio.run(asyncio.wait_for(run(database_url, options), 240))
    print(report.text())
    assert report.turns.missed == 0 and len(report.turns.from_commit) == 10
    assert all(0 <= seconds < 10 for seconds in report.turns.from_commit)
    assert report.total("doubled") == 0 and report.total("items") >= 10
    assert report.total("waiting") == 5  # each playing account's turn, told at the start
    assert report.idles[0].picks and report.busies[0].picks and math.isfinite(report.ratio)
    assert not any(tally["errors"] for tally in report.tallies)
