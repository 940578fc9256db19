"""Thousands of open event streams and long polls on one ``cardroom serve`` with its defaults.

Side by side in one run, on one server: the pick load of bench/http_bench.py (32 clients playing
whole 4-player games) and ``/healthz`` latency with no stream open, then with ``--streams`` open
connections (event streams and long polls spread over ``--games`` games, half of the streams with a
seat's bearer token, the others spectators'), then again with none and with them open (the p99
ratio compares both loads of each kind: the machine's drift over the run falls on both sides of it,
not on one); fan-out latency (from the append, its event's ``recorded_at``, and from sending the
pick, to the moment the last watcher of that game has read the event) for 100 streams of one game
and for every watcher of the ``--games`` games, one pick per game, twice: as a burst (8 clients
sending as fast as they are answered: what it measures is mostly the queue the burst makes) and
paced (the same number of picks spread evenly over ``--spread`` seconds, the rate printed: what a
watcher waits at a steady rate; the goal applies to this one), each with the server's CPU (all
workers, /proc) and the database's committed transactions per pick, deliveries included; memory per
open connection (PSS of the gunicorn master and workers, before and after opening them); the
server's CPU over 30 s with them open and nothing else happening; and, during each pick load, the
workers' cycle collections (gc.callbacks, in a sitecustomize of the server's own): how many per
generation, their CPU time, the longest pause, the most objects one walked. Every stream checks
that it gets each event exactly once, across the reconnections the server asks for.

The watchers live in ``--processes`` processes of their own (bench/crowd.py: asyncio protocols
on raw sockets, so that the load generator is not the bottleneck), on loopback source addresses
127.77.x.y (20 connections per address: the server's per-address cap, 32, stays in force).
Everything is bounded in count and time (``--deadline``); all traffic is to 127.0.0.1.

    python -m bench.streams                                 # embedded PostgreSQL in a temp dir
    python -m bench.streams --url postgresql://...          # a migrated scratch database
    python -m bench.streams --worker-class gthread --streams 200   # the former threaded worker
    python -m bench.streams --streams 4000 --games 400 --profile /tmp/p   # cProfile per worker
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from collections.abc import Awaitable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import psycopg

from bench import http_bench
from bench.crowd import Crowds, Spec

HOST = "127.0.0.1"
PER_ADDRESS = 20  # connections per loopback source address (the server's cap is 32)
LONG_POLL_SHARE = 0.2  # of the open connections; the rest are event streams
HOT_WATCHERS = 100
HOT_APPENDS = 20
QUIET_SECONDS = 30  # a heartbeat (15 s) or two of each stream, a long poll's whole wait (30 s)
PICK_CLIENTS = 32


@dataclass
class Game:
    path: str
    token: str
    hand: list[str]
    version: int
    turn: dict[str, int]


def log(message: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} {message}", file=sys.stderr, flush=True)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else float("nan")


def source_address(index: int) -> str:
    slot = index // PER_ADDRESS
    return f"127.77.{slot // 250}.{slot % 250 + 1}"


# --- HTTP/1.1 on asyncio streams (the watchers' side must hold 10,000 connections) -------------


async def connect(addr: str | None, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    local = (addr, 0) if addr else None
    return await asyncio.open_connection(HOST, port, local_addr=local, limit=1 << 20)


async def read_head(reader: asyncio.StreamReader) -> tuple[int, dict[str, str]]:
    status = int((await reader.readline()).split()[1])
    headers: dict[str, str] = {}
    while (line := await reader.readline()) not in (b"\r\n", b"\n", b""):
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, headers


async def call(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    method: str,
    path: str,
    body: Any = None,
    token: str | None = None,
) -> tuple[int, dict[str, str], Any]:
    payload = b"" if body is None else json.dumps(body).encode()
    head = f"{method} {path} HTTP/1.1\r\nHost: {HOST}\r\nContent-Length: {len(payload)}\r\n"
    if body is not None:
        head += "Content-Type: application/json\r\n"
    if token:
        head += f"Authorization: Bearer {token}\r\n"
    writer.write(head.encode() + b"\r\n" + payload)
    status, headers = await read_head(reader)
    data = await reader.readexactly(int(headers.get("content-length", "0")))
    return status, headers, json.loads(data) if data else None


class Api:
    """One kept-alive connection for the bench's own calls (create, join, pick, healthz)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.conn: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def call(self, method: str, path: str, body: Any = None, token: str | None = None):
        for attempt in (1, 2):
            if self.conn is None:
                self.conn = await connect(None, self.port)
            try:
                return await call(*self.conn, method, path, body, token)
            except (IndexError, ConnectionError, asyncio.IncompleteReadError):
                # The server closed the idle kept-alive connection: open another, send again.
                self.conn[1].close()
                self.conn = None
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")


