"""A connection attempt the service gives up on leaves no session at the server (issue 39, item
6). The HA drill on a loaded machine found each worker holding idle sessions it never used, on
the leader and the standbys alike (31 on one worker whose pool holds 10): attempts whose
``connect_timeout`` ran out while the server, slowed by load and SCRAM, was still answering.
psycopg abandons such an attempt with its libpq connection, socket open; the server completes
the handshake and keeps the session until Python's cycle collector frees it (in a worker, up to
an hour: service/http/heap.py). Enough of them and the server refuses everyone ("too many
clients already"). Here a proxy holds back the server's answer past the connect timeout."""

from __future__ import annotations

import contextlib
import gc
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit

import psycopg
import pytest

from service.store import db

HOLD_SECONDS = 4.0  # the server's first answer reaches the client this late
TIMEOUT_SECONDS = 2  # libpq's least connect_timeout, as the drill's hosts use


@contextmanager
def slow_answers(upstream: tuple[str, int]) -> Iterator[int]:
    """A loopback proxy to ``upstream`` that passes the server's bytes on only
    :data:`HOLD_SECONDS` after each connection opened (a loaded server, slow to answer), and a
    client's close on at once. Yields its port."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def pump(source: socket.socket, sink: socket.socket, hold: float) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                time.sleep(max(0.0, hold - time.monotonic()))
                sink.sendall(data)
        for end in (sink, source):  # either side's end ends both
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)

    def serve() -> None:
        while not stop.is_set():
            try:
                client, _ = listener.accept()
            except OSError:
                return
            server = socket.create_connection(upstream)
            hold = time.monotonic() + HOLD_SECONDS
            threading.Thread(target=pump, args=(client, server, 0.0), daemon=True).start()
            threading.Thread(target=pump, args=(server, client, hold), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        listener.close()


def sessions(url: str, name: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", (name,)
        ).fetchone()
    assert row is not None
    return int(row[0])


def wait_for_none(url: str, name: str, seconds: float) -> int:
    """Sessions named ``name`` left once none is, or ``seconds`` have passed."""
    until = time.monotonic() + seconds
    while (left := sessions(url, name)) and time.monotonic() < until:
        time.sleep(0.1)
    return left


@pytest.mark.parametrize("hosts", [1, 2])
def test_a_connection_attempt_that_timed_out_leaves_no_session(
    database_url: str, hosts: int
) -> None:
    """Through the proxy, one host or two (FirstToAnswer tries both at once): the attempt fails
    with psycopg's timeout; the server had made the session (trust, no password here) and it
    ends once the attempt is given up. With the cycle collector off, as it mostly is in a
    worker: the sessions lingered until a full collection."""
    parts = urlsplit(database_url)
    name = f"cardroom-abandoned-{uuid.uuid4().hex[:8]}"
    with slow_answers((parts.hostname or "127.0.0.1", parts.port or 5432)) as port:
        hosts_list = ",".join(["127.0.0.1"] * hosts)
        ports = ",".join([str(port)] * hosts)
        conninfo = psycopg.conninfo.make_conninfo(
            database_url,
            host=hosts_list,
            port=ports,
            application_name=name,
            connect_timeout=TIMEOUT_SECONDS,
            sslmode="disable",  # the startup message first: the server makes the session
            gssencmode="disable",
        )
        gc.disable()
        try:
            began = time.monotonic()
            with pytest.raises(psycopg.OperationalError, match="timeout"):
                db.FirstToAnswer.connect(conninfo)
            assert time.monotonic() - began < HOLD_SECONDS  # given up before the answer came
            # The server made each session meanwhile (its answers held back by the proxy)...
            # ...and ends it once the client's socket closes: no idle session is left.
            left = wait_for_none(database_url, name, HOLD_SECONDS + 2)
        finally:
            gc.enable()
    assert left == 0
