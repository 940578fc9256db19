"""The PettingZoo environment's steps per second (cardroom_client.env) on random 4-player Sushi Go!
games, side by side with the engine's own random play (``domain_bench.simulate_game``:
``execute`` + ``random_pick``) in the same run, batches interleaved, CPU seconds of this process.

- ``env``: ``agent_iter``, ``last(observe=False)``, a random legal action
  (``env.legal_actions``), ``step``: what the wrapper adds to deciding a pick. Goal: at most
  25 % more time per step than the engine's random play.
- ``env + observations``: the same, observing every step (``last()``: the seat's view encoded,
  with its action mask) and choosing from the mask: what a learner that observes every step
  pays. No goal; shown for scale.

``python -m bench.env_bench [--games N] [--repeats R] [--json]``."""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from bench.domain_bench import simulate_game
from cardroom_client.env import CardroomEnv, sushi_go_env

GOAL_OVERHEAD = 0.25  # the wrapper's time per step, over the engine's
OPTIONS = {"players": 4}


def env_game(env: CardroomEnv, rng: random.Random) -> int:
    """One random game through the environment, not observing; its steps (picks)."""
    env.reset(seed=rng.getrandbits(32))
    steps = 0
    legal, last, step = env.legal_actions, env.last, env.step
    for agent in env.agent_iter():
        terminated, truncated = last(observe=False)[2:4]
        if terminated or truncated:
            step(None)
            continue
        step(rng.choice(legal(agent)))
        steps += 1
    return steps


def observed_game(env: CardroomEnv, rng: random.Random) -> int:
    """One random game through the environment, observing every step."""
    env.reset(seed=rng.getrandbits(32))
    steps = 0
    for _agent in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        env.step(rng.choice(np.flatnonzero(observation["action_mask"])))
        steps += 1
    return steps


def _cpu(play: Callable[[], Any], games: int) -> float:
    start = time.process_time()
    for _ in range(games):
        play()
    return time.process_time() - start


def run(games: int = 200, repeats: int = 5, seed: int = 1) -> dict[str, Any]:
    rng = random.Random(seed)
    env = sushi_go_env(4)
    steps_per_game = env_game(env, random.Random(0))  # 84: 3 rounds, 8 turns, 4 seats, S5 autos
    engine, wrapped, observed = [], [], []
    for _ in range(repeats):  # interleaved: the machine's load moves all three alike
        engine.append(_cpu(lambda: simulate_game(OPTIONS, rng), games))
        wrapped.append(_cpu(lambda: env_game(env, rng), games))
        observed.append(_cpu(lambda: observed_game(env, rng), max(1, games // 10)) * 10)
    steps = games * steps_per_game
    engine_s, env_s, obs_s = (statistics.median(x) for x in (engine, wrapped, observed))
    ratios = [w / e for w, e in zip(wrapped, engine, strict=True)]
    overhead = statistics.median(ratios) - 1
    return {
        "games_per_repeat": games,
        "repeats": repeats,
        "steps_per_game": steps_per_game,
        "engine_steps_per_s": steps / engine_s,
        "env_steps_per_s": steps / env_s,
        "env_observing_steps_per_s": steps / obs_s,
        "overhead": overhead,
        "overhead_runs": [r - 1 for r in ratios],
        "observing_overhead": obs_s / engine_s - 1,
        "goal_overhead": GOAL_OVERHEAD,
        "ok": overhead <= GOAL_OVERHEAD,
    }


def table(r: dict[str, Any]) -> str:
    runs = ", ".join(f"{x:+.0%}" for x in r["overhead_runs"])
    return "\n".join(
        [
            f"env vs engine, random 4-player Sushi Go! ({r['repeats']} x {r['games_per_repeat']}"
            f" games, {r['steps_per_game']} steps each, CPU seconds, interleaved):",
            f"  engine's random play      {r['engine_steps_per_s']:>10,.0f} steps/s",
            f"  env (legal_actions, step) {r['env_steps_per_s']:>10,.0f} steps/s"
            f"  {r['overhead']:+.0%} per step (goal <= +{r['goal_overhead']:.0%}:"
            f" {'ok' if r['ok'] else 'MISSED'}; runs {runs})",
            f"  env observing every step  {r['env_observing_steps_per_s']:>10,.0f} steps/s"
            f"  {r['observing_overhead']:+.0%} per step (no goal)",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = run(args.games, args.repeats)
    print(json.dumps(figures) if args.json else table(figures))


if __name__ == "__main__":
    main()
