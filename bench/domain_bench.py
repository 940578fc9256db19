"""How fast the Sushi Go! decider plays and folds, on one core, next to what it cannot go below.

``python -m bench.domain_bench [--games N] [--repeats R] [--folds K] [--json] [--check]``

Measured (median of R repetitions; the process is pinned to one CPU where the OS allows):

- ``simulate``: complete 4-player gamewright games of random legal play per second, every move
  through ``game.execute`` (decide + evolve) with ``randomplay.random_pick``; goal >= 1,000/s.
  ``play_random_game`` (which also keeps every intermediate state) is measured for context.
- ``fold``: folding a finished 5-player game's events into its state; goal <= 0.3 ms (issue 15).

Baselines from the same run, for context: the random-number driver alone (the seed and one draw
per pick, no rules), the per-game fair shuffle (S18: commitment + HMAC Fisher-Yates, uncached),
and iterating / copying the same events without folding them.

``run()`` returns the figures as a dict, for a combined ``bench/run.py``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from domain.decider import CreateGame, Event, MakeMove, TakeSeat, commitment, fold
from domain.sushigo import SUSHI_GO, State
from domain.sushigo.game import execute
from domain.sushigo.randomplay import play_random_game, random_pick
from domain.sushigo.shuffle import shuffled

GOAL_GAMES_PER_S = 1000.0
GOAL_FOLD_MS = 0.3
SIMULATED = {"players": 4, "edition": "gamewright"}
FOLDED = {"players": 5, "edition": "gamewright"}


# --- the drivers ------------------------------------------------------------------------------


def simulate_game(options: dict[str, Any], rng: random.Random) -> State:
    """One complete game of random legal play through ``game.execute``, keeping only the state
    (``play_random_game`` without the event and state lists)."""
    seed = rng.randbytes(32)
    players = options["players"]
    state = execute(State(), CreateGame(options, commitment(seed)))[1]
    for seat in range(players):
        state = execute(state, TakeSeat(f"p{seat}", seed))[1]
    while not state.over:
        for seat in range(players):
            if state.picks[seat] is None:
                state = execute(state, MakeMove(seat, random_pick(state, seat, rng), seed))[1]
                if state.over:
                    break
    return state


def _picks_per_game(options: dict[str, Any]) -> list[int]:
    """The hand sizes the players pick from in one game (automatic last picks excluded)."""
    size = {2: 10, 3: 9, 4: 8, 5: 7}[options["players"]]
    return [n for _ in range(3) for n in range(size, 1, -1) for _ in range(options["players"])]


def rng_driver_only(options: dict[str, Any], rng: random.Random) -> None:
    """The random numbers a game's driver draws, without any rules: the seed, one draw a pick."""
    rng.randbytes(32)
    for n in _picks_per_game(options):
        rng.randrange(n)


def shuffle_only(rng: random.Random) -> None:
    """What every new game pays for S18: the seed's commitment and its fair shuffle (uncached)."""
    seed = rng.randbytes(32)
    commitment(seed)
    shuffled.__wrapped__(seed)


# --- measuring --------------------------------------------------------------------------------


def _pin_to_one_core() -> str:
    if not hasattr(os, "sched_setaffinity"):
        return "not pinned (no sched_setaffinity)"
    cpus = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpus[-1]})
    return f"pinned to CPU {cpus[-1]}"


def _median_rate(body: Callable[[], None], count: int, repeats: int) -> tuple[float, list[float]]:
    """Median of ``repeats`` rates of ``count`` calls of ``body`` per second."""
    body()  # warm up (imports, caches, specialisation)
    rates = []
    for _ in range(repeats):
        gc.collect()
        started = time.perf_counter()
        for _ in range(count):
            body()
        rates.append(count / (time.perf_counter() - started))
    return statistics.median(rates), rates


def _median_seconds(body: Callable[[], object], count: int, repeats: int) -> float:
    """Median over ``repeats`` of the mean time of one call of ``body`` (``count`` calls each)."""
    body()
    times = []
    for _ in range(repeats):
        gc.collect()
        started = time.perf_counter()
        for _ in range(count):
            body()
        times.append((time.perf_counter() - started) / count)
    return statistics.median(times)


def finished_game_events(options: dict[str, Any], seed: int = 2024) -> list[Event]:
    events, _, _ = play_random_game(options, random.Random(seed))
    return events