async def new_game(api: Api) -> Game:
    """A 2-player Sushi Go game: seat 1 a greedy bot, seat 0 ours (its token picks)."""
    body = {"game": "sushi-go", "players": 2, "bots": [{"seat": 1, "kind": "greedy"}]}
    _, headers, _ = await api.call("POST", "/games", body)
    path = headers["location"]
    _, _, seat = await api.call("POST", f"{path}/players", {"name": "watched"})
    _, _, view = await api.call("GET", path, token=seat["token"])
    return Game(path, seat["token"], view["you"]["hand"], view["version"], turn_of(view))


def turn_of(view: dict[str, Any]) -> dict[str, int]:
    return {"round": view["round"], "turn": view["turn"]}  # a move names the turn it answers


async def pick(api: Api, game: Game) -> int:
    """Our seat's pick (the bot has picked already): returns the first version it appends."""
    first = game.version + 1
    status, _, view = await api.call(
        "POST", f"{game.path}/moves", {**game.turn, "cards": game.hand[:1]}, game.token
    )
    if status != 200:
        raise RuntimeError(f"pick refused: {status} {view}")
    game.version, game.hand, game.turn = view["version"], view["you"]["hand"], turn_of(view)
    return first


# --- measurements -------------------------------------------------------------------------------


def server_pss_kb(master: int) -> int:
    """Proportional set size of the gunicorn master and its workers (shared pages split)."""
    pids = [master]
    with contextlib.suppress(OSError):
        children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
        pids += [int(pid) for pid in children]
    total = 0
    for pid in pids:
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
    return total


def _pick_client(base: str) -> tuple[list[float], int]:
    """One http_bench client playing one game; a failed game (a 5xx, a timeout) is counted."""
    try:
        latencies, _, errors, _ = http_bench._client((base, 1, None))
    except Exception:
        return [], 1
    return latencies, errors


def pick_load(base: str, clients: int) -> tuple[list[float], int]:
    """bench/http_bench.py's clients, one whole 4-player game each: pick latencies (s), and
    the games or picks that failed."""
    with multiprocessing.get_context("spawn").Pool(min(clients, 8)) as pool:
        results = pool.map(_pick_client, [base] * clients, chunksize=1)
    return [x for latencies, _ in results for x in latencies], sum(e for _, e in results)


async def healthz_while(api: Api, done: asyncio.Event) -> list[float]:
    """/healthz latencies every 0.1 s until ``done``; an answer other than 200 counts as
    infinitely slow."""
    latencies = []
    while not done.is_set():
        started = time.monotonic()
        status, _, _ = await api.call("GET", "/healthz")
        latencies.append(time.monotonic() - started if status == 200 else float("inf"))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(done.wait(), 0.1)
    return latencies


@dataclass
class Phase:
    picks: list[float]
    failed: int
    healthz: list[float]

    def row(self) -> str:
        ms = 1000
        return (
            f"pick p50 {statistics.median(self.picks) * ms:7.1f} ms  "
            f"p99 {percentile(self.picks, 0.99) * ms:7.1f} ms ({len(self.picks)} picks, "
            f"{self.failed} failed);  "
            f"/healthz p50 {statistics.median(self.healthz) * ms:6.1f} ms  "
            f"p99 {percentile(self.healthz, 0.99) * ms:6.1f} ms  "
            f"max {max(self.healthz) * ms:6.1f} ms ({len(self.healthz)})"
        )


