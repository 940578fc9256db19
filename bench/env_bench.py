"""The PettingZoo environment's steps per second (cardroom_client.env) on random 4-player Sushi Go!
games, side by side with the engine's own random play (``domain_bench.simulate_game``:
``execute`` + ``random_pick``) in the same run, batches interleaved, CPU seconds of this process.

- ``env``: the same games through the environment (``agent_iter``, ``last(observe=False)``,
  the engine's ``random_pick`` encoded as an action, ``step``): what the wrapper adds to
  deciding a pick. Goal: at most 25 % more per step than the engine's random play, in CPU
  seconds and, noise-proof, in instructions (callgrind, ``bench/engine_instructions.sh N env``
  beside ``… N game``; ``make bench`` runs both).
- ``env, uniform``: a random legal action each step from ``env.legal_actions`` (other games:
  chopsticks taken more often). No goal.
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
from cardroom_client.env import CardroomEnv, sushi_go_env
from cardroom_client.env.sushigo import encode_pick

from bench.domain_bench import simulate_game
from domain.sushigo.randomplay import random_pick

GOAL_OVERHEAD = 0.25  # the wrapper's time per step, over the engine's
OPTIONS = {"players": 4}


def env_game(env: CardroomEnv, rng: random.Random) -> int:
    """The engine's random play (``random_pick``, the same numbers from the same ``rng``) driven
    through the environment: the very games ``simulate_game`` plays, so that the difference is
    the wrapper's alone. ``random_pick`` reads only the seat's own cards. Its steps (picks)."""
    env.reset(options={"deal_seed": rng.randbytes(32)})  # simulate_game's first draw: the seed
    steps = 0
    last, step, seat_of = env.last, env.step, {a: s for s, a in enumerate(env.possible_agents)}
    for agent in env.agent_iter():
        _, _, terminated, truncated, _ = last(observe=False)
        if terminated or truncated:
            step(None)
            continue
        pick = random_pick(env.state_, seat_of[agent], rng)
        step(encode_pick(pick.cards, pick.dummy_card, pick.use_wasabi))
        steps += 1
    return steps


def uniform_game(env: CardroomEnv, rng: random.Random) -> int:
    """A random legal action each step, uniformly among ``env.legal_actions`` (other games than
    the engine's random play: most steps with chopsticks usable take two cards)."""
    env.reset(seed=rng.getrandbits(32))
    steps = 0
    legal, last, step = env.legal_actions, env.last, env.step
    for agent in env.agent_iter():
        _, _, terminated, truncated, _ = last(observe=False)
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
    same = simulate_game(OPTIONS, random.Random(3)).totals
    env_game(env, random.Random(3))
    assert env.state_.totals == same, "the environment did not play the engine's game"
    engine, wrapped, uniform, observed = [], [], [], []
    for _ in range(repeats):  # interleaved: the machine's load moves them all alike
        engine.append(_cpu(lambda: simulate_game(OPTIONS, rng), games))
        wrapped.append(_cpu(lambda: env_game(env, rng), games))
        uniform.append(_cpu(lambda: uniform_game(env, rng), games))
        observed.append(_cpu(lambda: observed_game(env, rng), max(1, games // 10)) * 10)
    steps = games * steps_per_game
    engine_s, env_s, uniform_s, obs_s = map(statistics.median, (engine, wrapped, uniform, observed))
    ratios = [w / e for w, e in zip(wrapped, engine, strict=True)]
    overhead = statistics.median(ratios) - 1
    return {
        "games_per_repeat": games,
        "repeats": repeats,
        "steps_per_game": steps_per_game,
        "engine_steps_per_s": steps / engine_s,
        "env_steps_per_s": steps / env_s,
        "env_uniform_steps_per_s": steps / uniform_s,
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
            f"  env, the same games       {r['env_steps_per_s']:>10,.0f} steps/s"
            f"  {r['overhead']:+.0%} per step (goal <= +{r['goal_overhead']:.0%}:"
            f" {'ok' if r['ok'] else 'MISSED'}; runs {runs})",
            f"  env, uniform legal action {r['env_uniform_steps_per_s']:>10,.0f} steps/s"
            f"  (other games: more chopsticks)",
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
