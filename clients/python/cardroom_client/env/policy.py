"""From offline to online: a policy written against the environment, as a ``Bot``.

A policy is ``policy(observation) -> action``, where ``observation`` is what the environment's
``observe`` gives (``{"observation": ..., "action_mask": ...}``) and ``action`` an action of its
action space. Online, the observation is encoded from the service's view by the same functions
the environment encodes domain's view with, and the action decoded into the same move."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..bot import Bot
from ..models import Move, View
from . import sequence as seq
from . import sushigo as sushi

Policy = Callable[[dict[str, np.ndarray]], Any]


def observation(view: View) -> dict[str, np.ndarray]:
    """The environment's observation of the seat whose view this is."""
    codec: Any = sushi if view.game == "sushi-go" else seq
    assert view.you is not None, "a seat's view (with its token) is needed"
    return {
        "observation": codec.observe(view.raw, view.you.seat),
        "action_mask": codec.action_mask(view.raw),
    }


def to_move(view: View, action: Any) -> Move:
    codec: Any = sushi if view.game == "sushi-go" else seq
    move: Move = codec.to_move(view.raw, int(action))
    return move


class PolicyBot(Bot):
    """A Bot that asks ``policy`` for each move."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy

    def choose(self, view: View) -> Move:
        return to_move(view, self.policy(observation(view)))


def policy_bot(policy: Policy) -> PolicyBot:
    """``policy`` (observation -> action), trained against the environment, as a Bot."""
    return PolicyBot(policy)