def pooled(phases: list[Phase]) -> Phase:
    return Phase(
        [x for phase in phases for x in phase.picks],
        sum(phase.failed for phase in phases),
        [x for phase in phases for x in phase.healthz],
    )


async def measure_phase(port: int, clients: int = PICK_CLIENTS) -> Phase:
    api, done = Api(port), asyncio.Event()
    sampler = asyncio.create_task(healthz_while(api, done))
    try:
        picks, failed = await asyncio.to_thread(pick_load, f"http://{HOST}:{port}", clients)
    finally:
        done.set()
    return Phase(picks, failed, await sampler)


@dataclass
class FanOut:
    """Per game, seconds until the last of its watchers read the pick's first event: from
    sending the pick, and from the event's ``recorded_at`` (the append's transaction, just
    before its commit and NOTIFY: what the goal measures); and the server's CPU seconds (all
    workers, /proc) over the phase, picks and deliveries together."""

    from_send: list[float] = field(default_factory=list)
    from_commit: list[float] = field(default_factory=list)
    missing: int = 0
    cpu: float = 0.0
    seconds: float = 0.0  # from the first pick sent to the last one answered
    queries: int = 0  # transactions committed in the database meanwhile (each read is one)
    arrived: dict[tuple[str, int], float] = field(default_factory=dict)  # when the last read it

    def __iadd__(self, other: FanOut) -> FanOut:
        self.from_send += other.from_send
        self.from_commit += other.from_commit
        self.missing += other.missing
        self.cpu += other.cpu
        self.seconds += other.seconds
        self.queries += other.queries
        self.arrived |= other.arrived
        return self

    async def settle(self, apis: list[Api]) -> FanOut:
        """Times from the append, once the phase is over (the bench's reads of each event's
        ``recorded_at`` are no part of what it measures)."""
        recorded = await recorded_at(apis, list(self.arrived))
        self.from_commit = [last - recorded[key] for key, last in self.arrived.items()]
        return self

    def row(self) -> str:
        ms = 1000
        return (
            f"from the append p50 {statistics.median(self.from_commit) * ms:.1f} ms  p99 "
            f"{percentile(self.from_commit, 0.99) * ms:.1f} ms; from sending the pick p50 "
            f"{statistics.median(self.from_send) * ms:.1f} ms  p99 "
            f"{percentile(self.from_send, 0.99) * ms:.1f} ms; missed {self.missing}; per pick: "
            f"server CPU {self.cpu / max(1, len(self.from_send)) * ms:.1f} ms, "
            f"{self.queries / max(1, len(self.from_send)):.1f} database transactions"
        )

    def rate(self) -> str:
        picks = len(self.from_send)
        return f"{picks:,} picks in {self.seconds:.1f} s ({picks / max(self.seconds, 1e-9):.0f}/s)"


async def fan_out(
    crowds: Crowds,
    apis: list[Api],
    games: list[Game],
    expected: int,
    spread: float = 0.0,
) -> FanOut:
    """One pick in each game, then how long its first event took to reach all ``expected``
    watchers of the game. ``spread`` = 0: the picks go out as fast as the clients (``apis``)
    send them (a burst); else the i-th pick is sent ``i * spread / len(games)`` seconds after
    the first (a steady rate), by whichever client is free."""
    sent: dict[tuple[str, int], float] = {}
    queue = list(enumerate(games))
    interval = spread / len(games)
    start = time.monotonic()

    async def post(api_conn: Api) -> None:
        while queue:
            index, game = queue.pop(0)
            if (wait := start + index * interval - time.monotonic()) > 0:
                await asyncio.sleep(wait)
            first, started = game.version + 1, time.time()
            await pick(api_conn, game)
            sent[(game.path, first)] = started

    await asyncio.gather(*(post(conn) for conn in apis))
    seconds = time.monotonic() - start
    keys = list(sent)
    deadline = time.monotonic() + 10
    while True:
        seen = crowds.arrivals(keys)
        if all(count >= expected for count, _ in seen) or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.05)
    result = FanOut(missing=sum(max(0, expected - count) for count, _ in seen), seconds=seconds)
    for key, (count, last) in zip(keys, seen, strict=True):
        if count:
            result.from_send.append(last - sent[key])
            result.arrived[key] = last
    return result


