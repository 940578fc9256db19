"""Webhooks (issue 36), measured side by side in one run on one host, all traffic on loopback.

1. **Commit → first attempt.** ``--games`` 2-player Sushi Go! games against a greedy bot on one
   ``cardroom serve``; each game's seat registers ``--per-game`` endpoints on a local receiver
   (100 endpoints for 50 games by default). Every pick opens the next turn in its own append
   (the bot picks in it), so every pick owes each of its game's endpoints a ``game.turn``. The
   picks go out paced over ``--spread`` seconds; for each message's first attempt, the time from
   its append (``timestamp`` in the body: the events' ``recorded_at``, the transaction's clock,
   taken before its commit, so an upper bound) to its arrival at the receiver: p50, p99, max.
2. **The pick's cost.** The same picks' latency (send → answer) in games without endpoints and
   in games with them (deliveries going on), alternated twice and pooled: the p50 ratio.
3. **At least once.** ``--messages`` messages (games of 30 messages each: 29 turns, the
   end) through a receiver that fails 30 % of attempts at random, with a ``cardroom
   deliver`` process (the server's workers deliver nothing here) killed with SIGKILL once half
   have arrived, and another started: the receiver's distinct ``webhook-id``s against the
   messages the games owe (0 lost), duplicates counted, and each game's delivered versions in
   order. (The Patroni failover of the issue's drill is left to bench/ha.py's cluster.)

    python -m bench.webhooks                       # scratch database on TEST_DATABASE_URL's server
    python -m bench.webhooks --messages 10000      # the issue's count
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import requests

ROOT = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"
FAST = {  # short retries, so that a run ends in minutes; no jitter
    "CARDROOM_WEBHOOKS_INSECURE": "1",
    "CARDROOM_WEBHOOKS_RETRY_SCHEDULE": "0.1,0.2,0.4,0.8,1,1,1,1,1,1,1,1",
    "CARDROOM_WEBHOOKS_JITTER": "0",
    "CARDROOM_WEBHOOKS_TIMEOUT": "2",
    "CARDROOM_WEBHOOKS_POLL": "0.2",
    "CARDROOM_RATE_LIMITS": "off",
}


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else float("nan")


# --- the receiver ----------------------------------------------------------------------------


@dataclass
class Arrival:
    msg_id: str
    path: str
    type: str
    game_id: str
    version: int
    timestamp: float  # the body's (the append's clock)
    at: float  # wall clock on arrival
    status: int


@dataclass
class Receiver:
    fail_share: float = 0.0
    rng: random.Random = field(default_factory=lambda: random.Random(36))
    arrivals: list[Arrival] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, path: str, body: bytes, msg_id: str) -> tuple[int, bytes]:
        at = time.time()
        payload = json.loads(body)
        if payload["type"] == "webhook.verify":
            return 200, json.dumps({"challenge": payload["data"]["challenge"]}).encode()
        data = payload["data"]
        with self.lock:
            status = 500 if self.rng.random() < self.fail_share else 204
            stamp = datetime.fromisoformat(payload["timestamp"]).timestamp()
            self.arrivals.append(
                Arrival(
                    msg_id,
                    path,
                    payload["type"],
                    data["game_id"],
                    data["version"],
                    stamp,
                    at,
                    status,
                )  # fmt: skip
            )
        return status, b""

    def snapshot(self) -> list[Arrival]:
        with self.lock:
            return list(self.arrivals)


@contextmanager
def receiving(receiver: Receiver) -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            status, answer = receiver.answer(self.path, body, self.headers.get("webhook-id", ""))
            self.send_response(status)
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args: Any) -> None:
            pass

    class Server(ThreadingHTTPServer):
        request_queue_size = 256  # (5 by default: SYNs dropped, 1 s retransmits, in the tail)
        daemon_threads = True

    server = Server((HOST, 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://{HOST}:{server.server_address[1]}"
    finally:
        server.shutdown()


# --- the service -----------------------------------------------------------------------------


@contextmanager
def scratch_database(admin: str) -> Iterator[str]:
    from service.store import db

    name = f"cardroom_bench_webhooks_{uuid.uuid4().hex[:8]}"
    url = db.ensure_database(admin, name)
    try:
        db.migrate(url)
        yield url
    finally:
        db.drop_database(admin, name)


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


@contextmanager
def process(command: list[str], url: str, env: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    full = {**os.environ, **FAST, **env, "DATABASE_URL": url}
    started = subprocess.Popen(command, cwd=ROOT, env=full, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        yield started
    finally:
        if started.poll() is None:
            started.send_signal(signal.SIGTERM)
        started.wait(60)


@contextmanager
def serving(url: str, workers: int, deliver: bool) -> Iterator[str]:
    port = free_port()
    command = [sys.executable, "-m", "service.cli.main", "serve", "--port", str(port)]
    command += ["--workers", str(workers), "--no-access-log"]
    env = {"CARDROOM_WEBHOOKS_DELIVER": "1" if deliver else "0"}
    with process(command, url, env):
        base = f"http://{HOST}:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                if requests.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except requests.RequestException:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("the server did not start")
            time.sleep(0.2)
        yield base


def delivering(url: str) -> Any:
    return process([sys.executable, "-m", "service.cli.main", "deliver"], url, {})


# --- games -----------------------------------------------------------------------------------


@dataclass
class Game:
    id: str
    token: str
    session: requests.Session
    view: dict[str, Any] = field(default_factory=dict)
    picks: int = 0

    @property
    def over(self) -> bool:
        return self.view.get("status") == "over"


def new_game(base: str, endpoints: int, hook: str | None) -> Game:
    """A 2-player game against the greedy bot, started (its seat taken); then the seat registers
    ``endpoints``: each of its picks owes each of them one message (the next turn, or the end)."""
    session = requests.Session()
    body = {"game": "sushi-go", "players": 2, "bots": [{"seat": 1, "kind": "greedy"}]}
    game = session.post(f"{base}/games", json=body, timeout=30).json()["game_id"]
    seat = session.post(f"{base}/games/{game}/players", json={"name": "Bench"}, timeout=30).json()
    headers = {"Authorization": f"Bearer {seat['token']}"}
    for _ in range(endpoints):
        assert hook is not None
        answer = session.post(f"{base}/games/{game}/webhooks", json={"url": hook},
                              headers=headers, timeout=30)  # fmt: skip
        answer.raise_for_status()
    found = Game(game, seat["token"], session)
    found.view = session.get(f"{base}/games/{game}", headers=headers, timeout=30).json()
    return found


def pick(base: str, game: Game) -> float:
    """Seat 0's pick (the bot picks in the same append): its latency in seconds."""
    view = game.view
    body = {"round": view["round"], "turn": view["turn"], "cards": view["you"]["hand"][:1]}
    headers = {"Authorization": f"Bearer {game.token}", "Idempotency-Key": str(uuid.uuid4())}
    started = time.perf_counter()
    try:
        answer = game.session.post(f"{base}/games/{game.id}/moves", json=body, headers=headers,
                                   timeout=30)  # fmt: skip
    except requests.ConnectionError:  # a kept-alive connection the server closed while idle:
        started = time.perf_counter()  # the same key, so the pick counts once whatever happened
        answer = game.session.post(f"{base}/games/{game.id}/moves", json=body, headers=headers,
                                   timeout=30)  # fmt: skip
    took = time.perf_counter() - started
    answer.raise_for_status()
    game.view = answer.json()
    game.picks += 1
    return took


