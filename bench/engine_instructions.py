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

Why ``game`` and ``env`` run in one and the same process image (issue 38): both import the
environment (numpy, gymnasium, pettingzoo) and play both warm-ups, then collect the garbage;
only the counted games differ. Counted in processes of their own, the engine's games ran in a
small heap and the environment's in a large one, and whatever one-off work fell between
``count(0)`` and ``count(N)`` (a garbage collection, over three times the objects with the
environment loaded) was divided by only N and charged to one side: the count no longer
measured what env_bench.py's CPU seconds do, the same games side by side in one process.
"""

from __future__ import annotations

import gc
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
    # The same process for both (see above): the environment imported, both warmed up.
    from cardroom_client.env import sushi_go_env

    from bench.env_bench import env_game

    env = sushi_go_env(4)
    # warm-ups: first-call costs (caches, specialisation) excluded, both sides alike
    env_game(env, random.Random(2025))
    simulate_game(SIMULATED, random.Random(2025))
    gc.collect()  # both count from the same collector state
    rng = random.Random(2026)
    if workload == "env":  # the same games through the PettingZoo environment (bench/env_bench.py)
        for _ in range(count):
            env_game(env, rng)
        return
    for _ in range(count):
        simulate_game(SIMULATED, rng)


if __name__ == "__main__":
    main(int(sys.argv[1]), *sys.argv[2:3])
