"""Hot standbys for reads (``DATABASE_REPLICA_URL``): PostgreSQL's own streaming replication,
read through the same event store as the primary.

A standby replays the primary's WAL a little later, so a read served there may be older than
what the client has already seen. The caller (service/play/) therefore states the least version
the answer must have, and asks the primary when the standby has not replayed it yet: the game's
version on the standby is the measure (events are append-only, so a version there is the same
prefix as on the primary). A standby that cannot be reached is skipped, never an error.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Sequence

from service.store import db
from service.store.events import EventStore

SETTING = "DATABASE_REPLICA_URL"
WAIT_SECONDS = 0.5  # the longest wait for a standby's connection before reading on the primary


def replica_urls() -> list[str]:
    """The standbys to read from: ``DATABASE_REPLICA_URL``, URLs separated by whitespace (each
    may itself be a libpq multi-host URL); none when unset. (Read in this one place.)"""
    return os.environ.get(SETTING, "").split()


class Replicas:
    """Event stores on standbys, taken in turn (round robin). Thread-safe."""

    def __init__(self, stores: Sequence[EventStore]) -> None:
        self.stores = list(stores)
        self._turn = itertools.cycle(range(len(self.stores))) if self.stores else None
        self._lock = threading.Lock()

    @classmethod
    def from_urls(cls, urls: Sequence[str]) -> Replicas:
        # min_size 0: a standby that is down when a worker starts must not stop it starting.
        # A short wait for a connection: a standby that is down or busy is skipped for the
        # primary rather than waited for.
        return cls(
            [EventStore(db.make_pool(url, min_size=0, timeout=WAIT_SECONDS)) for url in urls]
        )

    def __bool__(self) -> bool:
        return bool(self.stores)

    def in_turn(self) -> list[EventStore]:
        """Every standby, starting with the next one in turn."""
        if self._turn is None:
            return []
        with self._lock:
            first = next(self._turn)
        return self.stores[first:] + self.stores[:first]

    def close(self) -> None:
        for store in self.stores:
            store.pool.close()
