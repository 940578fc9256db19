"""HTTP picks under gunicorn: latency (p50/p99) and throughput with concurrent clients.

The server is ``cardroom serve`` with its defaults (gunicorn's gevent workers, cores + 1 of them,
rate limits on, the access log on) on a free loopback port, against the database ``url``. Each
client drives whole 4-player games: it takes every seat, picks the first card of each seat's
hand, and reads a seat's view only when it does not know that seat's hand. Only the
POST /games/{id}/moves requests are timed; clients run in several processes so that the load
generator is not held back by one interpreter lock.
"""

from __future__ import annotations

import http.client
import json
import multiprocessing
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

PLAYERS = 4


@dataclass(frozen=True)
class HttpResult:
    clients: int
    workers: int
    picks: int
    p50_ms: float
    p99_ms: float
    picks_per_s: float
    requests_per_s: float
    errors: int
    server_cpu_s: float  # gunicorn's CPU seconds (master and workers) while the clients ran
    floor_p50_ms: float | None = None  # the floor timed right before each pick, if asked
    client_cpu_s: float = 0.0  # the load generator's CPU seconds (its processes, same cores)

    @property
    def cpu_ms_per_pick(self) -> float:
        """Server CPU per pick; it also pays for the few GETs and the set-up of each game."""
        return self.server_cpu_s * 1e3 / self.picks

    def __str__(self) -> str:
        return (
            f"http_pick         {self.picks:>6} picks p50 {self.p50_ms:7.3f} ms  "
            f"p99 {self.p99_ms:7.3f} ms  {self.picks_per_s:9.1f} picks/s "
            f"({self.clients} clients, {self.workers} gunicorn {SERVER}; "
            f"{self.requests_per_s:.0f} requests/s in all, {self.errors} errors; server CPU "
            f"{self.cpu_ms_per_pick:.3f} ms per pick, the clients' "
            f"{self.client_cpu_s * 1e3 / self.picks:.3f} ms)"
            + (
                ""
                if self.floor_p50_ms is None
                else f"\n  interleaved floor (autocommit INSERT before each pick) p50 "
                f"{self.floor_p50_ms:7.3f} ms"
            )
        )


def process_tree_cpu(pid: int) -> float:
    """CPU seconds (user + system) used so far by ``pid`` and its descendants (alive ones, and
    the reaped children of each, which the kernel adds to their parent's account)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    pending = [pid]
    while pending:
        current = pending.pop()
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except OSError:
            continue  # gone meanwhile
        total += sum(map(int, fields[11:15])) / ticks  # utime, stime, cutime, cstime
        pending += [int(child) for child in children]
    return total


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# What the server runs with: `cardroom serve`'s defaults (gevent workers, rate limits on, the
# access log on, written to stdout, which goes nowhere here), except the values of the limits:
# the load generator is one address asking for many games, so the limits are set far above what
# it asks for (they are still counted on every limited request, as a user's server counts them).
GENEROUS_LIMITS = {
    "CARDROOM_RATE_LIMITS": "on",
    "CARDROOM_RATE_LIMIT_CREATE": "1000000/minute",
    "CARDROOM_RATE_LIMIT_JOIN": "1000000/minute",
    "CARDROOM_RATE_LIMIT_JOIN_GAME": "1000000/minute",
    "CARDROOM_RATE_LIMIT_MOVES": "1000000/minute",
    "CARDROOM_WAITING_GAMES_PER_ADDRESS": "1000000",
}


def limits_storage() -> str:
    """Where the served rate limits count (the storage is not this bench's choice)."""
    from service.settings import settings

    uri = settings().rate_limit_storage
    return "each worker's memory" if uri.startswith("memory://") else uri.split("@")[-1]


SERVER = "gevent workers (cardroom serve's default), rate limits on, access log on"


def start_server(
    url: str, port: int, workers: int, threads: int = 1, checkout: str | None = None
) -> subprocess.Popen[bytes]:
    """``cardroom serve`` on ``port`` with ``workers`` processes (``threads``: ignored by the
    gevent worker, kept for callers). ``checkout``: serve that source tree's code instead of
    this one's (a baseline measured in the same run, bench/request_cpu.py)."""
    del threads  # gevent serves each connection in a greenlet
    env = {**os.environ, "DATABASE_URL": url, **GENEROUS_LIMITS}
    if checkout is not None:
        env["PYTHONPATH"] = checkout  # ahead of the editable install of this checkout
    command = [sys.executable, "-m", "service.cli.main", "serve", "--port", str(port)]
    command += ["--workers", str(workers)]
    server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, cwd=checkout)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1):
                return server
        except OSError:
            time.sleep(0.1)
    server.kill()
    raise RuntimeError("the server did not start within 60 s")


class Client:
    """A lean HTTP/1.1 client on one kept-alive connection (the load generator must cost little
    next to the server it measures; ``requests`` costs several times more CPU per call)."""

    def __init__(self, base: str) -> None:
        host, port = base.removeprefix("http://").split(":")
        self.conn = http.client.HTTPConnection(host, int(port), timeout=30)
        # Timed right before each pick when set: the floor, sampled at the same moments.
        self.floor: Callable[[], float] | None = None
        self.floor_latencies: list[float] = []

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        token: str | None = None,
        extra: dict[str, str] | None = None,
    ) -> tuple[int, dict[str, str], Any]:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        if extra:
            headers.update(extra)
        if token:
            headers["Authorization"] = f"Bearer {token}"
        payload = None if body is None else json.dumps(body)
        for attempt in (1, 2):
            try:
                self.conn.request(method, path, payload, headers)
                response = self.conn.getresponse()
                data = response.read()
                break
            except (http.client.HTTPException, ConnectionError):
                self.conn.close()  # the server closed a kept-alive connection: reconnect once
                if attempt == 2:
                    raise
        return response.status, dict(response.getheaders()), json.loads(data)