STATS_FLUSH_SECONDS = 1.5  # a backend reports its counts to pg_stat_database within a second


_STATS: dict[str, psycopg.Connection[Any]] = {}  # one connection for the run: the server is shared


def transactions(url: str) -> int:
    """Transactions committed in the bench's database so far (an autocommit read is one)."""
    conn = _STATS.get(url)
    if conn is None:
        conn = _STATS[url] = psycopg.connect(url, autocommit=True)
    conn.execute("SELECT pg_stat_clear_snapshot()")
    row = conn.execute(
        "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"
    ).fetchone()
    return int(row[0]) if row else 0


def close_stats() -> None:
    """Close the connections :func:`transactions` opened."""
    for conn in _STATS.values():
        conn.close()
    _STATS.clear()


def tear_down(crowds: Crowds, server: subprocess.Popen[bytes], site: Path) -> None:
    """What a streams run leaves: the stats connections, the watchers' processes, the server
    and its site folder."""
    close_stats()
    crowds.exit()
    server.terminate()
    server.wait(timeout=60)
    shutil.rmtree(site, ignore_errors=True)


async def accounted(server: int, url: str, phase: Awaitable[FanOut]) -> FanOut:
    """``phase``'s result with the server's CPU seconds and the database's transactions
    spent meanwhile (until every watcher had the events: picks and deliveries together)."""
    cpu, queries = http_bench.process_tree_cpu(server), transactions(url)
    result = await phase
    result.cpu = http_bench.process_tree_cpu(server) - cpu
    await asyncio.sleep(STATS_FLUSH_SECONDS)
    result.queries = transactions(url) - queries - 2  # less the bench's own two
    return result


async def recorded_at(apis: list[Api], keys: list[tuple[str, int]]) -> dict[tuple[str, int], float]:
    """When each event was recorded (the database's clock: this machine's)."""
    found: dict[tuple[str, int], float] = {}
    queue = list(keys)

    async def ask(api: Api) -> None:
        while queue:
            path, version = key = queue.pop()
            _, _, page = await api.call("GET", f"{path}/events?after={version - 1}&limit=1")
            found[key] = datetime.fromisoformat(page["events"][0]["recorded_at"]).timestamp()

    await asyncio.gather(*(ask(api) for api in apis))
    return found


# --- the server and the run ---------------------------------------------------------------------


PROFILE_SITE = """
import atexit, cProfile, os, time
def _profile():
    profile = cProfile.Profile(time.process_time)  # CPU time: the machine is shared
    profile.enable()
    atexit.register(lambda: (profile.disable(), profile.dump_stats(
        os.path.join(os.environ["CARDROOM_BENCH_PROFILE"], f"worker-{os.getpid()}.prof"))))
os.register_at_fork(after_in_child=_profile)
"""


GC_SITE = """
import gc, json, os, time
def _record_collections():
    path = os.path.join(os.environ["CARDROOM_BENCH_GC"], f"gc-{os.getpid()}.jsonl")
    started = []
    def callback(phase, info):
        if phase == "start":
            # what the collection walks: the tracked objects of its generations (counted
            # before the timing starts)
            walked = sum(len(gc.get_objects(g)) for g in range(info["generation"] + 1))
            started[:] = [time.perf_counter(), time.thread_time(), walked]
        elif started:
            wall, cpu = time.perf_counter() - started[0], time.thread_time() - started[1]
            row = [time.time(), info["generation"], wall, cpu, started[2], info["collected"]]
            with open(path, "a") as out:  # after the timing: its cost is not counted
                out.write(json.dumps(row) + "\\n")
    gc.callbacks.append(callback)
os.register_at_fork(after_in_child=_record_collections)
"""


