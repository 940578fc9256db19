"""A synthetic league (issue 37's measures): do the ratings (domain/ratings.py) find skill?

``python -m bench.ratings_league [--seeds 20] [--games 2000] [--jobs 2]``

40 accounts in 4 skill tiers of 10 (tier 0 ``random``: a random legal pick every turn; tiers 1
and 2 mixes that pick at random with probability 0.67 and 0.33 and greedily otherwise; tier 3
``greedy``: always the pick worth the most points now) play ``--games`` four-player Sushi Go!
games (gamewright), four accounts drawn at random for each, through the domain alone (the same
``execute`` the service runs; no HTTP, no database), each game rated as it ends with the same
``rate`` the service runs. Per seed:

- the Spearman correlation between the accounts' ordinals and their tiers (goal >= 0.8);
- whether every greedy account ends above every random one (goal: in 20 of 20 seeds);
- on the last 20 % of games, how often OpenSkill's ``predict_rank`` (ratings before the game)
  names a winner (goal >= 40 %; chance: 25 %);
- the random and greedy tiers' mean mu (where the anchors ``bot:random`` and ``bot:greedy``
  of domain/ratings.py come from).

Seeds run in ``--jobs`` processes; every game is decided from the seed alone, so a seed's
figures are the same on every run.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from domain import ratings
from domain.decider import CreateGame, MakeMove, TakeSeat, commitment
from domain.sushigo import SUSHI_GO
from domain.sushigo.greedy import greedy_pick
from domain.sushigo.randomplay import random_pick

TIERS = (1.0, 0.67, 0.33, 0.0)  # the chance of a random pick, by tier
PER_TIER = 10
PLAYERS = 4
GOAL_SPEARMAN = 0.8
GOAL_PREDICT = 0.40
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class SeedResult:
    seed: int
    spearman: float
    greedy_above_random: bool
    predicted: float
    random_mu: float
    greedy_mu: float
    seconds: float


def play(rng: random.Random, accounts: list[str], tier_of: dict[str, int]) -> Any:
    """One rated four-player game of ``accounts`` (seat order), each picking by its tier."""
    seed = rng.randbytes(32)
    state = SUSHI_GO.initial_state()
    commands: list[Any] = [
        CreateGame({"players": PLAYERS}, commitment(seed), seed, rated=True),
        *(TakeSeat(f"p{i}", seed, account) for i, account in enumerate(accounts)),
    ]
    for command in commands:
        state = SUSHI_GO.execute(state, command)[1]
    while not state.over:
        for seat in SUSHI_GO.awaiting(state):
            if rng.random() < TIERS[tier_of[accounts[seat]]]:
                pick = random_pick(state, seat, rng)
            else:
                pick = greedy_pick(state, seat)
            state = SUSHI_GO.execute(state, MakeMove(seat, pick, seed))[1]
    return state


def spearman(xs: list[float], ys: list[float]) -> float:
    """Spearman's rho: Pearson's correlation of the average ranks (ties share a rank)."""
    rx, ry = _ranks(xs), _ranks(ys)
    return statistics.correlation(rx, ry)


def _ranks(values: list[float]) -> list[float]:
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def league(seed: int, games: int) -> SeedResult:
    started = time.perf_counter()
    rng = random.Random(seed)
    tier_of = {f"t{t}-{n}": t for t in range(len(TIERS)) for n in range(PER_TIER)}
    everyone = sorted(tier_of)
    ledger = ratings.Ledger()
    hits = judged = 0
    for number in range(games):
        accounts = rng.sample(everyone, PLAYERS)
        state = play(rng, accounts, tier_of)
        game = ratings.rated_game("sushi-go", f"g{number:06d}", state, EPOCH)
        assert game is not None
        if number >= games * 0.8:  # the last 20 %: predict before rating
            before = [ratings.current(ledger.ratings, game.pool, a) for a in accounts]
            predicted = ratings.predict_ranks(before)
            favourite = predicted.index(min(predicted))
            judged += 1
            hits += next(p.rank for p in game.placings if p.seat == favourite) == 1
        ledger.apply(game)
    final = {a: ratings.current(ledger.ratings, "sushi-go-gamewright", a) for a in everyone}
    rho = spearman([final[a].ordinal for a in everyone], [float(tier_of[a]) for a in everyone])
    tier = len(TIERS) - 1
    greedy = [final[a].ordinal for a in everyone if tier_of[a] == tier]
    randoms = [final[a].ordinal for a in everyone if tier_of[a] == 0]
    return SeedResult(
        seed,
        rho,
        min(greedy) > max(randoms),
        hits / judged,
        statistics.mean(final[a].mu for a in everyone if tier_of[a] == 0),
        statistics.mean(final[a].mu for a in everyone if tier_of[a] == tier),
        time.perf_counter() - started,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    with ProcessPoolExecutor(args.jobs) as pool:
        results = list(pool.map(league, range(args.seeds), [args.games] * args.seeds))
    print("seed  spearman  greedy>random  predict_rank  mu(random)  mu(greedy)  seconds")
    for r in results:
        print(
            f"{r.seed:>4}  {r.spearman:8.3f}  {str(r.greedy_above_random):>13}  "
            f"{r.predicted:11.1%}  {r.random_mu:10.3f}  {r.greedy_mu:10.3f}  {r.seconds:7.1f}"
        )
    worst = min(r.spearman for r in results)
    above = sum(r.greedy_above_random for r in results)
    predicted = statistics.mean(r.predicted for r in results)
    ok = worst >= GOAL_SPEARMAN and above == len(results) and predicted >= GOAL_PREDICT
    print(
        f"{args.seeds} seeds x {args.games} games in {time.perf_counter() - started:.0f} s:"
        f" Spearman min {worst:.3f} (goal >= {GOAL_SPEARMAN}); every greedy above every random"
        f" in {above} of {len(results)} seeds (goal: all); predict_rank names the winner in"
        f" {predicted:.1%} of the last 20 % (mean; worst {min(r.predicted for r in results):.1%};"
        f" goal >= {GOAL_PREDICT:.0%}); mean mu: random tier"
        f" {statistics.mean(r.random_mu for r in results):.2f}, greedy tier"
        f" {statistics.mean(r.greedy_mu for r in results):.2f}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