def play_paced(base: str, games: list[Game], picks: int, spread: float) -> list[float]:
    """``picks`` picks spread evenly over ``spread`` seconds, round-robin over ``games``."""
    latencies: list[float] = []
    lock = threading.Lock()
    start = time.monotonic()

    def one(index: int) -> None:
        game = games[index % len(games)]
        with lock:
            if game.over:
                return
        delay = start + spread * index / picks - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        took = pick(base, game)
        with lock:
            latencies.append(took)

    # One worker per game: a game's picks go one after the other.
    by_game: dict[int, list[int]] = defaultdict(list)
    for index in range(picks):
        by_game[index % len(games)].append(index)
    with ThreadPoolExecutor(len(by_game)) as pool:
        list(pool.map(lambda indices: [one(i) for i in indices], by_game.values()))
    return latencies


# --- the three parts ---------------------------------------------------------------------------


def latency_and_cost(url: str, args: argparse.Namespace) -> dict[str, Any]:
    receiver = Receiver()
    with receiving(receiver) as hook, serving(url, args.workers, deliver=True) as base:
        hooked = [new_game(base, args.per_game, hook) for _ in range(args.games)]
        plain = [new_game(base, 0, None) for _ in range(args.games)]
        with_endpoints: list[float] = []
        without: list[float] = []
        for _ in range(2):  # alternated: the machine's drift falls on both sides
            without += play_paced(base, plain, args.picks, args.spread)
            with_endpoints += play_paced(base, hooked, args.picks, args.spread)
        owed = sum(g.picks for g in hooked) * args.per_game
        deadline = time.monotonic() + 60
        while len({a.msg_id for a in receiver.snapshot()}) < owed:
            if time.monotonic() > deadline:
                break
            time.sleep(0.2)
    first: dict[str, Arrival] = {}
    for arrival in receiver.snapshot():
        first.setdefault(arrival.msg_id, arrival)
    waits = [a.at - a.timestamp for a in first.values()]
    return {
        "endpoints": args.games * args.per_game,
        "games": args.games,
        "messages owed": owed,
        "messages arrived": len(waits),
        "commit->first attempt p50 ms": round(1000 * percentile(waits, 0.5), 1),
        "commit->first attempt p99 ms": round(1000 * percentile(waits, 0.99), 1),
        "commit->first attempt max ms": round(1000 * max(waits, default=float("nan")), 1),
        "pick p50 ms without endpoints": round(1000 * percentile(without, 0.5), 2),
        "pick p50 ms with endpoints": round(1000 * percentile(with_endpoints, 0.5), 2),
        "pick p50 ratio (with / without)": round(
            percentile(with_endpoints, 0.5) / percentile(without, 0.5), 3
        ),
    }