def play_game(client: Client, with_path: bool = False) -> Any:
    """One complete game driven by one client; returns pick latencies, requests, errors (and
    the game's path, ``with_path``)."""
    latencies, made, errors, game = _play(client)
    return (latencies, made, errors, game) if with_path else (latencies, made, errors)


def _play(client: Client) -> tuple[list[float], int, int, str]:
    _, headers, _ = client.call("POST", "/games", {"game": "sushi-go", "players": PLAYERS})
    game = headers["Location"]
    tokens = [
        client.call("POST", f"{game}/players", {"name": f"bot{i}"})[2]["token"]
        for i in range(PLAYERS)
    ]
    hands: list[list[str] | None] = [None] * PLAYERS
    latencies: list[float] = []
    requests_made, errors = PLAYERS + 1, 0
    while True:
        for seat in range(PLAYERS):
            if hands[seat] is None:
                view = client.call("GET", game, token=tokens[seat])[2]
                requests_made += 1
                if view["status"] == "over":
                    return latencies, requests_made, errors, game
                you = view["you"]
                hands[seat] = [] if you["pick"] else you["hand"]
                turn = {"round": view["round"], "turn": view["turn"]}
            if not hands[seat]:
                continue  # picked already this turn
            if client.floor is not None:
                client.floor_latencies.append(client.floor())
            started = time.perf_counter()
            pick = {**turn, "cards": [hands[seat][0]]}  # the turn of the hand it is from
            status, _, view = client.call("POST", f"{game}/moves", pick, tokens[seat])
            latencies.append(time.perf_counter() - started)
            requests_made += 1
            if status != 200:
                errors += 1
                hands[seat] = None
                continue
            if view["status"] == "over":
                return latencies, requests_made, errors, game
            if view["you"]["pick"] is None:  # this pick completed the turn: hands moved on
                hands = [None] * PLAYERS
                hands[seat] = view["you"]["hand"]
                turn = {"round": view["round"], "turn": view["turn"]}
            else:
                hands[seat] = []


def _floor(url: str, table: str) -> Callable[[], float]:
    """A timed single-row autocommit INSERT into ``table`` (the floor of store_bench)."""
    conn = psycopg.connect(url, autocommit=True)
    query = f"INSERT INTO {table} (n, data) VALUES (%s, %s)"

    def insert() -> float:
        started = time.perf_counter()
        conn.execute(query, (0, Jsonb({"n": 0})))
        return time.perf_counter() - started

    return insert


def _client(
    args: tuple[str, int, tuple[str, str] | None],
) -> tuple[list[float], int, int, list[float]]:
    base, games, floor = args
    client = Client(base)
    if floor is not None:
        client.floor = _floor(*floor)
    latencies: list[float] = []
    made = errors = 0
    for _ in range(games):
        lat, n, e = play_game(client)
        latencies += lat
        made, errors = made + n, errors + e
    client.conn.close()
    return latencies, made, errors, client.floor_latencies


def _timed_client(
    args: tuple[str, int, tuple[str, str] | None],
) -> tuple[list[float], int, int, list[float], float]:
    """``_client``'s results and the CPU seconds its process spent on them."""
    cpu = time.process_time()
    return (*_client(args), time.process_time() - cpu)


def _noop(_: int) -> None:
    pass


def run(
    url: str,
    clients: int = 32,
    games_per_client: int = 1,
    workers: int = 0,
    floor_table: str | None = None,
    checkout: str | None = None,
) -> HttpResult:
    """``floor_table``: a scratch table (store_bench.scratch_table) each client inserts one row
    into, timed, right before each pick: the floor measured interleaved with the picks.
    ``checkout``: serve that source tree's code (a baseline) instead of this one's."""
    workers = workers or (os.cpu_count() or 1) + 1  # as `cardroom serve` does
    port = free_port()
    server = start_server(url, port, workers, checkout=checkout)
    base = f"http://127.0.0.1:{port}"
    try:
        with multiprocessing.get_context("spawn").Pool(min(clients, 8)) as pool:
            pool.map(_noop, range(min(clients, 8)))  # start the client processes beforehand
            cpu_before = process_tree_cpu(server.pid)
            started = time.perf_counter()
            floor = None if floor_table is None else (url, floor_table)
            jobs = [(base, games_per_client, floor)] * clients
            results = pool.map(_timed_client, jobs, chunksize=1)
            elapsed = time.perf_counter() - started
            server_cpu = process_tree_cpu(server.pid) - cpu_before
    finally:
        server.terminate()
        server.wait(timeout=30)
    latencies = sorted(x for lat, *_ in results for x in lat)
    floors = [x for _, _, _, fl, _ in results for x in fl]
    made = sum(n for _, n, *_ in results)
    return HttpResult(
        clients=clients,
        workers=workers,
        picks=len(latencies),
        p50_ms=statistics.median(latencies) * 1000,
        p99_ms=latencies[int(0.99 * (len(latencies) - 1))] * 1000,
        picks_per_s=len(latencies) / elapsed,
        requests_per_s=made / elapsed,
        errors=sum(e for _, _, e, _, _ in results),
        server_cpu_s=server_cpu,
        floor_p50_ms=statistics.median(floors) * 1000 if floors else None,
        client_cpu_s=sum(cpu for *_, cpu in results),
    )


def main(argv: list[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("url", help="a migrated scratch database (the benchmark writes games)")
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--games", type=int, default=1, help="games per client")
    parser.add_argument("--workers", type=int, default=0, help="gunicorn workers (cores + 1)")
    args = parser.parse_args(argv)
    print(run(args.url, args.clients, args.games, args.workers))


if __name__ == "__main__":
    main()
