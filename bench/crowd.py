"""The watchers of bench/streams.py: event streams and long polls held open by a few processes
of their own (the load generator must cost little next to the server it measures: 10,000
connections in one Python process would make it the bottleneck). Each process runs an asyncio
loop of raw protocols, one callback per chunk read, no coroutine per line; it records when each
watcher first read each version of its game, and answers the bench's questions over a pipe.

Account streams (``GET /accounts/me/stream``, bench/account_streams.py) are a third kind: each
item is told apart by its ``id``; a ``your_turn`` is recorded as the arrival of its game's
version, and an item read twice is counted, on one connection (a defect) or after a resumption
with ``Last-Event-ID`` (the documented at-least-once re-send) apart."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import multiprocessing
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any

HOST = "127.0.0.1"
OPENING = 32  # connections each process opens at once (a crowd arriving, not one burst)
LONG_POLL_SECONDS = 30


ACCOUNT_STREAM = "/accounts/me/stream"


@dataclass(frozen=True)
class Spec:
    """One watcher: of game ``path`` from ``version`` on, from source address ``addr``; with
    ``account``, the stream of the account whose token is ``token`` instead (``path`` and
    ``version`` unused)."""

    path: str
    version: int
    addr: str
    token: str | None
    long_poll: bool
    account: bool = False

    @classmethod
    def of_account(cls, token: str, addr: str) -> Spec:
        return cls(ACCOUNT_STREAM, 0, addr, token, False, account=True)


@dataclass
class Tally:
    open_now: int = 0
    lost: int = 0
    doubled: int = 0
    reconnects: int = 0
    # account streams: items read (with an id), items read again on the same connection (never
    # allowed), items read again after a resumption (at least once: allowed), and the
    # ``your_turn`` items a new stream starts with (``id: null``)
    items: int = 0
    resent: int = 0
    waiting: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    # (game path, version) -> [watchers that read it, when the last of them did (wall clock,
    # to compare with the event's recorded_at)]
    arrivals: dict[tuple[str, int], list[float]] = field(default_factory=dict)

    def arrived(self, path: str, first: int, last: int) -> None:
        now = time.time()
        for version in range(first, last + 1):
            seen = self.arrivals.get((path, version))
            if seen is None:
                self.arrivals[(path, version)] = [1, now]
            else:
                seen[0] += 1
                seen[1] = now

    def summary(self) -> dict[str, Any]:
        return {
            "open_now": self.open_now,
            "lost": self.lost,
            "doubled": self.doubled,
            "reconnects": self.reconnects,
            "items": self.items,
            "resent": self.resent,
            "waiting": self.waiting,
            "errors": dict(self.errors),
        }


class _Reply(asyncio.Protocol):
    """HTTP/1.x answers on one connection; ``on_head`` sees the status line and headers,
    ``on_body`` the bytes that follow (a stream's) or a whole body (``Content-Length``)."""

    def __init__(self, request: bytes, done: asyncio.Future[None]) -> None:
        self.request = request
        self.done = done
        self.buffer = b""
        self.head: asyncio.Future[tuple[int, dict[str, str]]] = done.get_loop().create_future()
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        transport.write(self.request)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.head.done():
            self.head.set_exception(exc or ConnectionError("closed before an answer"))
        if not self.done.done():
            self.done.set_result(None)

    def stream_lines(self, data: bytes) -> list[bytes]:
        """The whole lines of an SSE body that ``data`` completes (after the head, which it
        resolves ``head`` with); a partial line waits for the next bytes."""
        self.buffer += data
        if not self.head.done():
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return []
            self.head.set_result(self.parse_head(self.buffer[:end]))
            self.buffer = self.buffer[end + 4 :]
        if b"\n" not in self.buffer:
            return []
        *lines, self.buffer = self.buffer.split(b"\n")
        return lines

    @staticmethod
    def parse_head(raw: bytes) -> tuple[int, dict[str, str]]:
        lines = raw.decode("latin-1").split("\r\n")
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        return int(lines[0].split()[1]), headers


class _Stream(_Reply):
    def __init__(self, spec: Spec, last: int, tally: Tally, done: asyncio.Future[None]) -> None:
        auth = f"Authorization: Bearer {spec.token}\r\n" if spec.token else ""
        # HTTP/1.0: the body is not chunked and ends when the server closes it.
        request = f"GET {spec.path}/stream HTTP/1.0\r\nHost: {HOST}\r\nLast-Event-ID: {last}\r\n"
        super().__init__(f"{request}{auth}\r\n".encode(), done)
        self.path, self.last, self.tally = spec.path, last, tally

    def data_received(self, data: bytes) -> None:
        for line in self.stream_lines(data):
            if line.startswith(b"id: "):
                self._event(int(line[4:]))

    def _event(self, version: int) -> None:
        if version <= self.last:
            self.tally.doubled += 1
            return
        if version > self.last + 1:
            self.tally.lost += version - self.last - 1
        self.tally.arrived(self.path, version, version)
        self.last = version


class _AccountStream(_Reply):
    """An account's stream: SSE messages, each an item with an ``id`` of its own. ``seen``: the
    ids the watcher read on its earlier connections; ``last``: the ``Last-Event-ID`` to resume
    from (None: a new stream)."""

    def __init__(
        self,
        spec: Spec,
        last: str | None,
        tally: Tally,
        done: asyncio.Future[None],
        *,
        seen: set[int],
    ) -> None:
        resume = f"Last-Event-ID: {last}\r\n" if last else ""
        request = (
            f"GET {ACCOUNT_STREAM} HTTP/1.0\r\nHost: {HOST}\r\n{resume}"
            f"Authorization: Bearer {spec.token}\r\n\r\n"
        )
        super().__init__(request.encode(), done)
        self.last, self.tally, self.seen = last, tally, seen
        self.ids: set[int] = set()  # read on this connection
        self.fields: dict[bytes, bytes] = {}

    def data_received(self, data: bytes) -> None:
        for line in self.stream_lines(data):
            if not line:
                fields, self.fields = self.fields, {}
                if b"data" in fields:
                    self._item(fields)
            elif not line.startswith(b":"):  # a comment: the heartbeat
                name, _, value = line.partition(b":")
                self.fields[name] = value.removeprefix(b" ")

    def _item(self, fields: dict[bytes, bytes]) -> None:
        if b"id" in fields:
            self.last = fields[b"id"].decode()
        item = json.loads(fields[b"data"])
        if item["id"] is None:  # a turn waiting when the stream began
            self.tally.waiting += 1
            return
        self.tally.items += 1
        if item["id"] in self.ids:
            self.tally.doubled += 1
            return
        self.ids.add(item["id"])
        if item["id"] in self.seen:
            self.tally.resent += 1
            return
        self.seen.add(item["id"])
        if item["type"] == "your_turn":
            self.tally.arrived(f"/games/{item['game_id']}", item["version"], item["version"])


class _LongPoll(_Reply):
    """Long polls one after the other on one kept-alive connection."""

    def __init__(self, spec: Spec, version: int, tally: Tally, done: asyncio.Future[None]) -> None:
        self.spec, self.version, self.tally = spec, version, tally
        super().__init__(self._request(), done)
        self.headers: dict[str, str] | None = None

    def _request(self) -> bytes:
        query = f"?wait_after={self.version}&wait_seconds={LONG_POLL_SECONDS}"
        return f"GET {self.spec.path}{query} HTTP/1.1\r\nHost: {HOST}\r\n\r\n".encode()

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while True:
            if self.headers is None:
                end = self.buffer.find(b"\r\n\r\n")
                if end < 0:
                    return
                status, self.headers = self.parse_head(self.buffer[:end])
                self.buffer = self.buffer[end + 4 :]
                if not self.head.done():
                    self.head.set_result((status, self.headers))
                if status != 200:
                    self.tally.errors[f"long poll {status}"] += 1
                    assert self.transport is not None
                    self.transport.close()
                    return
            length = int(self.headers.get("content-length", "0"))
            if len(self.buffer) < length:
                return
            self.buffer = self.buffer[length:]
            now = int(self.headers["etag"].split('"')[1].split("-")[0])
            if now > self.version:
                self.tally.arrived(self.spec.path, self.version + 1, now)
                self.version = now
            self.headers = None
            assert self.transport is not None
            self.transport.write(self._request())


class Crowd:
    """The watchers of one process."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.tally = Tally()
        self.stop = asyncio.Event()
        self.opening = asyncio.Semaphore(OPENING)
        self.tasks: list[asyncio.Task[None]] = []
        self.protocols: set[_Reply] = set()

    def open(self, specs: list[Spec]) -> None:
        self.stop.clear()
        self.tasks += [asyncio.create_task(self.watch(spec)) for spec in specs]

    async def close(self) -> dict[str, Any]:
        self.stop.set()
        for protocol in list(self.protocols):
            if protocol.transport is not None:
                protocol.transport.close()
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        summary = self.tally.summary()
        self.tasks, self.tally = [], Tally()
        return summary

    async def watch(self, spec: Spec) -> None:
        loop = asyncio.get_running_loop()
        position: int | str | None = None if spec.account else spec.version
        counted = False
        kind: Callable[..., _Reply] = _LongPoll if spec.long_poll else _Stream
        if spec.account:
            kind = functools.partial(_AccountStream, seen=set())
        try:
            while not self.stop.is_set():
                done: asyncio.Future[None] = loop.create_future()
                protocol = kind(spec, position, self.tally, done)
                try:
                    async with self.opening:
                        await loop.create_connection(
                            lambda p=protocol: p, HOST, self.port, local_addr=(spec.addr, 0)
                        )
                        if not spec.long_poll:  # a long poll answers only once the game moves
                            await protocol.head
                    if spec.long_poll and not counted:
                        self.tally.open_now, counted = self.tally.open_now + 1, True
                    status, headers = await protocol.head
                except (OSError, ValueError, IndexError) as exc:
                    self.tally.errors[type(exc).__name__] += 1
                    await asyncio.sleep(0.5)
                    continue
                if status != 200:
                    if not spec.long_poll:
                        self.tally.errors[f"stream {status}"] += 1
                    assert protocol.transport is not None
                    protocol.transport.close()
                    await asyncio.sleep(float(headers.get("retry-after", 1)))
                    continue
                if not counted:
                    self.tally.open_now, counted = self.tally.open_now + 1, True
                self.protocols.add(protocol)
                try:
                    await done
                finally:
                    self.protocols.discard(protocol)
                if isinstance(protocol, _LongPoll):
                    position = protocol.version
                elif isinstance(protocol, _Stream | _AccountStream):
                    position = protocol.last
                if not self.stop.is_set():
                    self.tally.reconnects += 1  # the server ended it: resume from `position`
        finally:
            if counted:
                self.tally.open_now -= 1

    def arrivals(self, keys: list[tuple[str, int]]) -> list[tuple[int, float]]:
        found = (self.tally.arrivals.get(key) for key in keys)
        return [(int(seen[0]), seen[1]) if seen else (0, 0.0) for seen in found]


async def _serve(pipe: Connection, port: int) -> None:
    crowd = Crowd(port)
    loop = asyncio.get_running_loop()
    finished = loop.create_future()
    pending: set[asyncio.Task[Any]] = set()

    async def closing() -> None:
        pipe.send(await crowd.close())

    def command() -> None:
        name, argument = pipe.recv()
        if name == "open":
            crowd.open(argument)
            pipe.send(None)
        elif name == "status":
            pipe.send(crowd.tally.summary())
        elif name == "arrivals":
            pipe.send(crowd.arrivals(argument))
        elif name == "close":
            task = asyncio.create_task(closing())
            pending.add(task)
            task.add_done_callback(pending.discard)
        elif name == "exit":
            finished.set_result(None)

    loop.add_reader(pipe.fileno(), command)
    await finished
    await crowd.close()


def _process_main(pipe: Connection, port: int) -> None:
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(pipe, port))


class Crowds:
    """``processes`` watcher processes; the bench talks to them through pipes."""

    def __init__(self, port: int, processes: int) -> None:
        context = multiprocessing.get_context("spawn")
        self.pipes: list[Connection] = []
        self.processes = []
        for _ in range(processes):
            ours, theirs = context.Pipe()
            process = context.Process(target=_process_main, args=(theirs, port), daemon=True)
            process.start()
            self.pipes.append(ours)
            self.processes.append(process)

    def _ask(self, arguments: list[Any]) -> list[Any]:
        for pipe, argument in zip(self.pipes, arguments, strict=True):
            pipe.send(argument)
        return [pipe.recv() for pipe in self.pipes]

    def open(self, specs: list[Spec]) -> None:
        count = len(self.pipes)
        self._ask([("open", specs[index::count]) for index in range(count)])

    def status(self) -> dict[str, Any]:
        return _sum(self._ask([("status", None)] * len(self.pipes)))

    def close(self) -> dict[str, Any]:
        return _sum(self._ask([("close", None)] * len(self.pipes)))

    def arrivals(self, keys: list[tuple[str, int]]) -> list[tuple[int, float]]:
        """Per key: how many watchers read it, and when the last of them did."""
        answers = self._ask([("arrivals", keys)] * len(self.pipes))
        return [
            (sum(a[i][0] for a in answers), max(a[i][1] for a in answers)) for i in range(len(keys))
        ]

    def exit(self) -> None:
        for pipe in self.pipes:
            with contextlib.suppress(OSError):
                pipe.send(("exit", None))
        for process in self.processes:
            process.join(10)
            if process.is_alive():
                process.kill()


def _sum(summaries: list[dict[str, Any]]) -> dict[str, Any]:
    errors: Counter[str] = Counter()
    for summary in summaries:
        errors.update(summary["errors"])
    total = {key: sum(s[key] for s in summaries) for key in summaries[0] if key != "errors"}
    return {**total, "errors": dict(errors)}
