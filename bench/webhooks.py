"""Webhooks (issue 36), measured side by side in one run on one host, all traffic on loopback.

1. **Commit → first attempt.** ``--games`` 2-player Sushi Go! games against a greedy bot on one
   ``cardroom serve``; each game's seat registers ``--per-game`` endpoints on a local receiver
   (100 endpoints for 50 games by default; the receiver runs in a process of its own). Every
   pick opens the next turn in its own append (the bot picks in it), so every pick owes each of
   its game's endpoints a ``game.turn``. The picks go out paced over ``--spread`` seconds; for
   each message's first attempt, the time from its append (``timestamp`` in the body: the
   events' ``recorded_at``, the transaction's clock, taken before its commit, so an upper
   bound) to its arrival at the receiver: p50, p99, max.
2. **The pick's cost.** The same picks' latency (send → answer) in games without endpoints and
   in games with them (deliveries going on), alternated ``--rounds`` times: each round's p50
   ratio, their median, and the pooled p50s. Delivery runs in one ``cardroom deliver`` process,
   the server's workers delivering nothing (``CARDROOM_WEBHOOKS_DELIVER=0``, as docker-compose
   runs it), or in the workers (``--deliver-in serve``).
3. **At least once.** ``--messages`` messages (games of 27 messages each: 26 turns, the
   end) through a receiver that fails 30 % of attempts at random, with a ``cardroom
   deliver`` process (the server's workers deliver nothing here) killed with SIGKILL once half
   have arrived, and another started: the receiver's distinct ``webhook-id``s against the
   messages the games owe (0 lost), duplicates counted, and each game's delivered versions in
   order. With ``--failover kill`` (or ``switchover``) the run goes to the Patroni drill's
   cluster (bench/webhooks_failover.py: three hosts in network namespaces, the service on a
   multi-host URL with ``target_session_attrs=read-write``) and the leader's postmaster is
   killed (or switched over) once a third has arrived or half the picks are taken, before the
   deliverer's kill.

    python -m bench.webhooks                       # scratch database on TEST_DATABASE_URL's server
    flock /work/patroni.lock python -m bench.webhooks --skip latency --messages 10000 \
        --failover kill                            # the issue's drill (root)
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import signal
import statistics
import subprocess
import sys
import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import astuple, dataclass, field
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import requests

from bench.webhook_meter import Meter

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


CLIENTS = 16  # picks in flight at most (one game's one after the other)
RETRY_SECONDS = 600.0  # a pick sent again (its key the same) while it gets no answer or a 503


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

        def handle_error(self, request: Any, client_address: Any) -> None:
            pass  # a killed deliverer's connections reset: expected here, not worth a trace

    server = Server((HOST, 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://{HOST}:{server.server_address[1]}"
    finally:
        server.shutdown()


def _receive_apart(fail_share: float, conn: Connection) -> None:
    """The receiver's own process: its address, then what the bench asks, until "stop"."""
    receiver = Receiver(fail_share=fail_share)
    with receiving(receiver) as hook:
        conn.send(hook)
        while (asked := conn.recv()) != "stop":
            arrivals = receiver.snapshot()
            if asked == "count":
                conn.send(len({a.msg_id for a in arrivals}))
            else:
                conn.send([astuple(a) for a in arrivals])


@contextmanager
def receiving_apart(fail_share: float = 0.0) -> Iterator[tuple[str, RemoteReceiver]]:
    """A receiver in a process of its own (as a real one is): its work does not take the
    bench's clients' interpreter (one GIL) while they time their picks."""
    context = multiprocessing.get_context("spawn")
    ours, theirs = context.Pipe()
    child = context.Process(target=_receive_apart, args=(fail_share, theirs), daemon=True)
    child.start()
    try:
        yield ours.recv(), RemoteReceiver(ours)
        ours.send("stop")
    finally:
        child.join(10)
        if child.is_alive():
            child.kill()


