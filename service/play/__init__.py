"""The service layer: load a game, decide a command, append its events — retrying on races.

Optimistic concurrency: a command is decided on the state at version N and appended as N+1…;
if another request appended first, the store raises VersionConflict and the command is decided
again on the fresh state. Players picking at the same moment therefore all succeed, while a
second pick by the same seat in the same turn is refused by the rules (S4) on the retry.

Every command is followed, in the same append, by the moves bots owe (service/autoplay.py); an
append that starts a timed turn writes its deadline row in the same statement (service/live/clock.py
makes the moves of turns whose deadline passed).

The package, by what it holds: loaded.py (a loaded game, the limits, the shared refusals),
reads.py (the caches and the queries), commands.py (the players' commands), sweeps.py (the
clock's commands). ``GameService`` joins them; import it, ``Loaded`` and ``adapter_for`` from here.
"""

from __future__ import annotations

from service.play.commands import Commands
from service.play.loaded import (
    CACHE_SIZE,
    FILL_SECONDS,
    MAX_ATTEMPTS,
    STALL_SECONDS,
    Loaded,
    adapter_for,
)
from service.play.sweeps import Sweeps

__all__ = [
    "CACHE_SIZE",
    "FILL_SECONDS",
    "MAX_ATTEMPTS",
    "STALL_SECONDS",
    "GameService",
    "Loaded",
    "adapter_for",
]


class GameService(Commands, Sweeps):
    """Commands and queries on games. Thread-safe. Keeps recent states, so that a request only
    reads the events appended since (events never change, so a cached fold stays true), and the
    seeds and seat token hashes of recent games (rows that never change either)."""
