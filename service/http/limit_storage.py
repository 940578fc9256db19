"""Where the rate limits count, in each process: `limits`' own in-memory storage (Flask-Limiter's
``memory://``), its expired counters dropped by the hits themselves at most once a second.

``limits.storage.MemoryStorage`` starts a new timer thread 10 ms after a hit whenever its last
one has ended, only to drop expired counters (a counter read after its expiry is dropped then
anyway: the timer bounds memory, not correctness). Under gevent each such thread is a greenlet
with its locks and events: about 0.23 ms of CPU on a limited request that comes more than 10 ms
after the worker's previous one, which is every move of a client playing alone (README,
"Benchmarks"). Counting, windows and expiry stay `limits`' own code.
"""

from __future__ import annotations

import time
from typing import Any

from limits.storage import MemoryStorage

SWEEP_SECONDS = 1.0  # at most this often a hit drops the expired counters, inline

SCHEME = "cardroom-memory"


class SweptMemoryStorage(MemoryStorage):
    """``MemoryStorage`` that sweeps expired counters inline instead of from new timer threads."""

    STORAGE_SCHEME = [SCHEME]  # limits registers a storage class under its schemes

    def __init__(self, uri: str | None = None, wrap_exceptions: bool = False, **options: Any):
        super().__init__(uri, wrap_exceptions=wrap_exceptions, **options)
        self._next_sweep = 0.0

    # What MemoryStorage's hits call as ``self.__schedule_expiry()`` (limits 5.x). Should a
    # release rename it, hits would start timers again: tests/test_abuse.py fails then.
    def _MemoryStorage__schedule_expiry(self) -> None:
        now = time.monotonic()
        if now >= self._next_sweep:
            self._next_sweep = now + SWEEP_SECONDS
            self._MemoryStorage__expire_events()  # type: ignore[attr-defined]