def start_server(
    url: str, port: int, worker_class: str, site: Path, profile: str | None = None
) -> subprocess.Popen[bytes]:
    # The bench creates a thousand games from one address: the rate limits would refuse it.
    env = {**os.environ, "DATABASE_URL": url, "CARDROOM_RATE_LIMITS": "off"}
    # A sitecustomize of the server's alone (no hook in the service): each worker records its
    # cycle collections (generation, wall and CPU seconds, objects walked and freed) in
    # ``site``; with ``profile``, also cProfiles itself from its fork to its exit, timed in CPU
    # seconds of the worker. Under gevent a function's cumulative time includes the other
    # greenlets that ran while it waited; its own time does not.
    code = GC_SITE
    env["CARDROOM_BENCH_GC"] = str(site)
    if profile:
        Path(profile).mkdir(parents=True, exist_ok=True)
        code += PROFILE_SITE
        env["CARDROOM_BENCH_PROFILE"] = profile
    (site / "sitecustomize.py").write_text(code)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
    command = [sys.executable, "-m", "service.cli.main", "serve", "--port", str(port)]
    command += ["--no-access-log", "--worker-class", worker_class]
    server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with (
            contextlib.suppress(OSError),
            urllib.request.urlopen(f"http://{HOST}:{port}/healthz", timeout=1),
        ):
            return server
        time.sleep(0.1)
    server.kill()
    raise RuntimeError("the server did not start within 60 s")


def collections_during(site: Path, start: float, end: float) -> str:
    """The workers' cycle collections between ``start`` and ``end`` (wall clock), per
    generation: how many, their CPU seconds in all, the longest pause (wall), and the most
    objects one of them walked (a count the machine's noise does not move)."""
    rows = [
        json.loads(line)
        for path in site.glob("gc-*.jsonl")
        for line in path.read_text().splitlines()
    ]
    parts = []
    for generation in (0, 1, 2):
        pauses = [row for row in rows if row[1] == generation and start <= row[0] <= end]
        cpu = sum(row[3] for row in pauses) * 1000
        longest = max((row[2] for row in pauses), default=0.0) * 1000
        walked = max((row[4] for row in pauses), default=0)
        parts.append(
            f"gen {generation}: {len(pauses)}, {cpu:.0f} ms CPU, max {longest:.0f} ms, "
            f"{walked:,} objects"
        )
    return "; ".join(parts)


def raise_open_files_limit() -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def watcher_specs(games: list[Game], count: int) -> list[Spec]:
    """``count`` watchers spread over ``games``: LONG_POLL_SHARE long polls, the rest event
    streams, half of them with the seat's token."""
    specs = []
    for index in range(count):
        game = games[index % len(games)]
        long_poll = index % 10 < LONG_POLL_SHARE * 10
        token = game.token if index % 2 and not long_poll else None
        specs.append(Spec(game.path, game.version, source_address(index), token, long_poll))
    return specs


