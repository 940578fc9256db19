"""Requests sent at the same moment, for the tests of races (challenges, quick match)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


def at_once(calls: list[Callable[[], Any]], timeout: float = 60) -> list[Any]:
    """Each call's result, the calls released together by a barrier, each on a thread."""
    barrier = threading.Barrier(len(calls))
    results: list[Any] = [None] * len(calls)

    def run(i: int) -> None:
        barrier.wait(10)
        results[i] = calls[i]()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout)
    return results
