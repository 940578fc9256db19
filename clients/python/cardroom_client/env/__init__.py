"""Offline play on the service's rules: PettingZoo AEC environments (``sushi_go_env``,
``sequence_env``; they need the repository's ``domain/`` engine importable) and, for playing
online what was trained offline, ``policy_bot`` (needs only this package and numpy).

Imported lazily, so that ``policy_bot`` works where the engine is not installed."""

from __future__ import annotations

from typing import Any

__all__ = ["CardroomEnv", "PolicyBot", "policy_bot", "sequence_env", "sushi_go_env"]


def __getattr__(name: str) -> Any:
    if name in ("CardroomEnv", "sushi_go_env", "sequence_env"):
        from . import aec

        return getattr(aec, name)
    if name in ("PolicyBot", "policy_bot"):
        from . import policy

        return getattr(policy, name)
    raise AttributeError(name)