@dataclass
class RemoteReceiver:
    conn: Connection
    lock: threading.Lock = field(default_factory=threading.Lock)

    def snapshot(self) -> list[Arrival]:
        with self.lock:
            self.conn.send("snapshot")
            return [Arrival(*row) for row in self.conn.recv()]

    def distinct(self) -> int:
        with self.lock:
            self.conn.send("count")
            return int(self.conn.recv())


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
def serving(
    url: str,
    workers: int,
    deliver: bool,
    env: dict[str, str] | None = None,
    started: list[subprocess.Popen[bytes]] | None = None,
) -> Iterator[str]:
    port = free_port()
    command = [sys.executable, "-m", "service.cli.main", "serve", "--port", str(port)]
    command += ["--workers", str(workers), "--no-access-log"]
    env = {**(env or {}), "CARDROOM_WEBHOOKS_DELIVER": "1" if deliver else "0"}
    with process(command, url, env) as server:
        if started is not None:
            started.append(server)
        base = f"http://{HOST}:{port}"
        deadline = time.monotonic() + 180  # a loaded machine's start
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


def wait_for_reader(url: str, name: str, timeout: float = 120) -> None:
    """Until a process's log reader (its ``application_name``) is connected to the database."""
    import psycopg

    query = "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s AND datname ="
    query += " current_database()"
    deadline = time.monotonic() + timeout
    with psycopg.connect(url, autocommit=True) as conn:
        while (row := conn.execute(query, (name,)).fetchone()) is None or row[0] == 0:
            if time.monotonic() > deadline:
                raise RuntimeError(f"no {name} connected after {timeout} s")
            time.sleep(0.2)


def delivering(url: str, env: dict[str, str] | None = None) -> Any:
    return process([sys.executable, "-m", "service.cli.main", "deliver"], url, env or {})


# --- games -----------------------------------------------------------------------------------


@dataclass
class Game:
    id: str
    token: str
    session: requests.Session
    view: dict[str, Any] = field(default_factory=dict)
    picks: int = 0
    resent: int = 0  # picks sent again (same key) after no answer
    busy: int = 0  # ... after a 503 (the database failing over, or the server overloaded)

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
    deadline = time.monotonic() + RETRY_SECONDS
    while True:
        started = time.perf_counter()
        try:
            answer = game.session.post(f"{base}/games/{game.id}/moves", json=body,
                                       headers=headers, timeout=30)  # fmt: skip
        except (requests.ConnectionError, requests.Timeout):  # a kept-alive connection the
            answer = None  # server closed while idle, or no answer in time (an overloaded
            game.resent += 1  # machine): sent again with the same key, it counts once
        # A 503 (the database failing over, bench.webhooks_failover): the same key again later.
        if answer is not None and answer.status_code != 503 or time.monotonic() > deadline:
            break
        game.busy += answer is not None
        time.sleep(0.2 if answer is None else 0.5)
    took = time.perf_counter() - started
    if answer is None:
        raise RuntimeError(f"no answer to a pick in {RETRY_SECONDS} s")
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
    with ThreadPoolExecutor(min(len(by_game), CLIENTS)) as pool:
        list(pool.map(lambda indices: [one(i) for i in indices], by_game.values()))
    return latencies


# --- the three parts ---------------------------------------------------------------------------


