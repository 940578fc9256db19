"""The workload ``bench/engine_instructions.sh`` counts: random complete 4-player Sushi Go! games.

``python -m bench.engine_instructions GAMES`` plays ``GAMES`` games exactly as
``bench.domain_bench.simulate_game`` does (seed, commitment, fair shuffle, every event, random
legal picks), after the same warm-up game. The script runs it under callgrind twice, with 0 and
with GAMES games, and divides the difference by GAMES: interpreter start-up, imports and the
warm-up cancel out, so what is left is the instructions per game.
"""

from __future__ import annotations

import random
import sys

from bench.domain_bench import SIMULATED, simulate_game


def main(games: int) -> None:
    rng = random.Random(2026)
    simulate_game(SIMULATED, rng)  # warm-up: first-call costs (caches, specialisation) excluded
    for _ in range(games):
        simulate_game(SIMULATED, rng)


if __name__ == "__main__":
    main(int(sys.argv[1]))