def run(games: int = 300, repeats: int = 5, folds: int = 300, seed: int = 1) -> dict[str, Any]:
    """Measure everything; figures in games/s and milliseconds."""
    rng = random.Random(seed)
    sim, sim_runs = _median_rate(lambda: simulate_game(SIMULATED, rng), games, repeats)
    kept, _ = _median_rate(lambda: play_random_game(SIMULATED, rng), games, repeats)
    driver, _ = _median_rate(lambda: rng_driver_only(SIMULATED, rng), games, repeats)
    shuffle, _ = _median_rate(lambda: shuffle_only(rng), games, repeats)

    events = finished_game_events(FOLDED)
    final = fold(SUSHI_GO, events)
    assert final.over
    fold_s = _median_seconds(lambda: fold(SUSHI_GO, events), folds, repeats)

    def iterate() -> None:
        for _ in events:
            pass

    def copy() -> list[Event]:
        return [Event(e.type, dict(e.data), e.schema_version) for e in events]

    iterate_s = _median_seconds(iterate, folds, repeats)
    copy_s = _median_seconds(copy, folds, repeats)
    return {
        "simulate_games_per_s": sim,
        "simulate_runs_games_per_s": sim_runs,
        "simulate_goal_games_per_s": GOAL_GAMES_PER_S,
        "simulate_ok": sim >= GOAL_GAMES_PER_S,
        "play_random_game_games_per_s": kept,
        "baseline_rng_driver_games_per_s": driver,
        "baseline_seed_and_shuffle_per_s": shuffle,
        "fold_ms": fold_s * 1e3,
        "fold_events": len(events),
        "fold_goal_ms": GOAL_FOLD_MS,
        "fold_ok": fold_s * 1e3 <= GOAL_FOLD_MS,
        "baseline_iterate_events_ms": iterate_s * 1e3,
        "baseline_copy_events_ms": copy_s * 1e3,
        "games_per_repeat": games,
        "repeats": repeats,
        "folds_per_repeat": folds,
    }


def table(r: dict[str, Any]) -> str:
    def status(ok: bool) -> str:
        return "ok" if ok else "MISSED"

    def per_game(rate: float) -> str:
        return f"{1e3 / rate:.3f} ms/game"

    rows = [
        ("simulate 4p gamewright (execute + random_pick)",
         f"{r['simulate_games_per_s']:,.0f} games/s", f">= {r['simulate_goal_games_per_s']:,.0f}",
         status(r["simulate_ok"])),
        ("  = time per game", per_game(r["simulate_games_per_s"]), "", ""),
        ("  play_random_game (also keeps every state)",
         per_game(r["play_random_game_games_per_s"]), "", ""),
        ("  baseline: rng driver alone (no rules)",
         per_game(r["baseline_rng_driver_games_per_s"]), "", ""),
        ("  baseline: seed commitment + shuffle (S18)",
         per_game(r["baseline_seed_and_shuffle_per_s"]), "", ""),
        (f"fold 5p gamewright game ({r['fold_events']} events)",
         f"{r['fold_ms']:.3f} ms", f"<= {r['fold_goal_ms']:g} ms", status(r["fold_ok"])),
        ("  baseline: iterate the events", f"{r['baseline_iterate_events_ms']:.4f} ms", "", ""),
        ("  baseline: copy the events", f"{r['baseline_copy_events_ms']:.4f} ms", "", ""),
    ]  # fmt: skip
    width = max(len(row[0]) for row in rows)
    lines = [f"{'measure':<{width}}  {'median':>16}  {'goal':>10}  status"]
    lines += [f"{a:<{width}}  {b:>16}  {c:>10}  {d}".rstrip() for a, b, c, d in rows]
    runs = ", ".join(f"{x:,.0f}" for x in r["simulate_runs_games_per_s"])
    lines.append(
        f"({r['repeats']} repetitions of {r['games_per_repeat']} games / "
        f"{r['folds_per_repeat']} folds; simulate runs: {runs})"
    )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.domain_bench", description=__doc__)
    parser.add_argument("--games", type=int, default=300, help="games per repetition")
    parser.add_argument("--repeats", type=int, default=5, help="repetitions (median reported)")
    parser.add_argument("--folds", type=int, default=300, help="folds per repetition")
    parser.add_argument("--seed", type=int, default=1, help="seed of the driver's rng")
    parser.add_argument("--no-pin", action="store_true", help="do not pin to one CPU")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--check", action="store_true", help="exit 1 when a goal is missed")
    args = parser.parse_args(argv)
    pinned = "not pinned (--no-pin)" if args.no_pin else _pin_to_one_core()
    figures = run(args.games, args.repeats, args.folds, args.seed)
    if args.json:
        print(json.dumps({**figures, "cpu": pinned}, indent=2))
    else:
        load = f", load average {os.getloadavg()[0]:.2f}" if hasattr(os, "getloadavg") else ""
        print(f"Sushi Go! domain benchmark, Python {sys.version.split()[0]}, {pinned}{load}")
        print(table(figures))
    missed = not (figures["simulate_ok"] and figures["fold_ok"])
    return 1 if args.check and missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
