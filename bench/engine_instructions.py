"""The workloads ``bench/engine_instructions.sh`` counts: random complete 4-player Sushi Go! games,
or folds of a finished 5-player game.

``python -m bench.engine_instructions N`` plays ``N`` games exactly as
``bench.domain_bench.simulate_game`` does (seed, commitment, fair shuffle, every event, random
legal picks), after the same warm-up game; ``python -m bench.engine_instructions N fold`` folds
the finished 5-player game ``bench.domain_bench`` times (``decider.fold``) ``N`` times, after
one warm-up fold; ``… N env`` plays ``N`` random 4-player games through the PettingZoo
environment (``bench.env_bench.env_game``, the very same games). The script runs it under
callgrind twice, with 0 and with N, and divides the difference by N: interpreter start-up,
imports and the warm-up cancel out, so what is left is the instructions per game (or per fold).
"""

from __future__ import annotations

import random
import sys

from bench.domain_bench import FOLDED, SIMULATED, finished_game_events, simulate_game
from domain.decider import fold
from domain.sushigo import SUSHI_GO


def main(count: int, workload: str = "game") -> None:
    if workload == "fold":
        events = finished_game_events(FOLDED)
        fold(SUSHI_GO, events)  # warm-up
        for _ in range(count):
            fold(SUSHI_GO, events)
        return
    if workload == "env":  # the same games through the PettingZoo environment (bench/env_bench.py)
        from cardroom_client.env import sushi_go_env

        from bench.env_bench import env_game

        env, rng = sushi_go_env(4), random.Random(2026)
        env_game(env, rng)  # warm-up
        for _ in range(count):
            env_game(env, rng)
        return
    rng = random.Random(2026)
    simulate_game(SIMULATED, rng)  # warm-up: first-call costs (caches, specialisation) excluded
    for _ in range(count):
        simulate_game(SIMULATED, rng)


if __name__ == "__main__":
    main(int(sys.argv[1]), *sys.argv[2:3])