def latency_and_cost(url: str, args: argparse.Namespace) -> dict[str, Any]:
    """Parts 1 and 2. ``--deliver-in process``: the server's workers deliver nothing
    (``CARDROOM_WEBHOOKS_DELIVER=0``) and one ``cardroom deliver`` process does, as
    docker-compose runs it; ``serve``: the workers deliver (the default setting)."""
    in_serve = args.deliver_in == "serve"
    watched: list[subprocess.Popen[bytes]] = []  # the server, then the deliverer
    with ExitStack() as stack:
        hook, receiver = stack.enter_context(receiving_apart())
        base = stack.enter_context(serving(url, args.workers, in_serve, started=watched))
        if not in_serve:
            watched.append(stack.enter_context(delivering(url)))
            wait_for_reader(url, "cardroom-deliver")  # started: no message waits for it
        meter = Meter(url, [p.pid for p in watched])
        hooked = [new_game(base, args.per_game, hook) for _ in range(args.games)]
        plain = [new_game(base, 0, None) for _ in range(args.games)]
        pairs: list[tuple[float, float]] = []  # (p50 without, p50 with) per round
        with_endpoints: list[float] = []
        without: list[float] = []
        for _ in range(args.rounds):  # alternated: the machine's drift falls on both sides
            meter.mark()
            bare = play_paced(base, plain, args.picks, args.spread)
            meter.mark("without")
            busy = play_paced(base, hooked, args.picks, args.spread)
            meter.mark("with")
            if not bare or not busy:
                break  # the games are over (27 picks each): more rounds need more --games
            pairs.append((percentile(bare, 0.5), percentile(busy, 0.5)))
            without, with_endpoints = without + bare, with_endpoints + busy
        owed = sum(g.picks for g in hooked) * args.per_game
        deadline = time.monotonic() + 60
        while receiver.distinct() < owed:
            if time.monotonic() > deadline:
                break
            time.sleep(0.2)
        arrivals = receiver.snapshot()
    first: dict[str, Arrival] = {}
    for arrival in arrivals:
        first.setdefault(arrival.msg_id, arrival)
    waits = [a.at - a.timestamp for a in first.values()]
    ratios = [busy / bare for bare, busy in pairs]
    return {
        "delivery in": "cardroom serve's workers" if in_serve else "a cardroom deliver process",
        "endpoints": args.games * args.per_game,
        "games": args.games,
        "messages owed": owed,
        "messages arrived": len(waits),
        "commit->first attempt p50 ms": round(1000 * percentile(waits, 0.5), 1),
        "commit->first attempt p99 ms": round(1000 * percentile(waits, 0.99), 1),
        "commit->first attempt max ms": round(1000 * max(waits, default=float("nan")), 1),
        "pick p50 ms per round (without, with)": [
            (round(1000 * a, 2), round(1000 * b, 2)) for a, b in pairs
        ],
        "rounds played": len(pairs),
        "pick p50 ratio per round": [round(r, 3) for r in ratios],
        "pick p50 ratio, median of rounds": round(statistics.median(ratios), 3),
        "pick p50 ms without endpoints (pooled)": round(1000 * percentile(without, 0.5), 2),
        "pick p50 ms with endpoints (pooled)": round(1000 * percentile(with_endpoints, 0.5), 2),
        "pick p50 ratio (pooled)": round(
            percentile(with_endpoints, 0.5) / percentile(without, 0.5), 3
        ),
        "per phase, summed over rounds": meter.report(len(without), len(with_endpoints)),
    }


