"""`make bench`: issue 32's goals, each against a baseline measured in the same run (this machine
is noisy and shared: absolute times move 2x between runs, ratios taken side by side much less).

The database server is the one ``DATABASE_URL`` names, else the embedded PostgreSQL (as for
`serve`); every database the bench writes is a scratch one, dropped after it. In order:

- the domain (simulation and fold, no database; context) and the engine's instructions per game
  (callgrind): the guard that it does not grow past ``ENGINE_GUARD``;
- the PettingZoo environment's steps beside the engine's own random play (bench/env_bench.py,
  issue 30: the wrapper costs at most 25 %);
- **goal 1, server CPU per request** (bench/request_cpu.py): one gunicorn worker of ``cardroom
  serve`` (its defaults: gevent, rate limits and the access log on) beside one of a bare Flask
  app (bench/bare_flask.py: one route, a small JSON object, gunicorn's gevent worker, the same
  settings), the CPU seconds of each (/proc) around a fixed number of requests, alternating:
  ``GET /livez``, a seat's ``GET /games/{id}``, a pick with its ``Idempotency-Key``, each
  divided by the bare app's request;
- the store's floor (a single-row autocommit INSERT, bench/store_bench.py; context);
- **goal 2, latency**: one client's picks (bench/http_bench.py, no key, the server's default
  workers), a single-row autocommit INSERT timed right before each pick: pick p50 / INSERT p50;
- **goal 3, throughput**: picks/s with 32 clients, this code and the baseline tree (``--baseline
  REV``, default d17880d, the code issue 40 started from; issue 32's was e2a53c3) served one
  after the other on databases of their own, in alternating pairs;
- **issue 40's first row, appends** (bench/notify_ceiling.py): unthrottled one-row appends from
  16 connections (pgbench) into a table shaped like ``events`` with 6 processes following it
  with the service's log reader, over the same rows with nobody following, alternating;
- **issue 40's goal 4, a peer** (bench/peer.py): boardgame.io 0.50 with bgio-postgres on the same
  PostgreSQL, a Sushi Go!-shaped game, 32 clients on each side in alternating runs: cardroom's
  moves/s and move p50 over the peer's (skipped with a message without node and npm);
- **issue 40's fan-out row** (bench/fanout.py): BENCH_WATCHERS connections (default 10,000; 0
  skips it) watching a tenth as many games, one pick in each, paced: p99 until the last watcher
  of its game read it, from the append, with the log reader's interval.

Environment: BENCH_REQUESTS (GETs per endpoint for goal 1, default 2000), BENCH_CPU_GAMES (whole
games of keyed picks for goal 1, default 4), BENCH_GAMES (games per client for goals 2 and 3,
default 1), BENCH_PAIRS (baseline/this pairs for goal 3, default 2), BENCH_OPS (operations per
store loop, default 1000), BENCH_ENGINE_GAMES (games counted under callgrind, default 10; 0 skips
it), BENCH_GROWTH_EVENTS (0, the default, skips issue 15's growth run; 1000000 runs it).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg

from bench import (
    domain_bench,
    env_bench,
    fanout,
    growth,
    http_bench,
    notify_ceiling,
    peer,
    request_cpu,
    store_bench,
)
from service.store import db

BASELINE_REV = "d17880d"  # main when issue 40's work began (issue 32's was e2a53c3)
GOAL_CPU = {  # server CPU per request / the bare Flask app's (issue 32; issue 40's pick)
    request_cpu.LIVEZ: 1.25,
    request_cpu.VIEW: 2.0,
    request_cpu.KEYED_PICK: 3.5,
}
GOAL_LATENCY_X = 3.0  # pick p50 (one client) <= 3x the interleaved INSERT's p50
GOAL_THROUGHPUT_X = 2.0  # picks/s with 32 clients >= 2x the baseline's
ENGINE_GUARD = 5_710_000  # instructions per random 4-player game: must not grow (issue 32)

Goal = tuple[str, str, str, bool]  # what, measured, goal, met


def engine_instructions(games: int, workload: str = "game") -> int | None:
    if games <= 0 or shutil.which("valgrind") is None:
        return None
    script = Path(__file__).with_name("engine_instructions.sh")
    env = {**os.environ, "PYTHON": sys.executable}
    done = subprocess.run(
        [str(script), str(games), workload], check=True, capture_output=True, text=True, env=env
    )
    return int(done.stdout.split()[1])


def domain() -> dict[str, Any]:
    # In its own process: it pins itself to one core, which the HTTP benchmark must not inherit.
    done = subprocess.run(
        [sys.executable, "-m", "bench.domain_bench", "--json"],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(done.stdout)


@contextlib.contextmanager
def source_tree(rev: str) -> Iterator[str | None]:
    """The tree of commit ``rev`` of this repository in a temporary folder (None for "none",
    or outside a git checkout)."""
    if rev == "none":
        yield None
        return
    repo = Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory(prefix="cardroom-baseline-") as folder:
        archive = subprocess.run(
            ["git", "-C", str(repo), "archive", rev], check=True, capture_output=True
        )
        subprocess.run(["tar", "-x", "-C", folder], input=archive.stdout, check=True)
        yield folder


@contextlib.contextmanager
def scratch_database(admin: str) -> Iterator[str]:
    name = f"cardroom_bench_{secrets.token_hex(4)}"
    url = db.ensure_database(admin, name)
    try:
        yield url
    finally:
        db.drop_database(admin, name)


def goals_table(goals: list[Goal]) -> str:
    width = max(len(g[0]) for g in goals)
    lines = [f"{'goal':<{width}}  {'measured':>12}  {'goal':>10}  status"]
    for what, measured, goal, met in goals:
        lines.append(f"{what:<{width}}  {measured:>12}  {goal:>10}  {'met' if met else 'MISSED'}")
    return "\n".join(lines)


def throughput(
    this_url: str, base_url: str, baseline: str, games: int, pairs: int
) -> tuple[list[http_bench.HttpResult], list[http_bench.HttpResult]]:
    """32 clients against the baseline tree and this code, alternately (baseline first, then
    this first, ...): each side's runs."""
    mine: list[http_bench.HttpResult] = []
    theirs: list[http_bench.HttpResult] = []
    for turn in range(pairs):
        order = [("baseline", base_url, baseline), ("this", this_url, None)]
        for label, url, checkout in order[:: 1 if turn % 2 == 0 else -1]:
            result = http_bench.run(url, 32, games, checkout=checkout)
            print(f"[{label}] {result}", flush=True)
            (mine if checkout is None else theirs).append(result)
    return mine, theirs


