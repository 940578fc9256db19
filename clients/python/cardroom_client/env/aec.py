"""PettingZoo AEC environments for Sushi Go! and Sequence, played by the service's own engine
(the repository's ``domain/`` deciders: no Flask, no database), so the rules, the deals and the
views are the service's.

- A seat's observation is encoded from ``domain``'s view of the game for that seat (the same
  dict the service answers ``GET /games/{id}`` with), so it holds exactly what the seat may see.
- Deals: ``reset(seed=n)`` deals from the 32-byte seed ``random.Random(n).randbytes(32)``;
  ``reset(options={"deal_seed": bytes})`` deals from the given seed, so that a game the service
  played (its seed is revealed by its last event) is dealt again card for card.
- Sushi Go!'s picks are simultaneous (S4): the agents pick one after the other, none seeing the
  others' picks before the reveal (the view hides them). Rewards are the points each seat's
  total gains (round scores, then puddings). Sequence: +1 for each seat of the winning team,
  -1 for the others, 0 for all at a draw, at the end.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from operator import itemgetter
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from domain.decider import CreateGame, MakeMove, TakeSeat, Viewer, commitment
from domain.sequence import SEQUENCE, Discard, Pass, Play
from domain.sushigo import SUSHI_GO, Pick
from domain.sushigo.cards import CHOPSTICKS
from domain.sushigo.state import HANDS, OVER, PICKS, TABLEAUX

from . import sequence as seq
from . import sushigo as sushi


class CardroomEnv(AECEnv):  # type: ignore[misc]  # pettingzoo has no type hints: AECEnv is Any
    """One game of ``game`` with ``rules`` (the service's options, ``players`` included)."""

    metadata = {"render_modes": ["ansi"], "is_parallelizable": False}

    def __init__(self, game: str, rules: Mapping[str, Any], render_mode: str | None = None):
        super().__init__()
        self.game_name = game
        self.engine = SUSHI_GO if game == "sushi-go" else SEQUENCE
        self.codec: Any = sushi if game == "sushi-go" else seq
        self.options = dict(rules)
        self.engine.decide(self.engine.initial_state(), CreateGame(self.options, ""))  # checked
        players = int(self.options["players"])
        self.metadata = {**self.metadata, "name": f"cardroom_{game.replace('-', '_')}_v0"}
        self.render_mode = render_mode
        self.possible_agents = [f"player_{seat}" for seat in range(players)]
        self._seat = {agent: seat for seat, agent in enumerate(self.possible_agents)}
        if game == "sushi-go":
            seats = players + bool(self.options.get("dummy"))
            self._observation_spaces = {
                a: sushi.observation_space(seats) for a in self.possible_agents
            }
        else:
            self._observation_spaces = {a: seq.observation_space() for a in self.possible_agents}
        self._action_spaces: dict[str, spaces.Space[Any]] = {
            a: self.codec.action_space() for a in self.possible_agents
        }
        self._move: Callable[[int], Any] = _sushi_move if game == "sushi-go" else _sequence_move
        self.state_: Any = None
        self._moves: dict[int, Any] = {}
        self._sushi = game == "sushi-go"
        self._zoch = self.options.get("edition") == "zoch"
        self._dummy = bool(self.options.get("dummy"))
        self._execute = self.engine.execute
        # What changes (a new object) when points do: Sushi Go!'s totals, a Sequence game's end.
        fields = type(self.engine.initial_state())._fields
        self._scored = itemgetter(fields.index("totals" if self._sushi else "over"))

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self._action_spaces[agent]

    # --- playing ------------------------------------------------------------------------------

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        deal_seed = (options or {}).get("deal_seed")
        if deal_seed is None:
            deal_seed = random.Random(seed).randbytes(32)
        self.deal_seed: bytes = bytes(deal_seed)
        execute = self.engine.execute
        state = self.engine.initial_state()
        state = execute(state, CreateGame(self.options, commitment(self.deal_seed)))[1]
        for agent in self.possible_agents:
            state = execute(state, TakeSeat(agent, self.deal_seed))[1]
        self.state_ = state
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
        self._totals = self._scores()
        self._scored_before, self._rewarded, self._over = self._scored(state), False, False
        self.agent_selection = self._next_agent(state)

    def step(self, action: Any) -> None:
        # The hot path of random play (bench/env_bench.py): fields read once, moves made once.
        agent = self.agent_selection
        if self._over:  # every agent terminates at the game's end, none before
            self._was_dead_step(action)
            return
        move = self._moves.get(action)
        if move is None:  # each action's move is made once (moves are immutable)
            move = self._moves[int(action)] = self._move(int(action))
        command = _new_move(MakeMove, (self._seat[agent], move, self.deal_seed))
        state = self.state_ = self._execute(self.state_, command)[1]
        self._cumulative_rewards[agent] = 0.0
        if self._scored(state) is not self._scored_before:  # points changed hands
            self._reward()
            self._accumulate_rewards()
        elif self._rewarded:  # the last step's rewards are over
            self.rewards = dict.fromkeys(self.agents, 0.0)
            self._rewarded = False
        if state.over:
            self._over = True
            self.terminations = dict.fromkeys(self.agents, True)
        elif self._sushi:  # the first seat that has not picked this turn
            self.agent_selection = self.possible_agents[state[PICKS].index(None)]
        else:
            self.agent_selection = self._next_agent(state)

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        view = self.view(agent)
        return {
            "observation": self.codec.observe(view, self._seat[agent]),
            "action_mask": self.codec.action_mask(view),
        }

    def view(self, agent: str) -> dict[str, Any]:
        """The agent's seat's view, as the service would show it."""
        return self.engine.view(self.state_, Viewer(self._seat[agent]))

    def legal_actions(self, agent: str) -> list[int]:
        """The actions the observation's mask allows (without building the observation: in
        Sushi Go! from the seat's own cards, as its view would say them)."""
        if self.game_name != "sushi-go":
            return list(self.codec.legal_actions(self.view(agent)))
        state, seat = self.state_, self._seat[agent]
        picks = state[PICKS]  # by index: a named field costs more (domain/sushigo/state.py)
        if not picks or picks[seat] is not None or state[OVER]:
            return []
        hand = state[HANDS][seat]
        if not hand:
            return []
        cards = state[TABLEAUX][seat][0]
        controls = self._dummy and seat == state.controller
        chopsticks = CHOPSTICKS in cards and len(hand) >= 2 + controls
        if not (chopsticks or controls or self._zoch):  # one card, nothing else to choose
            return sorted(map(sushi.SINGLE.__getitem__, set(hand)))
        free = state[TABLEAUX][seat].free_wasabi
        return sushi.legal_picks(hand, self._zoch, free, chopsticks, controls)

    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        return repr(self.engine.score_sheet(self.state_))

    def close(self) -> None:
        pass

    # --- helpers ------------------------------------------------------------------------------

    def _next_agent(self, state: Any) -> str:
        """Sushi Go!: the first seat that has not picked this turn; Sequence: the seat to move."""
        seat: int = state[PICKS].index(None) if self._sushi else state.current
        agent: str = self.possible_agents[seat]
        return agent

    def _scores(self) -> list[int]:
        state = self.state_
        if self.game_name == "sushi-go":
            return list(state.totals[: len(self.possible_agents)]) or [0] * len(self.agents)
        if not state.over or state.winning_team is None:
            return [0] * len(self.agents)
        return [1 if seat in state.winners else -1 for seat in range(len(self.agents))]

    def _reward(self) -> None:
        totals = self._scores()
        for agent, before, now in zip(self.agents, self._totals, totals, strict=True):
            self.rewards[agent] = float(now - before)
        self._totals, self._scored_before = totals, self._scored(self.state_)
        self._rewarded = True


_new_move = tuple.__new__  # MakeMove(…) without its keyword handling (as domain's fast paths do)


def _sushi_move(action: int) -> Pick:
    cards, dummy, wasabi = sushi.decode(action)
    return Pick(cards, dummy, wasabi)


def _sequence_move(action: int) -> Play | Discard | Pass:
    if action < seq.PLAYS:
        card, cell = divmod(action, seq.CELLS)
        return Play(seq.CARDS[card], divmod(cell, 10))
    if action < seq.PASS:
        return Discard(seq.CARDS[action - seq.DISCARDS])
    return Pass()


def sushi_go_env(
    players: int = 4,
    edition: str = "gamewright",
    pass_direction: str = "left",
    dummy: bool = False,
    render_mode: str | None = None,
) -> CardroomEnv:
    """Sushi Go! (S1–S18): either edition, either pass direction, the 2-player dummy (S17)."""
    rules = {
        "players": players,
        "edition": edition,
        "pass_direction": pass_direction,
        "dummy": dummy,
    }
    return CardroomEnv("sushi-go", rules, render_mode)


def sequence_env(
    players: int = 2,
    teams: int | None = None,
    advanced_jacks: bool = False,
    render_mode: str | None = None,
) -> CardroomEnv:
    """Sequence (Q1–Q13): 2–12 players in 2 or 3 teams, optionally with advanced jacks (Q11)."""
    rules: dict[str, Any] = {"players": players, "advanced_jacks": advanced_jacks}
    if teams is not None:
        rules["teams"] = teams
    return CardroomEnv("sequence", rules, render_mode)
