"""Rated games finishing at once on two hosts (issue 37's measures), and a rebuild from their
exports against ``cardroom audit`` of the same exports.

``python -m bench.ratings_hosts [--games 1000] [--accounts 12] [--threads 16]``

A fresh database on the server ``DATABASE_URL`` names (dropped after), two ``cardroom serve``
processes (two hosts) in front of it. ``--games`` rated three-seat Sushi Go! games are made
ready to end: two of ``--accounts`` accounts sit in each (drawn at random: the accounts' ratings
depend on the order their games are rated in) with a greedy bot, and the first resigns. Then
every game's last command (the second account resigns: the greedy bot plays both seats to the
end in that append) is sent to **both** hosts at once, from ``--threads`` threads, every game's
pair of requests in a shuffled order. Measured:

- games rated twice (more than one ``rated_games`` row, or more than two rating changes or
  ``rating_changed`` items for a game) and games not rated: goal 0 and 0;
- every game's export read back, and ``ratings.rebuild`` of them (what ``cardroom ratings
  rebuild`` runs) compared with the stored ratings, float for float: goal all equal;
- the rebuild's time against ``domain.audit.audit`` of the same parsed exports (what ``cardroom
  audit`` runs per export), side by side: goal at most 1.5 times.
"""

from __future__ import annotations

import argparse
import os
import random
import secrets
import struct
import subprocess
import sys
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from bench import http_bench
from domain import ratings
from domain.audit import audit, parse_export
from service.store import db

GOAL_RATIO = 1.5


class Host:
    """One host's lean client per thread."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.local = threading.local()

    def call(self, method: str, path: str, body: Any = None, token: str | None = None) -> Any:
        client = getattr(self.local, "client", None)
        if client is None:
            client = self.local.client = http_bench.Client(self.base)
        return client.call(method, path, body, token)


def prepare(host: Host, games: int, accounts: int, rng: random.Random) -> list[tuple[str, str]]:
    """``games`` rated games one resignation from their end: (game id, the token that ends it)."""
    tokens = []
    for n in range(accounts):
        status, _, body = host.call(
            "POST", "/accounts", {"name": f"rater{n}x{secrets.token_hex(3)}"}
        )
        assert status == 201, body
        tokens.append(body["token"])
    ready = []
    for _ in range(games):
        first, second = rng.sample(tokens, 2)
        bots = [{"seat": 2, "kind": "greedy"}]
        body = {"game": "sushi-go", "players": 3, "bots": bots, "rated": True}
        status, _, created = host.call("POST", "/games", body)
        assert status == 201, created
        gid = created["game_id"]
        for token in (first, second):
            status, _, seated = host.call("POST", f"/games/{gid}/players", {}, token)
            assert status == 201, seated
        status, _, view = host.call("POST", f"/games/{gid}/resign", {}, first)
        assert status == 200 and view["status"] == "playing", view
        ready.append((gid, second))
    return ready


def finish_all(hosts: list[Host], ready: list[tuple[str, str]], threads: int) -> dict[str, int]:
    """Each game's last resignation sent to every host at once; the answers counted."""
    sends = [(host, gid, token) for gid, token in ready for host in hosts]
    random.Random(7).shuffle(sends)
    answers: dict[str, int] = {}
    lock = threading.Lock()
    start = threading.Barrier(threads)

    def worker(part: list[tuple[Host, str, str]]) -> None:
        start.wait()
        for host, gid, token in part:
            status, _, body = host.call("POST", f"/games/{gid}/resign", {}, token)
            answer = str(status) if status == 200 else f"{status} {body.get('code')}"
            with lock:
                answers[answer] = answers.get(answer, 0) + 1

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(worker, [sends[i::threads] for i in range(threads)]))
    return answers


def counts(pool: Any, ready: list[tuple[str, str]]) -> dict[str, int]:
    ids = [gid for gid, _ in ready]
    with pool.connection() as conn:
        rated = dict(
            conn.execute(
                "SELECT game_id::text, count(*) FROM rated_games WHERE game_id::text = ANY(%s)"
                " GROUP BY 1",
                (ids,),
            ).fetchall()
        )
        changes = dict(
            conn.execute("SELECT game_id::text, count(*) FROM rating_changes GROUP BY 1").fetchall()
        )
        items = dict(
            conn.execute(
                "SELECT game_id::text, count(*) FROM account_feed WHERE type = 'rating_changed'"
                " GROUP BY 1"
            ).fetchall()
        )
    twice = sum(
        1 for g in ids if rated.get(g, 0) > 1 or changes.get(g, 0) > 2 or items.get(g, 0) > 2
    )
    missing = sum(1 for g in ids if rated.get(g, 0) == 0 or changes.get(g, 0) != 2)
    return {"rated": len(rated), "twice": twice, "missing": missing}


