"""The PettingZoo environments (clients/python/cardroom_client/env): PettingZoo's own api_test
and seed_test for every variant, whole random games to the end, the same deals as the engine's
for a seed, observations that change with nothing a seat's view hides, and an import that
needs neither Flask nor PostgreSQL."""

from __future__ import annotations

import random
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from cardroom_client.env import CardroomEnv, sequence_env, sushi_go_env
from cardroom_client.env import sequence as seq
from cardroom_client.env import sushigo as sushi
from pettingzoo.test import api_test, seed_test

from domain.decider import Viewer
from domain.sequence import SEQUENCE
from domain.sequence.randomplay import play_random_game as random_sequence
from domain.sushigo import SUSHI_GO
from domain.sushigo.randomplay import play_random_game as random_sushi_go
from service.games.sequence.schemas import SequenceMove
from service.games.sushigo.schemas import SushiGoMove

# PettingZoo's api_test warns about any Dict observation (as its own classic games have).
pytestmark = pytest.mark.filterwarnings("ignore:Observation:UserWarning")

VARIANTS: dict[str, Callable[[], CardroomEnv]] = {
    "sushi-go 4p gamewright": lambda: sushi_go_env(4),
    "sushi-go 3p zoch": lambda: sushi_go_env(3, edition="zoch"),
    "sushi-go 5p zoch alternate": lambda: sushi_go_env(5, "zoch", pass_direction="alternate"),
    "sushi-go 2p dummy": lambda: sushi_go_env(2, dummy=True),
    "sequence 2p": lambda: sequence_env(2),
    "sequence 6p 3 teams advanced jacks": lambda: sequence_env(6, teams=3, advanced_jacks=True),
}


@pytest.mark.parametrize("variant", VARIANTS)
def test_pettingzoo_api_and_seed_tests_pass(variant: str) -> None:
    api_test(VARIANTS[variant](), num_cycles=300)
    seed_test(VARIANTS[variant], num_cycles=300)


def play_out(env: CardroomEnv, seed: int) -> dict[str, float]:
    """A whole game of uniformly random legal actions; each agent's summed rewards."""
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    earned = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter(max_iter=20_000):
        observation, reward, terminated, truncated, _ = env.last()
        earned[agent] += reward
        if terminated or truncated:
            env.step(None)
            continue
        legal = np.flatnonzero(observation["action_mask"])
        env.step(int(rng.choice(legal)))
    return earned


@pytest.mark.parametrize("variant", VARIANTS)
def test_random_games_reach_the_end_and_rewards_add_up(variant: str) -> None:
    env = VARIANTS[variant]()
    for seed in range(3):
        earned = play_out(env, seed)
        state = env.state_
        assert state.over and not env.agents
        if env.game_name == "sushi-go":  # the points each seat's total gained, end included
            assert [earned[a] for a in env.possible_agents] == list(state.totals[: len(earned)])
        else:  # +1 the winning team's seats, -1 the others; 0 for all at a draw
            won = set(state.winners)
            expected = [0 if not won else (1 if s in won else -1) for s in range(len(earned))]
            assert [earned[a] for a in env.possible_agents] == expected


@pytest.mark.parametrize("seed", [0, 7, 2024])
def test_a_seed_deals_as_the_engine_does(seed: int) -> None:
    """reset(seed=n) deals from random.Random(n)'s first 32 bytes, as domain's random play (and
    a seed the service drew) does: the same hands, every one of them."""
    env = sushi_go_env(4)
    env.reset(seed=seed)
    events, _, _ = random_sushi_go({"players": 4}, random.Random(seed))
    first_deal = next(e for e in events if e.type == "round_dealt")
    assert [list(hand) for hand in env.state_.hands] == first_deal.data["hands"]

    board = sequence_env(4)
    board.reset(seed=seed)
    events, _ = random_sequence({"players": 4}, random.Random(seed))
    dealt = next(e for e in events if e.type == "cards_dealt")
    assert [list(hand) for hand in board.state_.hands] == dealt.data["hands"]

    other = sushi_go_env(4)
    other.reset(seed=seed + 1)
    assert other.state_.hands != env.state_.hands


def test_deal_seed_option_deals_from_the_given_bytes() -> None:
    env, again = sushi_go_env(3), sushi_go_env(3)
    env.reset(options={"deal_seed": bytes(range(32))})
    again.reset(seed=123, options={"deal_seed": bytes(range(32))})
    assert env.state_.hands == again.state_.hands


def hide_others(state: Any, seat: int, rng: random.Random) -> Any:
    """``state`` with every other seat's hand replaced by other cards of the same number (and,
    in Sushi Go!, their unrevealed picks dropped): what the seat's view must not show."""
    kinds = sushi.KINDS if state.rules and hasattr(state.rules, "edition") else seq.CARDS
    hands = tuple(
        hand if other == seat else tuple(rng.choice(kinds) for _ in hand)
        for other, hand in enumerate(state.hands)
    )
    return state._replace(hands=hands)


@pytest.mark.parametrize("variant", ["sushi-go 4p gamewright", "sushi-go 2p dummy", "sequence 2p"])
def test_observations_show_nothing_a_seats_view_hides(variant: str) -> None:
    """Another seat's hand changes nothing in an observation (the hand sizes stay): the
    observation is a function of the seat's view, and the view hides them."""
    env = VARIANTS[variant]()
    env.reset(seed=5)
    engine = SUSHI_GO if env.game_name == "sushi-go" else SEQUENCE
    codec: Any = sushi if env.game_name == "sushi-go" else seq
    rng, changed = random.Random(5), 0
    for agent in env.agent_iter(max_iter=60):
        observation, _, terminated, _, _ = env.last()
        if terminated:
            break
        seat = env.possible_agents.index(agent)
        other = hide_others(env.state_, seat, rng)
        changed += other.hands != env.state_.hands
        hidden_view = engine.view(other, Viewer(seat))
        assert np.array_equal(codec.observe(hidden_view, seat), observation["observation"])
        assert np.array_equal(codec.action_mask(hidden_view), observation["action_mask"])
        env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    assert changed > 10  # hands that differed, the observation the same


