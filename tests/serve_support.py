"""``cardroom serve`` in its own process on the test database, for tests that need the real
server (gunicorn and its worker), not the werkzeug test server."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import requests
from api_client import expect_status
from patience import scaled

ROOT = Path(__file__).resolve().parent.parent
WAIT = scaled(
    60.0
)  # seconds: the most a server may take to start or stop (20 fell short under load)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Served:
    url: str
    port: int
    process: subprocess.Popen[str]
    log: list[str] = field(default_factory=list)
    access: list[str] = field(default_factory=list)  # with access_log=True: its lines


@contextmanager
def cardroom_serve(
    database_url: str,
    args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    access_log: bool = False,
) -> Iterator[Served]:
    """``cardroom serve`` (one worker unless ``args`` say otherwise) until the block ends;
    ``access_log``: its access log's lines kept in ``Served.access``."""
    port = free_port()
    command = [sys.executable, "-m", "service.cli.main", "serve", "--port", str(port)]
    command += ["--workers", "1", *([] if access_log else ["--no-access-log"]), *args]
    environment = {**os.environ, "DATABASE_URL": database_url, **(env or {})}
    server = subprocess.Popen(
        command,
        cwd=ROOT,
        env=environment,
        stdout=subprocess.PIPE if access_log else subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    served = Served(f"http://127.0.0.1:{port}", port, server)
    listening = threading.Event()

    def read_log() -> None:  # drained all along, so that the server never blocks on its pipe
        assert server.stderr is not None
        for line in server.stderr:
            served.log.append(line)
            if "Listening at" in line:
                listening.set()

    def read_access() -> None:
        assert server.stdout is not None
        served.access.extend(server.stdout)

    reader = threading.Thread(target=read_log, daemon=True)
    reader.start()
    if access_log:
        threading.Thread(target=read_access, daemon=True).start()
    try:
        assert listening.wait(WAIT), "the server did not start:\n" + "".join(served.log)
        # The socket is bound: this waits in its backlog until the worker has booted.
        expect_status(requests.get(f"{served.url}/healthz", timeout=WAIT), 200)
        yield served
    finally:
        server.terminate()
        try:
            server.wait(WAIT)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
            raise
        reader.join(WAIT)