def rate(results: list[http_bench.HttpResult]) -> float:
    """Picks per second over all of ``results`` together."""
    return sum(r.picks for r in results) / sum(r.picks / r.picks_per_s for r in results)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--baseline",
        metavar="REV",
        default=os.environ.get("BENCH_BASELINE", BASELINE_REV),
        help=f"the commit goal 3 compares with (default {BASELINE_REV}; 'none' skips it)",
    )
    args = parser.parse_args()
    env = os.environ.get
    figures = domain()
    print(domain_bench.table(figures))
    instructions = engine_instructions(int(env("BENCH_ENGINE_GAMES", "10")))
    if instructions is not None:
        print(f"engine: {instructions:,} instructions per random 4-player game (callgrind)")
    wrapped = env_bench.run()  # issue 30: the PettingZoo environment beside the engine
    print(env_bench.table(wrapped))
    env_instructions = engine_instructions(int(env("BENCH_ENGINE_GAMES", "10")), "env")
    if env_instructions is not None:
        print(f"env: {env_instructions:,} instructions per the same game through the environment")
    print(f"\nserver: {http_bench.SERVER}; rate limits counted in {http_bench.limits_storage()}")
    admin = db.database_url()
    with source_tree(args.baseline) as baseline:
        cpu = request_cpu.run(int(env("BENCH_REQUESTS", "2000")), int(env("BENCH_CPU_GAMES", "4")))
        print("\none worker each, one client (goal 1):")
        print(request_cpu.table(cpu), flush=True)
        games = int(env("BENCH_GAMES", "1"))
        with scratch_database(admin) as url, scratch_database(admin) as base_url:
            db.migrate(url)  # the baseline's own `serve` migrates base_url
            print()
            for result in store_bench.run(url, int(env("BENCH_OPS", "1000"))):
                print(result)
            with store_bench.scratch_table(url) as table, psycopg.connect(url) as conn:
                floor_table = table.as_string(conn)
                alone = http_bench.run(
                    url, clients=1, games_per_client=games * 2, floor_table=floor_table
                )
            print(alone, flush=True)
            if baseline is not None:
                mine, theirs = throughput(
                    url, base_url, baseline, games, int(env("BENCH_PAIRS", "2"))
                )
            else:
                mine, theirs = [http_bench.run(url, 32, games)], []
                print(mine[0])
    appends = notify_ceiling.bench(admin, int(env("BENCH_PAIRS", "2")))
    versus_peer = peer.bench(admin, 32, games, int(env("BENCH_PAIRS", "2")))
    watchers = int(env("BENCH_WATCHERS", "10000"))
    watched = fanout.bench(admin, watchers, max(1, watchers // 10))  # 10 per game
    grown = None
    events = int(env("BENCH_GROWTH_EVENTS", "0"))
    if events > 0:
        grown = growth.run(admin, events)
        print("\n".join(grown.lines()))

    bare = cpu["bare"][request_cpu.BARE]
    goals: list[Goal] = []
    for what, most in GOAL_CPU.items():
        ratio = cpu["this"][what] / bare
        goals.append(
            (f"1. CPU {what} / bare Flask", f"{ratio:.2f}x", f"<= {most:g}x", ratio <= most)
        )
    assert alone.floor_p50_ms is not None
    latency = alone.p50_ms / alone.floor_p50_ms
    goals.append(
        (
            "2. pick p50, 1 client / INSERT p50",
            f"{latency:.2f}x",
            f"<= {GOAL_LATENCY_X:g}x",
            latency <= GOAL_LATENCY_X,
        )
    )
    if theirs:
        gain = rate(mine) / rate(theirs)
        goals.append(
            (
                f"3. picks/s, 32 clients / {args.baseline}'s",
                f"{gain:.2f}x",
                f">= {GOAL_THROUGHPUT_X:g}x",
                gain >= GOAL_THROUGHPUT_X,
            )
        )
    goals += appends + versus_peer + watched
    if grown is not None:
        worst = max(grown.changes, key=abs)
        goals.append(
            (
                "growth: worst p50 change at 10^6",
                f"{worst:+.1%}",
                f"±{growth.GOAL:.0%}",
                abs(worst) <= growth.GOAL,
            )
        )
    if instructions is not None:
        goals.append(
            (
                "guard: engine instructions per game",
                f"{instructions:,}",
                f"<= {ENGINE_GUARD / 1e6:g}M",
                instructions <= ENGINE_GUARD,
            )
        )
    if instructions is not None and env_instructions is not None:
        over = env_instructions / instructions - 1
        what = "env: instructions per step over the engine's"
    else:  # no valgrind: CPU seconds, interleaved (noisier)
        over, what = wrapped["overhead"], "env: CPU per step over the engine's"
    most = env_bench.GOAL_OVERHEAD
    goals.append((what, f"{over:+.1%}", f"<= +{most:.0%}", over <= most))
    print(
        f"\nbare Flask: {bare:.3f} ms of server CPU per request; pick p50 {alone.p50_ms:.3f} ms,"
        f" INSERT p50 {alone.floor_p50_ms:.3f} ms (interleaved)"
        + (f"; picks/s {rate(mine):.1f}, baseline {rate(theirs):.1f}" if theirs else "")
    )
    print(goals_table(goals))


if __name__ == "__main__":
    main()