def same(a: float, b: float) -> bool:
    return struct.pack("<d", a) == struct.pack("<d", b)


def rebuild_check(pool: Any, host: Host, ready: list[tuple[str, str]]) -> dict[str, float]:
    """Every export read back; the rebuild against the stored ratings, and its time against the
    audit's over the same parsed exports."""
    texts = []
    for gid, _ in ready:
        client = http_bench.Client(host.base)
        client.conn.request("GET", f"/games/{gid}/export")
        response = client.conn.getresponse()
        assert response.status == 200
        texts.append(response.read().decode())
        client.conn.close()
    started = time.perf_counter()
    ledger = ratings.rebuild(parse_export(text) for text in texts)
    rebuild_s = time.perf_counter() - started
    started = time.perf_counter()
    reports = [audit(parse_export(text)) for text in texts]
    audit_s = time.perf_counter() - started
    with pool.connection() as conn:
        stored = conn.execute("SELECT pool, account_id, mu, sigma FROM ratings").fetchall()
    equal = sum(
        1
        for p, a, mu, sigma in stored
        if (p, a) in ledger.ratings
        and same(ledger.ratings[(p, a)].mu, mu)
        and same(ledger.ratings[(p, a)].sigma, sigma)
    )
    return {
        "ratings": len(stored),
        "equal": equal,
        "rebuilt": len(ledger.ratings),
        "games": ledger.games,
        "audited_ok": sum(1 for r in reports if r["ok"] or r["signature"]["ok"] is None),
        "rebuild_s": rebuild_s,
        "audit_s": audit_s,
    }


def run(url: str, games: int, accounts: int, threads: int, bases: list[str]) -> dict[str, Any]:
    """The measure on a migrated database ``url`` served by ``bases`` (two hosts)."""
    hosts = [Host(base) for base in bases]
    pool = db.make_pool(url, max_size=4)
    try:
        ready = prepare(hosts[0], games, accounts, random.Random(37))
        started = time.perf_counter()
        answers = finish_all(hosts, ready, threads)
        finish_s = time.perf_counter() - started
        counted = {"answers": answers, "finish_s": finish_s, **counts(pool, ready)}
        print(counted, flush=True)
        return {**counted, **rebuild_check(pool, hosts[1], ready)}
    finally:
        pool.close()


def start_server(url: str, port: int) -> subprocess.Popen[bytes]:
    """``cardroom serve`` (one worker) without rate limits: the bench is one address making
    a dozen accounts and a thousand games, which the limits exist to refuse."""
    env = {**os.environ, "DATABASE_URL": url, "CARDROOM_RATE_LIMITS": "off"}
    command = [sys.executable, "-m", "service.cli.main", "serve", "--port", str(port)]
    server = subprocess.Popen([*command, "--workers", "1"], env=env, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1):
                return server
        except OSError:
            time.sleep(0.1)
    server.kill()
    raise RuntimeError("the server did not start within 60 s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.ratings_hosts", description=__doc__)
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--accounts", type=int, default=12)
    parser.add_argument("--threads", type=int, default=16)
    args = parser.parse_args(argv)
    from bench.account_history import ensure_keys

    ensure_keys()
    server_url = db.database_url()
    name = f"cardroom_ratings_{secrets.token_hex(4)}"
    url = db.ensure_database(server_url, name)
    servers = []
    try:
        db.migrate(url)
        ports = [http_bench.free_port() for _ in range(2)]
        servers = [start_server(url, port) for port in ports]
        result = run(
            url, args.games, args.accounts, args.threads, [f"http://127.0.0.1:{p}" for p in ports]
        )
    finally:
        for server in servers:
            server.terminate()
            server.wait(timeout=30)
        db.drop_database(server_url, name)
    ratio = result["rebuild_s"] / result["audit_s"]
    print(
        f"{args.games} rated games ended at once on 2 hosts ({args.threads} threads, each game's"
        f" last command sent to both; answers {result['answers']}) in {result['finish_s']:.1f} s:"
        f" {result['twice']} rated twice, {result['missing']} not rated (goal 0, 0)"
    )
    print(
        f"rebuild of {result['games']} rated games from their exports: {result['equal']} of"
        f" {result['ratings']} stored ratings equal bit for bit ({result['rebuilt']} rebuilt);"
        f" rebuild {result['rebuild_s']:.2f} s, audit of the same exports"
        f" {result['audit_s']:.2f} s ({result['audited_ok']} passed): ratio {ratio:.3f}"
        f" (goal <= {GOAL_RATIO})"
    )
    ok = result["twice"] == 0 and result["missing"] == 0 and result["equal"] == result["ratings"]
    return 0 if ok and ratio <= GOAL_RATIO else 1


if __name__ == "__main__":
    os.environ.setdefault("CARDROOM_CLOCK_INTERVAL", "0")
    sys.exit(main())
