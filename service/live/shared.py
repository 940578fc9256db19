"""One read for many waiters: when an append wakes every watcher of a game at once, the first to
ask reads the store and the others, asking for the same thing meanwhile, get its answer (the
"single flight" of Go's groupcache). Only calls in flight are shared, nothing is kept: a call
that began before an append may miss it, and its waiters then read again, as the hub still says
they are behind."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

T = TypeVar("T")


@dataclass(eq=False)
class Flight(Generic[T]):
    """One call and what its waiters share: its result, and ``memo`` for what they derive from
    it (a rendering per kind of viewer)."""

    done: threading.Event = field(default_factory=threading.Event)
    result: T | None = None
    error: BaseException | None = None
    memo: dict[Hashable, Any] = field(default_factory=dict)
    followers: int = 0  # callers that wait for it rather than call themselves


class SingleFlight(Generic[T]):
    """Thread-safe (and greenlet-safe under gevent)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._flights: dict[Hashable, Flight[T]] = {}

    def run(self, key: Hashable, call: Callable[[], T]) -> Flight[T]:
        """``call()``'s flight, or that of the call with the same ``key`` in flight now (every
        call with one key must give the same answer); raises what the call raised."""
        with self._lock:
            flight = self._flights.get(key)
            leader = flight is None
            if flight is None:
                flight = self._flights[key] = Flight()
            else:
                flight.followers += 1
        if not leader:
            flight.done.wait()
            if flight.error is not None:
                raise flight.error
            return flight
        try:
            flight.result = call()
            return flight
        except BaseException as exc:
            flight.error = exc
            raise
        finally:
            with self._lock:
                del self._flights[key]
            flight.done.set()

    def in_flight(self, key: Hashable) -> Flight[T] | None:
        with self._lock:
            return self._flights.get(key)
