"""Limits on the connections a client holds open (event streams, long polls) and on how long the
server waits for a slow or hostile client, from the settings (service/settings.py):

- ``CARDROOM_STREAMS_PER_ADDRESS`` (default 32; 0: no cap): open event streams and waiting long
  polls one client address may hold in one server process; past it, ``429 too_many_streams``
  with ``Retry-After``. Counted per process, even when the rate limits count in Redis
  (service/http/abuse.py), on purpose: what the cap protects is a process's own open
  connections (``CARDROOM_WORKER_CONNECTIONS``, greenlets, file descriptors), so that one address
  cannot fill one worker, and that is per process; across the service an address holds at most
  hosts x workers x cap. A shared count would cost two Redis round trips per stream and long
  poll (which reconnect every few minutes and every 30 s) and would leak the slots of a killed
  worker until they expired. The address is the client's behind a trusted proxy
  (``CARDROOM_TRUSTED_PROXIES``, service/http/proxies.py).
- ``CARDROOM_HEADER_TIMEOUT`` (default 5 s): the request line and headers must arrive within it
  (also how long an idle kept-alive connection stays open); slower connections are closed.
- ``CARDROOM_BODY_TIMEOUT`` (default 10 s): a request body must arrive within it, else
  ``408 request_timeout``.
- ``CARDROOM_SEND_TIMEOUT`` (default 30 s): a stream whose client reads nothing for that long
  (its buffers full) is closed; with ``CARDROOM_STREAM_BUFFER`` (default 64 KiB, the socket's
  send buffer) this bounds what a non-reading client may make the server hold.
- ``CARDROOM_WORKER_CONNECTIONS`` (default 10000): open connections per server process.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from service.http.problems import Problem
from service.settings import settings

RETRY_AFTER_SECONDS = 5  # streams end within their lifetime; a slot is usually free by then


@dataclass(frozen=True)
class ConnectionSettings:
    streams_per_address: int
    header_timeout: float
    body_timeout: float
    send_timeout: float
    stream_buffer: int
    worker_connections: int

    @classmethod
    def from_env(cls) -> ConnectionSettings:
        configured = settings()
        return cls(
            streams_per_address=configured.streams_per_address,
            header_timeout=configured.header_timeout,
            body_timeout=configured.body_timeout,
            send_timeout=configured.send_timeout,
            stream_buffer=configured.stream_buffer,
            worker_connections=configured.worker_connections,
        )


class OpenStreams:
    """How many streams and waiting long polls each client address holds in this process."""

    def __init__(self, cap: int) -> None:
        self.cap = cap  # 0: no cap
        self._lock = threading.Lock()
        self._open: Counter[str] = Counter()

    def admit(self, address: str) -> Callable[[], None]:
        """Count one more for ``address`` and return what releases it (call it exactly once),
        or raise ``429 too_many_streams`` when the address holds its cap already."""
        with self._lock:
            if self.cap and self._open[address] >= self.cap:
                raise Problem(
                    429,
                    "too_many_streams",
                    f"your address holds {self.cap} open event streams and long polls already;"
                    " close one, or retry after Retry-After seconds",
                    headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
                )
            self._open[address] += 1
        released = False

        def release() -> None:
            nonlocal released
            with self._lock:
                if released:
                    return
                released = True
                self._open[address] -= 1
                if self._open[address] <= 0:
                    del self._open[address]

        return release

    def held(self, address: str) -> int:
        with self._lock:
            return self._open[address]