def at_least_once(
    url: str,
    args: argparse.Namespace,
    env: dict[str, str] | None = None,
    failover: Callable[[], dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The run of part 3; ``failover`` (bench.webhooks_failover): struck once a third of the
    messages has arrived or half the picks are taken (whichever comes first: picks and
    deliveries both at work), before the deliverer's kill once half has arrived."""
    receiver = Receiver(fail_share=0.3)
    # A 2-player game's picks: 10 cards a hand, 3 rounds, each round's last card played by
    # itself (S5): 27, each opening the next turn, the last ending the game.
    per_game = 27
    count = max(1, -(-args.messages // per_game))
    began = time.monotonic()
    events: dict[str, Any] = {}
    with receiving(receiver) as hook, serving(url, args.workers, False, env) as base:
        games = [new_game(base, 1, hook) for _ in range(count)]
        ids = {g.id for g in games}
        killed = threading.Event()
        with delivering(url, env) as first:

            def arrived(share: float) -> None:
                while len({a.msg_id for a in receiver.snapshot()}) < args.messages * share:
                    time.sleep(0.05)

            def strike() -> None:
                if failover is not None:  # while picks are taken and deliveries go out
                    owed = count * per_game
                    while (
                        len({a.msg_id for a in receiver.snapshot()}) < args.messages / 3
                        and sum(g.picks for g in games) < owed / 2
                    ):
                        time.sleep(0.05)
                    events["failover at s"] = round(time.monotonic() - began, 1)
                    events["failover"] = failover()
                arrived(1 / 2)
                first.send_signal(signal.SIGKILL)  # no handler runs: leases stay until they lapse
                events["deliverer killed at s"] = round(time.monotonic() - began, 1)
                killed.set()

            threading.Thread(target=strike, daemon=True).start()
            while any(not g.over for g in games):
                play_paced(base, [g for g in games if not g.over], len(games), 0.0)
            events["games played at s"] = round(time.monotonic() - began, 1)
            killed.wait(600)
        with delivering(url, env):
            owed = sum(g.picks for g in games)
            deadline = time.monotonic() + 300
            while len(_delivered_ids(receiver, ids)) < owed and time.monotonic() < deadline:
                time.sleep(0.2)
            events["all delivered at s"] = round(time.monotonic() - began, 1)
    return {**_tally(receiver, games, ids), "deliverer killed (SIGKILL) midway": killed.is_set(),
            **events}  # fmt: skip


def _tally(receiver: Receiver, games: list[Game], ids: set[str]) -> dict[str, Any]:
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
    owed = sum(g.picks for g in games)
    return {
        "games": len(games),
        "messages owed": owed,
        "distinct webhook-ids seen": len(distinct),
        "distinct webhook-ids delivered (2xx)": len(delivered),
        "lost": owed - len(delivered),
        "attempts": len(arrivals),
        "failed attempts (the receiver's 30 %)": sum(1 for a in arrivals if a.status >= 300),
        "duplicate successes": len(successes) - len(set(successes)),
        "versions out of order (per game, 2xx)": out_of_order,
        "picks sent again after no answer (same key)": sum(g.resent for g in games),
        "picks sent again after a 503 (same key)": sum(g.busy for g in games),
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
    parser.add_argument("--picks", type=int, default=150, help="picks per phase")
    parser.add_argument("--spread", type=float, default=7.5, help="seconds a phase lasts")
    parser.add_argument("--rounds", type=int, default=6, help="alternations without/with")
    parser.add_argument("--deliver-in", choices=["process", "serve"], default="process")
    parser.add_argument("--messages", type=int, default=2000, help="the at-least-once run's")
    parser.add_argument(
        "--failover",
        choices=["none", "kill", "switchover"],
        default="none",
        help="the at-least-once run on the Patroni drill's cluster, with this failover in it"
        " (root; under flock /work/patroni.lock)",
    )
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--skip", choices=["latency", "at-least-once"], action="append", default=[])
    args = parser.parse_args(argv)
    report: dict[str, Any] = {}
    if "latency" not in args.skip:
        with scratch_database(args.admin_url) as url:
            report["latency and cost"] = latency_and_cost(url, args)
            report["load average after latency and cost"] = os.getloadavg()
    if "at-least-once" not in args.skip:
        report["at least once"] = _at_least_once_somewhere(args)
        report["load average after at least once"] = os.getloadavg()
    print(json.dumps(report, indent=2))


def _at_least_once_somewhere(args: argparse.Namespace) -> dict[str, Any]:
    """On a scratch database, or on the Patroni cluster with a failover in the run."""
    if args.failover == "none":
        with scratch_database(args.admin_url) as url:
            return at_least_once(url, args)
    from bench.webhooks_failover import SERVICE_ENV, cluster_database, strike

    with cluster_database() as (cluster, url):
        return at_least_once(url, args, SERVICE_ENV, lambda: strike(cluster, args.failover))


if __name__ == "__main__":
    main()
