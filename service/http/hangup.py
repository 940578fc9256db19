"""Noticing, while a stream waits for the next event, that its client has gone.

A waiting stream writes nothing, so a closed connection would only be found at the next write
(a heartbeat, up to 15 s later), holding the stream's memory, socket and hub entry until then.
Under gevent (``cardroom serve``) the event loop watches the socket while the stream waits: the
moment it becomes readable with nothing to read (the client closed it) the wait ends. Under
any other server (the werkzeug test server) there is no loop to ask: the next write finds it.
"""

from __future__ import annotations

import _socket
import socket
import sys
import threading
from typing import Any


def _event_loop() -> Any | None:
    """gevent's loop when this process is monkey-patched (a gevent worker), else None."""
    monkey = sys.modules.get("gevent.monkey")
    if monkey is None or not monkey.is_module_patched("socket"):
        return None
    import gevent

    return gevent.get_hub().loop


def _peer_closed(fd: int) -> bool:
    # A raw socket on the same descriptor: gevent's socket would wait instead of failing fast.
    probe = _socket.socket(fileno=fd)
    try:
        return probe.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True  # reset by the peer
    finally:
        probe.detach()


class Hangup:
    """Watches one client connection; ``gone`` once the client closed it.

    It is its own context manager, and the wait's callback a module function: a stream waits
    again after every heartbeat, and each object a wait allocates and holds (a generator, a
    closure and its cells) is one more for every young cycle collection to walk while it
    waits, 10,000 open streams' worth (service/http/heap.py)."""

    def __init__(self, sock: socket.socket | None) -> None:
        self._fd = sock.fileno() if sock is not None else -1
        self.gone = False
        self._watcher: Any | None = None

    def watch(self, woken: threading.Event) -> Hangup:
        """``with hangup.watch(woken):`` while inside, ``woken`` is set as soon as the client
        closes the connection."""
        loop = _event_loop() if self._fd >= 0 else None
        if loop is not None:
            self._watcher = loop.io(self._fd, 1)  # 1: readable
            self._watcher.start(_readable, self, woken)
        return self

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        watcher, self._watcher = self._watcher, None
        if watcher is not None:
            watcher.stop()
            watcher.close()


def _readable(hangup: Hangup, woken: threading.Event) -> None:
    watcher = hangup._watcher
    if _peer_closed(hangup._fd):
        hangup.gone = True
        woken.set()
    if watcher is not None:
        watcher.stop()  # else the client sent bytes mid-stream: stop looking (no busy loop)