async def wait_open(crowds: Crowds, count: int, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while (status := crowds.status())["open_now"] < count and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    if status["open_now"] < count:
        raise RuntimeError(f"only {status['open_now']} of {count} watchers open: {status}")


async def run(
    url: str,
    streams: int,
    games_count: int,
    worker_class: str,
    processes: int,
    spread: float,
    profile: str | None = None,
) -> str:
    port = http_bench.free_port()
    site = Path(tempfile.mkdtemp(prefix="cardroom-streams-site-"))
    server = start_server(url, port, worker_class, site, profile)
    crowds = Crowds(port, processes)
    lines = []
    try:
        api = Api(port)
        games = [await new_game(api) for _ in range(games_count)]
        hot = await new_game(api)

        log("games created; pick load with no streams")
        idle_at = time.time()
        idles = [await measure_phase(port)]
        idle_gc = [collections_during(site, idle_at, time.time())]

        log(f"fan-out to {HOT_WATCHERS} streams of one game")
        crowds.open(
            [
                Spec(hot.path, hot.version, source_address(i), hot.token if i % 2 else None, False)
                for i in range(HOT_WATCHERS)
            ]
        )
        await wait_open(crowds, HOT_WATCHERS, 60)

        async def hot_picks() -> FanOut:
            total = FanOut()
            for _ in range(HOT_APPENDS):
                total += await fan_out(crowds, [api], [hot], HOT_WATCHERS)
            return total

        hot_fan_out = await (await accounted(server.pid, url, hot_picks())).settle([api])
        hot_tally = crowds.close()

        # Thousands open: memory, then the same pick load beside them, then fan-out to all.
        await asyncio.sleep(1)
        before_kb = server_pss_kb(server.pid)
        opened = time.monotonic()
        log(f"opening {streams:,} watchers")
        crowds.open(watcher_specs(games, streams))
        await wait_open(crowds, streams, 300)
        open_seconds = time.monotonic() - opened
        await asyncio.sleep(2)  # the last long polls reach the server
        after_kb = server_pss_kb(server.pid)
        # Fan-out first: the streams opened together end together (their lifetime, 80-100 %
        # of CARDROOM_STREAM_SECONDS) and reconnect, a wave the pick load then meets.
        per_game = streams // games_count
        log("all open; fan-out to every watcher: a burst, then paced")
        apis = [api] + [Api(port) for _ in range(7)]
        burst = await accounted(server.pid, url, fan_out(crowds, apis, games, per_game))
        await burst.settle(apis)
        paced = await accounted(server.pid, url, fan_out(crowds, apis, games, per_game, spread))
        await paced.settle(apis)
        log(f"{QUIET_SECONDS} s with nothing else happening")
        quiet = http_bench.process_tree_cpu(server.pid)
        await asyncio.sleep(QUIET_SECONDS)
        quiet = (http_bench.process_tree_cpu(server.pid) - quiet) / QUIET_SECONDS
        log("pick load beside them")
        reconnected = crowds.status()["reconnects"]
        busy_at = time.time()
        busies = [await measure_phase(port)]
        busy_gc = [collections_during(site, busy_at, time.time())]
        reconnected = crowds.status()["reconnects"] - reconnected
        tallies = [hot_tally, crowds.close()]

        # Again, none open then all open: the machine's own drift over the run (it is shared,
        # and absolute times move 2x) falls on both sides of the ratio, not on one.
        await asyncio.sleep(1)
        log("pick load with no streams, again")
        idle_at = time.time()
        idles.append(await measure_phase(port))
        idle_gc.append(collections_during(site, idle_at, time.time()))
        log(f"opening {streams:,} watchers again; pick load beside them")
        crowds.open(watcher_specs(games, streams))
        await wait_open(crowds, streams, 300)
        await asyncio.sleep(2)
        busy_at = time.time()
        busies.append(await measure_phase(port))
        busy_gc.append(collections_during(site, busy_at, time.time()))
        tallies.append(crowds.close())
        lost = sum(tally["lost"] for tally in tallies)
        doubled = sum(tally["doubled"] for tally in tallies)
        errors = sum((Counter(tally["errors"]) for tally in tallies), Counter())
        idle, busy = pooled(idles), pooled(busies)

        ratio = percentile(busy.picks, 0.99) / percentile(idle.picks, 0.99)
        ms = 1000
        lines += [
            f"cardroom serve defaults ({worker_class} worker), {PICK_CLIENTS} pick clients; "
            f"watchers in {processes} processes",
            "  four pick loads: with no stream open, with them open, with none, with them open",
            *(f"  {n}. no streams   {phase.row()}" for n, phase in zip((1, 3), idles, strict=True)),
            *(
                f"  {n}. {streams:>6,} open {phase.row()}"
                for n, phase in zip((2, 4), busies, strict=True)
            ),
            f"  both no streams {idle.row()}",
            f"  both {streams:>6,}  {busy.row()}",
            f"  pick p99 ratio {ratio:.2f} (goal <= 1.5; each pair: "
            f"{percentile(busies[0].picks, 0.99) / percentile(idles[0].picks, 0.99):.2f}, "
            f"{percentile(busies[1].picks, 0.99) / percentile(idles[1].picks, 0.99):.2f}); "
            f"/healthz max with them open {max(busy.healthz) * ms:.1f} ms (goal < 100); "
            f"{reconnected:,} streams reconnected during load 2 (their lifetime ended)",
            *(
                f"  cycle collections in the workers, load {n}: {gc}"
                for n, gc in enumerate((idle_gc[0], busy_gc[0], idle_gc[1], busy_gc[1]), 1)
            ),
            "fan-out, until the last watcher of the game read the pick's first event:",
            f"  {HOT_WATCHERS} streams of one game ({HOT_APPENDS} picks): {hot_fan_out.row()}",
            f"  {streams:,} watchers over {games_count:,} games ({per_game} each, "
            f"{int(LONG_POLL_SHARE * 100)}% long polls), one pick per game:",
            f"    burst, {burst.rate()}, 8 clients at once:",
            f"      {burst.row()}",
            f"    paced, {paced.rate()} (goal p99 < 250 ms from the append):",
            f"      {paced.row()}",
            f"memory: {before_kb / 1024:.0f} MB -> {after_kb / 1024:.0f} MB PSS (master + "
            f"workers) with {streams:,} open: {(after_kb - before_kb) / streams:.1f} KB per "
            f"connection (goal < 50); opened in {open_seconds:.1f} s",
            f"the open connections' own work (heartbeats, long polls ending), {QUIET_SECONDS} s "
            f"with nothing else happening: the server's CPU {quiet * 100:.1f} % of one core",
            f"streams: {lost} events lost, {doubled} doubled, "
            f"{sum(tally['reconnects'] for tally in tallies)} reconnections; "
            f"{tallies[-1]['open_now']:,} still open at the end; "
            f"errors {dict(errors)}",
        ]
    finally:
        tear_down(crowds, server, site)
    return "\n".join(lines)


@contextlib.contextmanager
def database(url: str | None) -> Iterator[str]:
    if url:
        yield url
        return
    from bench.load import Database

    with tempfile.TemporaryDirectory(prefix="cardroom-streams-") as directory:
        db = Database(Path(directory))
        try:
            yield db.url
        finally:
            db.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--url", help="a migrated scratch database (default: embedded, temp dir)")
    parser.add_argument("--streams", type=int, default=10_000, help="open streams + long polls")
    parser.add_argument("--games", type=int, default=1_000, help="games they watch")
    parser.add_argument("--worker-class", default="gevent", choices=["gevent", "gthread"])
    parser.add_argument("--deadline", type=float, default=900, help="seconds for the whole run")
    parser.add_argument("--processes", type=int, default=4, help="processes holding the watchers")
    parser.add_argument(
        "--spread", type=float, default=20.0, help="seconds over which the paced picks go out"
    )
    parser.add_argument("--profile", help="a folder: cProfile each server worker, dump there")
    args = parser.parse_args(argv)
    limit = raise_open_files_limit()
    if limit < args.streams + 1024:
        sys.exit(f"open files limited to {limit}: lower --streams")
    with database(args.url) as url:
        report = asyncio.run(
            asyncio.wait_for(
                run(
                    url,
                    args.streams,
                    args.games,
                    args.worker_class,
                    args.processes,
                    args.spread,
                    args.profile,
                ),
                args.deadline,
            )
        )
    print(report)


if __name__ == "__main__":
    main()
