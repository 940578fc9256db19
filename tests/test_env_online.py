"""From offline to online: a policy written against the PettingZoo environment plays whole games
on a real ``cardroom serve`` through ``policy_bot``; what it observes there is what the
environment shows for the same seat at the same version; and the environment, given a
service game's revealed seed and its recorded moves, deals and scores that game again."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from cardroom_client import BotSeat, Client, View
from cardroom_client.env import policy_bot, sequence_env, sushi_go_env
from cardroom_client.env import sequence as seq
from cardroom_client.env import sushigo as sushi
from serve_support import Served

from domain.decider import Event, Viewer, fold
from domain.games import GAMES

pytest_plugins = ["client_fixtures"]

GAMES_PLAYED = {
    "sushi-go": {"players": 4, "edition": "zoch", "pass_direction": "alternate"},
    "sequence": {"players": 2},
}


def random_policy(seed: int) -> Any:
    rng = np.random.default_rng(seed)

    def policy(observation: dict[str, np.ndarray]) -> int:
        return int(rng.choice(np.flatnonzero(observation["action_mask"])))

    return policy


def play_online(served: Served, kind: str) -> tuple[Client, str, list[View]]:
    """A game of ``kind`` whose seat 0 a random policy plays through policy_bot against the
    service's greedy bots; the views it chose in."""
    rules = dict(GAMES_PLAYED[kind])
    players = rules.pop("players")
    client = Client(served.url)
    bots = [BotSeat(seat, "greedy") for seat in range(1, players)]
    game = client.create_game(kind, players, rules=rules, bots=bots)  # type: ignore[arg-type]
    bot = policy_bot(random_policy(1))
    seen: list[View] = []
    choose = bot.choose

    def recording(view: View) -> Any:
        seen.append(view)
        return choose(view)

    bot.choose = recording  # type: ignore[method-assign]
    final = bot.play(game.join("Policy"))
    assert final.status == "over"
    assert client.audit(game)["ok"] is True
    return client, game.id, seen


def exported(client: Client, game_id: str) -> list[dict[str, Any]]:
    text = client.request("GET", f"/games/{game_id}/export").text
    return [line for line in map(json.loads, text.splitlines()) if "type" in line]


@pytest.mark.parametrize("kind", list(GAMES_PLAYED))
def test_a_policy_plays_online_seeing_what_the_env_shows(served: Served, kind: str) -> None:
    client, game_id, seen = play_online(served, kind)
    with client:
        records = exported(client, game_id)
    engine = GAMES[kind]
    events = [engine.upcast(Event(r["type"], r["data"], r["schema_version"])) for r in records]
    codec: Any = sushi if kind == "sushi-go" else seq
    assert len(seen) > 5
    for view in seen:
        assert view.you is not None
        offline = engine.view(fold(engine, events[: view.version]), Viewer(view.you.seat))
        seat, online = view.you.seat, view.raw
        assert np.array_equal(codec.observe(offline, seat), codec.observe(online, seat))
        assert np.array_equal(codec.action_mask(offline), codec.action_mask(online))


@pytest.mark.parametrize("kind", list(GAMES_PLAYED))
def test_the_env_deals_and_scores_a_service_game_again(served: Served, kind: str) -> None:
    """The seed the game's last event reveals deals the same hands in the environment, and its
    recorded moves, replayed there, end it with the same result."""
    client, game_id, _ = play_online(served, kind)
    with client:
        records = exported(client, game_id)
        final = client.game(game_id).view()
    seed = bytes.fromhex(records[-1]["data"]["seed"])
    rules = GAMES_PLAYED[kind]
    env = sushi_go_env(**rules) if kind == "sushi-go" else sequence_env(**rules)  # type: ignore[arg-type]
    env.reset(options={"deal_seed": seed})
    dealt = next(r for r in records if r["type"] in ("round_dealt", "cards_dealt"))
    assert [list(hand) for hand in env.state_.hands] == dealt["data"]["hands"]
    if kind == "sushi-go":
        picks = {
            (r["data"]["round"], r["data"]["turn"], r["data"]["seat"]): r["data"]
            for r in records
            if r["type"] == "card_picked" and not r["data"]["auto"]
        }
        for agent in env.agent_iter():
            if env.terminations[agent]:
                env.step(None)
                continue
            state = env.state_
            pick = picks[(state.round, state.turn, env.possible_agents.index(agent))]
            env.step(
                sushi.encode_pick(pick["cards"], pick.get("dummy_card"), pick.get("use_wasabi"))
            )
        totals = [t["total"] for t in final.totals]
        assert list(env.state_.totals) == totals
    else:
        moves = [
            seq.encode_move(r["type"], r["data"])
            for r in records
            if r["type"] in ("card_played", "dead_card_discarded", "turn_passed")
            and not r["data"].get("auto")
        ]
        for action in moves:
            env.step(action)
        assert env.state_.over and list(env.state_.winners) == list(final.winners)