def at_least_once(url: str, args: argparse.Namespace) -> dict[str, Any]:
    receiver = Receiver(fail_share=0.3)
    per_game = 30  # a 2-player game's picks: each opens the next turn, the last ends it
    count = max(1, -(-args.messages // per_game))
    with receiving(receiver) as hook, serving(url, args.workers, deliver=False) as base:
        games = [new_game(base, 1, hook) for _ in range(count)]
        ids = {g.id for g in games}
        killed = threading.Event()
        with delivering(url) as first:

            def kill_midway() -> None:
                while len({a.msg_id for a in receiver.snapshot()}) < args.messages // 2:
                    time.sleep(0.05)
                first.send_signal(signal.SIGKILL)  # no handler runs: leases stay until they lapse
                killed.set()

            threading.Thread(target=kill_midway, daemon=True).start()
            while any(not g.over for g in games):
                play_paced(base, [g for g in games if not g.over], len(games), 0.0)
            killed.wait(300)
        with delivering(url):
            owed = sum(g.picks for g in games)
            deadline = time.monotonic() + 300
            while len(_delivered_ids(receiver, ids)) < owed and time.monotonic() < deadline:
                time.sleep(0.2)
    arrivals = [a for a in receiver.snapshot() if a.game_id in ids]
    delivered = _delivered_ids(receiver, ids)
    out_of_order = 0
    by_game: dict[str, list[int]] = defaultdict(list)
    for arrival in arrivals:
        if 200 <= arrival.status < 300:
            by_game[arrival.game_id].append(arrival.version)
    for versions in by_game.values():
        out_of_order += sum(1 for a, b in zip(versions, versions[1:], strict=False) if b < a)
    distinct = {a.msg_id for a in arrivals}
    successes = [a.msg_id for a in arrivals if 200 <= a.status < 300]
    return {
        "games": len(games),
        "messages owed": sum(g.picks for g in games),
        "distinct webhook-ids seen": len(distinct),
        "distinct webhook-ids delivered (2xx)": len(delivered),
        "lost": sum(g.picks for g in games) - len(delivered),
        "attempts": len(arrivals),
        "failed attempts (the receiver's 30 %)": sum(1 for a in arrivals if a.status >= 300),
        "duplicate successes": len(successes) - len(set(successes)),
        "deliverer killed (SIGKILL) midway": killed.is_set(),
        "versions out of order (per game, 2xx)": out_of_order,
    }


def _delivered_ids(receiver: Receiver, ids: set[str]) -> set[str]:
    return {a.msg_id for a in receiver.snapshot() if a.game_id in ids and 200 <= a.status < 300}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--admin-url",
        default=os.environ.get(
            "TEST_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres"
        ),
        help="a server where the bench may create (and drop) a scratch database",
    )
    parser.add_argument("--games", type=int, default=50)
    parser.add_argument("--per-game", type=int, default=2, help="endpoints per game")
    parser.add_argument("--picks", type=int, default=400, help="picks per phase")
    parser.add_argument("--spread", type=float, default=20.0, help="seconds a phase lasts")
    parser.add_argument("--messages", type=int, default=2000, help="the at-least-once run's")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--skip", choices=["latency", "at-least-once"], action="append", default=[])
    args = parser.parse_args(argv)
    report: dict[str, Any] = {}
    with scratch_database(args.admin_url) as url:
        if "latency" not in args.skip:
            report["latency and cost"] = latency_and_cost(url, args)
        if "at-least-once" not in args.skip:
            report["at least once"] = at_least_once(url, args)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
