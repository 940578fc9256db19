"""`make bench`: every benchmark, and the four goals of issue 15 (and issue 30's PettingZoo
environment, goal 5) against baselines measured in the same run (this machine is noisy:
absolute times move 2x between runs, ratios do not).

The server is the one ``DATABASE_URL`` names, else the embedded PostgreSQL (as for `serve`).
In order: the domain (simulation and fold, no database); the engine's instructions per game
(callgrind); the environment's steps per second and instructions per game beside the engine's
(bench/env_bench.py); the store's floor (a single-row INSERT in autocommit mode) next to the old
BEGIN/INSERT/COMMIT loop and ``EventStore.append``; HTTP picks under gunicorn with one client, the
floor also timed right before each pick (latency: the ratio uses that interleaved floor, sampled
at the same moments as the picks, so the machine's load moves both alike); the database's own
write ceiling (pgbench, 32 connections) and HTTP picks with 32 concurrent clients (throughput,
and the server's CPU per pick); growth (bench/growth.py: a fresh database next to one with 10^6
events more). Then the goals, each met or MISSED.
Environment: BENCH_OPS (operations per store loop, default 2000), BENCH_GAMES (games per HTTP
client, default 2), BENCH_GROWTH_EVENTS (default 1,000,000; 0 skips growth),
BENCH_ENGINE_GAMES (games counted under callgrind, default 10; 0 skips it).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import psycopg

from bench import ceiling, domain_bench, env_bench, growth, http_bench, store_bench
from service.store import db

GOAL_LATENCY_X = 2.0  # pick p50 <= 2x the floor's p50
GOAL_THROUGHPUT = 0.25  # picks/s >= 25 % of pgbench's commits/s
GOAL_CPU_MS = 0.25  # server CPU per pick
GOAL_INSTRUCTIONS = 3_000_000  # per random complete 4-player game
GOAL_FOLD_MS = 0.3  # a finished 5-player game

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


def goals_table(goals: list[Goal]) -> str:
    width = max(len(g[0]) for g in goals)
    lines = [f"{'goal':<{width}}  {'measured':>22}  {'goal':>10}  status"]
    for what, measured, goal, met in goals:
        lines.append(f"{what:<{width}}  {measured:>22}  {goal:>10}  {'met' if met else 'MISSED'}")
    return "\n".join(lines)


def main() -> None:
    figures = domain()
    print(domain_bench.table(figures))
    engine_games = int(os.environ.get("BENCH_ENGINE_GAMES", "10"))
    instructions = engine_instructions(engine_games)
    if instructions is not None:
        print(f"engine: {instructions:,} instructions per random 4-player game (callgrind)")
    wrapped = env_bench.run()
    print(env_bench.table(wrapped))
    env_instructions = engine_instructions(engine_games, "env")
    if env_instructions is not None:
        print(f"env: {env_instructions:,} instructions per the same game through the environment")
    print()
    server_url = db.database_url()
    name = f"cardroom_bench_{secrets.token_hex(4)}"
    url = db.ensure_database(server_url, name)
    try:
        db.migrate(url)
        results = store_bench.run(url, int(os.environ.get("BENCH_OPS", "2000")))
        for result in results:
            print(result)
        games = int(os.environ.get("BENCH_GAMES", "2"))
        with store_bench.scratch_table(url) as table, psycopg.connect(url) as conn:
            floor_table = table.as_string(conn)
            alone = http_bench.run(url, clients=1, games_per_client=games, floor_table=floor_table)
        print(alone)
        top = ceiling.run(url)
        print(top)
        loaded = http_bench.run(url, clients=32, games_per_client=games)
        print(loaded)
    finally:
        db.drop_database(server_url, name)
    grown = None
    events = int(os.environ.get("BENCH_GROWTH_EVENTS", str(growth.EVENTS)))
    if events > 0:
        grown = growth.run(server_url, events)
        print("\n".join(grown.lines()))

    floor = results[0]
    assert alone.floor_p50_ms is not None
    latency = alone.p50_ms / alone.floor_p50_ms
    share = loaded.picks_per_s / top.commits_per_s
    goals: list[Goal] = [
        ("1. pick p50 / floor p50 (interleaved)", f"{latency:.1f}x", f"<= {GOAL_LATENCY_X:g}x",
         latency <= GOAL_LATENCY_X),
        ("2. picks/s, 32 clients / pgbench -c 32", f"{share:.1%}", f">= {GOAL_THROUGHPUT:.0%}",
         share >= GOAL_THROUGHPUT),
        ("2. server CPU per pick", f"{loaded.cpu_ms_per_pick:.3f} ms", f"<= {GOAL_CPU_MS} ms",
         loaded.cpu_ms_per_pick <= GOAL_CPU_MS),
    ]  # fmt: skip
    if grown is not None:
        worst = max(grown.changes, key=abs)
        goals.append(
            ("3. growth: worst p50 change at 10^6", f"{worst:+.1%}", f"±{growth.GOAL:.0%}",
             abs(worst) <= growth.GOAL)
        )  # fmt: skip
    if instructions is not None:
        goals.append(
            ("4. engine: instructions per game", f"{instructions:,}",
             f"<= {GOAL_INSTRUCTIONS / 1e6:g}M", instructions <= GOAL_INSTRUCTIONS)
        )  # fmt: skip
    env_goal = f"<= +{env_bench.GOAL_OVERHEAD:.0%}"
    if instructions is not None and env_instructions is not None:
        over = env_instructions / instructions - 1
        goals.append(("5. env: instructions per step over the engine's", f"{over:+.1%}",
                      env_goal, over <= env_bench.GOAL_OVERHEAD))  # fmt: skip
    else:  # no valgrind: CPU seconds, interleaved (noisier)
        goals.append(("5. env: CPU per step over the engine's", f"{wrapped['overhead']:+.1%}",
                      env_goal, wrapped["ok"]))  # fmt: skip
    goals.append(
        ("4. fold a finished 5-player game", f"{figures['fold_ms']:.3f} ms",
         f"<= {GOAL_FOLD_MS} ms", figures["fold_ms"] <= GOAL_FOLD_MS)
    )  # fmt: skip
    print(
        f"\nfloor: {floor.name} p50 {floor.p50_ms:.3f} ms alone, {alone.floor_p50_ms:.3f} ms"
        f" interleaved with the picks (the ratio's); ceiling: {top.commits_per_s:,.0f}/s"
    )
    print(goals_table(goals))


if __name__ == "__main__":
    main()
