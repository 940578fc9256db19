"""psycopg's waits for the network, on gevent's event loop itself when the process is
monkey-patched (``cardroom serve``'s gevent workers).

psycopg drives each operation as a generator that yields what it waits for (the socket
readable, writable, or either) and picks the function that waits once, at import. Under gevent
its C wait would block the whole worker, so it takes ``select.poll``: gevent's pure-Python
emulation, which builds a poll object, a watcher per registered descriptor, an event and a
result list for every wait. One ``SELECT 1`` cost 152,000 instructions that way and 109,000
with the wait below (87,000 with the C wait that does not cooperate; ``perf stat``, issue 40
goal 3): a statement waits for its answer once, so every statement of every request paid it.

:func:`wait` starts one io watcher on the connection's socket and switches to gevent's hub
until it fires: the greenlet sleeps, the worker serves other requests, as with gevent's poll.
A wait with a ``timeout`` (rare: ``notifies``, a cancel) keeps psycopg's own. :func:`install`
makes it psycopg's ``waiting.wait``, which every connection's ``wait`` calls (psycopg's own
handling of an interrupted wait around it stays); connecting keeps psycopg's ``wait_conn``.
"""

from __future__ import annotations

import sys
from typing import Any

from psycopg import waiting
from psycopg.abc import RV, PQGen
from psycopg.waiting import Ready, Wait

_EVENTS = {Wait.R: 1, Wait.W: 2, Wait.RW: 3}  # libev/libuv's READ, WRITE
_READY = {Wait.R: Ready.R, Wait.W: Ready.W}


_PSYCOPG_WAIT = waiting.wait  # the function psycopg chose at its import


def cooperative() -> bool:
    """Whether gevent patched ``select`` in this process (psycopg's own test)."""
    monkey = sys.modules.get("gevent.monkey")
    return monkey is not None and bool(monkey.is_module_patched("select"))


def install() -> None:
    """:func:`wait` as psycopg's wait, if this process is monkey-patched by gevent (psycopg
    then took gevent's ``select.poll``); else psycopg's choice stays (its C wait)."""
    if cooperative() and _PSYCOPG_WAIT is waiting.wait_poll:
        waiting.wait = wait


def wait(
    gen: PQGen[RV],
    fileno: int,
    interval: float | None = None,
    timeout: float | None = None,
) -> RV:
    """psycopg's ``waiting.wait``, on gevent's hub: ``gen`` run until it returns, the current
    greenlet switched out while ``fileno`` is not ready. ``interval`` is not needed: nothing
    here has to look up between two readinesses (psycopg's own wakes every 0.1 s to let a
    KeyboardInterrupt in)."""
    if timeout is not None:
        return _PSYCOPG_WAIT(gen, fileno, interval=interval or 0.1, timeout=timeout)
    from gevent import get_hub

    hub = get_hub()
    try:
        state = next(gen)
        while True:
            watcher = hub.loop.io(fileno, _EVENTS[state])
            try:
                hub.wait(watcher)
            finally:
                watcher.close()
            state = gen.send(_READY.get(state) or _ready_now(fileno))
    except StopIteration as done:
        result: RV = done.value
        return result


def _ready_now(fileno: int) -> int:
    """Which of reading and writing ``fileno`` can do now (the watcher says one of them did;
    a wait for either is rare: a statement larger than the socket's buffer)."""
    from gevent import monkey

    poll: Any = monkey.get_original("select", "poll")()
    poll.register(fileno, 1 | 4)  # POLLIN | POLLOUT
    events = poll.poll(0)
    mask = events[0][1] if events else 0
    return (Ready.R if mask & 1 else 0) | (Ready.W if mask & 4 else 0) or Ready.RW
