"""A small bounded cache for facts that never change once written (events, seeds, hashes) in
the database they were read from: a database restored from a copy that lacks the last commits is
another database, and every cache is cleared when the process meets one (service/store/events.py,
``EventStore.on_new_database``)."""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from typing import Any, Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


def _lock() -> Any:
    """The OS's own lock, also in a process gevent patched. Each method holds it over a few
    dict operations that never wait (the keys: UUIDs, tuples, ints), so under gevent no other
    greenlet can run while it is held, and another OS thread (gevent's pool) is excluded as
    before; gevent's lock cost about 5,000 instructions a use (callgrind), and a request uses
    these caches five to ten times."""
    monkey = sys.modules.get("gevent.monkey")
    if monkey is not None and monkey.is_module_patched("threading"):
        return monkey.get_original("_thread", "allocate_lock")()
    return threading.Lock()


class Recent(Generic[K, V]):
    """A bounded, thread-safe map that forgets its least recently used entries."""

    def __init__(self, size: int) -> None:
        self._items: OrderedDict[K, V] = OrderedDict()
        self._size = size
        self._lock = _lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