def test_every_legal_pick_is_offered_once() -> None:
    """The mask's picks are exactly the legal ones: each decodes to a pick the engine accepts,
    and no two decode to the same pick."""
    env = sushi_go_env(2, dummy=True)
    env.reset(seed=3)
    for agent in env.agent_iter(max_iter=40):
        observation, _, terminated, _, _ = env.last()
        if terminated:
            break
        actions = np.flatnonzero(observation["action_mask"])
        picks = [sushi.decode(a) for a in actions]
        assert len(set(picks)) == len(picks)
        for action in actions[:20]:
            probe = sushi_go_env(2, dummy=True)
            probe.reset(seed=3)
            probe.state_, probe.agent_selection = env.state_, agent
            probe.step(int(action))  # raises DomainError if the engine refuses it
        env.step(int(actions[-1]))


def test_the_env_imports_without_flask_or_postgresql() -> None:
    code = (
        "import sys\n"
        "from cardroom_client.env import sushi_go_env, sequence_env\n"
        "env = sushi_go_env(3); env.reset(seed=1); env.observe(env.agent_selection)\n"
        "loaded = [m for m in sys.modules if m.split('.')[0] in"
        " ('flask', 'psycopg', 'psycopg_pool', 'service', 'sqlalchemy', 'gevent')]\n"
        "assert not loaded, loaded\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr


@pytest.mark.parametrize("variant", [v for v in VARIANTS if v.startswith("sushi-go")])
def test_legal_actions_from_the_state_are_the_views(variant: str) -> None:
    """``env.legal_actions`` reads the seat's cards without building its view: for every seat
    at every step of random games, it gives what the view's mask allows."""
    env = VARIANTS[variant]()
    for seed in range(3):
        env.reset(seed=seed)
        rng = random.Random(seed)
        for agent in env.agent_iter():
            if env.terminations[agent]:
                env.step(None)
                continue
            for other in env.agents:
                assert env.legal_actions(other) == sushi.legal_actions(env.view(other))
            env.step(rng.choice(env.legal_actions(agent)))


def test_the_legal_pick_shortcuts_give_what_the_long_way_gives() -> None:
    rng = random.Random(11)
    for _ in range(3000):
        hand = [rng.choice(sushi.KINDS) for _ in range(rng.randint(1, 10))]
        flags = (rng.random() < 0.5, rng.randint(0, 2), rng.random() < 0.5, rng.random() < 0.3)
        zoch, free, chopsticks, dummy = flags
        expected = sushi.enumerate_picks(hand, zoch, free, chopsticks, dummy)
        assert sorted(sushi.legal_picks(hand, zoch, free, chopsticks, dummy)) == sorted(expected)


@pytest.mark.parametrize(
    "rules",
    [
        {"players": 4, "edition": "zoch", "pass_direction": "alternate"},
        {"players": 2, "dummy": True},  # the dummy's card (S17; gamewright: 2 players)
    ],
)
def test_every_offered_pick_is_a_move_the_service_accepts(rules: dict[str, Any]) -> None:
    """Each action the mask offers, sent as the client sends it, passes the service's move
    schema: a ``use_wasabi`` of ``true`` only for a nigiri (S8/S9), and it round-trips through
    ``encode_pick`` (CI once saw a chopsticks pick of maki then a declined nigiri refused)."""
    schema = SushiGoMove()
    env = sushi_go_env(**rules)
    seen_choices = 0  # picks that decline a wasabi or name the dummy's card
    for seed in range(4):
        env.reset(seed=seed)
        rng = random.Random(seed)
        for agent in env.agent_iter():
            if env.terminations[agent]:
                env.step(None)
                continue
            view = env.view(agent)
            actions = env.legal_actions(agent)
            for action in actions:
                body = sushi.to_move(view, action).to_json()
                schema.load(body)  # raises ValidationError if the service would refuse it
                again = sushi.encode_pick(
                    body["cards"], body.get("dummy_card"), body.get("use_wasabi")
                )
                assert again == action
                seen_choices += "use_wasabi" in body or "dummy_card" in body
            env.step(rng.choice(actions))
    assert seen_choices > 10  # such picks were among those checked


def test_every_offered_sequence_move_is_one_the_service_accepts() -> None:
    """The same for Sequence: each action the mask offers (a play, a dead card's discard, a
    pass), sent as the client sends it, passes the service's move schema."""
    schema = SequenceMove()
    env = sequence_env(2)
    kinds: set[str] = set()
    for seed in range(2):
        env.reset(seed=seed)
        rng = random.Random(seed)
        for agent in env.agent_iter(max_iter=400):
            if env.terminations[agent]:
                break
            view = env.view(agent)
            actions = [int(a) for a in np.flatnonzero(seq.action_mask(view))]
            for action in actions:
                body = seq.to_move(view, action).to_json()
                schema.load(body)  # raises ValidationError if the service would refuse it
                kinds.add(next(k for k in ("cell", "discard", "pass") if k in body))
            env.step(rng.choice(actions))
    assert "cell" in kinds
