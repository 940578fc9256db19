"""How a server worker collects cyclic garbage while thousands of connections are open.

Each open stream or long poll holds about 90 objects that Python's cycle collector tracks (its
greenlet, request, environ, Flask contexts, waiter, timers): 3,300 connections per worker make
about 300,000, beside the app's own 130,000. With Python's default thresholds (700, 10, 10),
objects of requests still in flight outlive two young collections (one every 700 allocations),
reach the oldest generation, and trigger a full collection once they are a quarter of it. At
10,000 open connections that was a full collection every 7-10 s in each worker, each walking
300,000-500,000 live objects (0.2-1.1 s of wall time, 0.1-0.4 s of CPU, on this 2-core
machine) to find 0-1,200 objects of garbage: every request of that worker waited meanwhile.

So, once the app is loaded: the objects alive then (modules, the app, its routes and schemas)
are moved out of every collection (``gc.freeze``: they live as long as the process); the young
generation is collected every 10,000 net allocations rather than 700, so that what a request
allocates is mostly freed by its reference counts before a collection sees it; the middle one
every 2 young collections, so that each walks few survivors (every 20: 125-143 ms of CPU each,
beside 10,000 open); and a full collection waits for 1,000 middle ones (besides Python's own
rule, a quarter of the old generation new since the last). Cycles are still collected by the
young and middle collections (tens of thousands a run of bench/streams.py; the full ones found
about ten a second). With 4,000 streams reconnecting 170 times a second, the longest collection
took 103 ms of CPU (a young one of 50,000 paused a worker for up to a second).

But a young collection walks every tracked object allocated since the last one and still alive,
and Python starts one when allocations *minus deallocations* pass the threshold. Open
connections keep replacing what they hold (each stream waits again after every heartbeat, each
long poll is a new request every 30 s) without adding to that count: beside 10,000 open
connections a worker's young generation grew to 75,000-118,000 live objects between two
collections, and each took 21-101 ms of CPU (up to 182 ms of wall time: every request of that
worker waited). So each worker also collects its young generation every second
(:func:`collect_young`): what a second of them allocates is a few thousand objects, walked in a
few milliseconds. The middle generation then follows every third second (as Python would after
2 young collections), and a full collection at most every 3,000 s (and only once the old
generation grew by a quarter since the last).
"""

from __future__ import annotations

import gc
from collections.abc import Callable

YOUNG = 10_000  # net allocations of tracked objects between young collections (Python: 700)
MIDDLE = 2  # young collections between collections of the middle generation (Python: 10)
OLD = 1000  # middle collections before a full one may run (Python: 10)
YOUNG_SECONDS = 1.0  # the young generation is collected at least this often


def settle() -> None:
    """In a worker, once its app is loaded: collect, freeze what is alive, raise thresholds."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG, MIDDLE, OLD)


def collect_young(sleep: Callable[[float], object], seconds: float = YOUNG_SECONDS) -> None:
    """Forever: ``sleep(seconds)``, then collect the young generation, or the young and middle
    ones when they are due (in a worker, as a greenlet of its own: ``sleep`` is gevent's)."""
    while True:
        sleep(seconds)
        gc.collect(_due())


def _due() -> int:
    """1 once MIDDLE young collections passed since the middle generation's last, else 0.
    Python applies its thresholds only to the collections it starts itself: young ones asked
    for alone would leave the middle generation to grow with every survivor (each connection
    opened since), for the next collection Python starts to walk all at once."""
    return 1 if gc.get_count()[1] > MIDDLE else 0
