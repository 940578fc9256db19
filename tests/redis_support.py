"""A redis-server of a test's own, started as operators run it (no persistence: --save "",
no append-only file) on a free loopback port, stopped and started again by the tests that need
Redis to go away. `.ci/run` installs redis-server when it is missing; without it these tests
fail with a message saying how to get it (they are never skipped)."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager

import redis
from patience import scaled
from serve_support import free_port

WAIT = scaled(10.0)  # seconds: the most redis-server may take to answer


class RedisServer:
    def __init__(self) -> None:
        binary = shutil.which("redis-server")
        assert binary, "these tests need redis-server: apt-get install redis-server"
        self.binary = binary
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self) -> redis.Redis:
        return redis.Redis.from_url(self.url, socket_timeout=1)

    def start(self) -> None:
        command = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1"]
        command += ["--save", "", "--appendonly", "no"]
        self.process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        client = redis.Redis.from_url(self.url, socket_timeout=1)
        until = time.monotonic() + WAIT
        while True:
            try:
                if client.ping():
                    return
            except redis.ConnectionError:
                assert self.process.poll() is None, "redis-server exited"
                assert time.monotonic() < until, "redis-server did not answer"
                time.sleep(0.02)

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(WAIT)
            self.process = None


@contextmanager
def redis_server() -> Iterator[RedisServer]:
    server = RedisServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()
