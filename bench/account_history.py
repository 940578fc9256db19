"""An account's history (issue 35, point 3) at scale: a page, the export, a walk under churn.

``python -m bench.account_history [--games N] [--accounts A] [--reads R] [--churn-rate G]``

A fresh database on the server ``DATABASE_URL`` names (else the embedded one; dropped after),
one ``cardroom serve`` (one gevent worker, so that its memory is one process's) in front of it.

Generator: ``A`` accounts (through ``Accounts.create``), a few template games played for real
through the game service (four accounts sit, each resigns, the greedy bot plays them to the
end), then ``N`` finished games appended through ``EventStore.create_game``: each one a
template's events (from the decider, in the store's hash chain) with four accounts of the
``A`` in its seats. One account, the "heavy" one, sits in every other game (its history holds
``N / 2`` games: enough for the 10,000-game export at ``N`` = 20,000); the others at random.

Then, against the server:

(a) a history page of 100 (the heavy account's, and a typical account's) against
    ``GET /games?limit=100``, alternated ``R`` times, p50 each: goal ratio ≤ 1.5;
(b) the export (``Accept: application/x-ndjson``) of 10,000 games: time to its first byte
    against a history page's whole time (goal: sooner), and the server process tree's RSS
    growth while it streams (sampled every 5 ms; goal ≤ 50 MB);
(c) a keyset walk (pages of 100) through the heavy account's history while a thread creates
    and finishes games for it at ``G`` games/s (through the game service: create with a greedy
    bot, the account sits, resigns): every game it had at the start appears exactly once
    (goal: 0 duplicates, 0 gaps).

The templates share their seeds: the copies do not pass an audit. Scratch databases only.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import secrets
import statistics
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from uuid import UUID

from bench import http_bench
from domain import names
from domain.bots import BotSeat
from domain.decider import SEAT_TAKEN, Event
from service import keys as service_keys
from service.http import auth
from service.play import GameService
from service.store import db
from service.store.events import EventStore

GOAL_RATIO = 1.5
GOAL_MB = 50
EXPORT = 10_000
CHURNERS = 3  # threads creating and finishing games in (c), sharing the rate
SCOPES = ("play", "history:read", "webhooks:write", "tokens:write")


def tree_rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` and its descendants, in MB."""
    total = 0
    pending = [pid]
    while pending:
        current = pending.pop()
        try:
            status = Path(f"/proc/{current}/status").read_text()
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1])
        pending += [int(child) for child in children]
    return total / 1024


class Accounts:
    """The bench's accounts: ids and tokens."""

    def __init__(self, service: GameService, count: int) -> None:
        self.ids: list[str] = []
        self.tokens: dict[str, str] = {}
        for n in range(count):
            account_id, token = str(uuid.uuid4()), auth.new_account_token()
            name = f"bench{n:05d}{secrets.token_hex(3)}"
            digest = auth.token_hash(token)
            service.accounts.create(
                account_id, name, names.looks(name, 2), (uuid.uuid4(), digest, SCOPES, "bench")
            )
            self.ids.append(account_id)
            self.tokens[account_id] = token


def play_template(service: GameService, seated: list[str]) -> list[Event]:
    """A finished 4-player game the accounts ``seated`` sat in, played for real; its events."""
    loaded = service.create("sushi-go", {"players": 4})
    for account in seated:
        service.join(loaded.id, f"t{secrets.token_hex(4)}", os.urandom(32), account=account)
    for seat in range(4):
        service.resign(loaded.id, seat)
    return service.store.load(loaded.id)[1]


def with_accounts(events: list[Event], accounts: list[str]) -> list[Event]:
    """``events`` with the seats taken by ``accounts`` (in seat order)."""
    out = []
    for event in events:
        if event.type == SEAT_TAKEN:
            seat = event.data["seat"]
            data = {**event.data, "account": accounts[seat], "name": f"p{accounts[seat][:8]}"}
            event = Event(event.type, data, event.schema_version)
        out.append(event)
    return out


def generate(store: EventStore, templates: list[list[Event]], accounts: Accounts, games: int):
    heavy = accounts.ids[0]
    others = accounts.ids[1:]
    rng = random.Random(35)
    plans = []
    for n in range(games):
        seated = rng.sample(others, 4)
        if n % 2 == 0:
            seated[rng.randrange(4)] = heavy
        plans.append(with_accounts(rng.choice(templates), seated))

    def write(events: list[Event]) -> None:
        store.create_game(uuid.uuid4(), "sushi-go", os.urandom(32), events)

    with ThreadPoolExecutor(4) as pool:
        for done, _ in enumerate(pool.map(write, plans), start=1):
            if done % 5000 == 0:
                print(f"  {done} games appended", flush=True)


def get(conn: http.client.HTTPConnection, path: str, accept: str = "application/json") -> float:
    started = time.perf_counter()
    conn.request("GET", path, headers={"Accept": accept})
    response = conn.getresponse()
    response.read()
    assert response.status == 200, (path, response.status)
    return time.perf_counter() - started


def page_vs_lobby(base: str, heavy: str, typical: str, reads: int) -> dict[str, float]:
    conn = http.client.HTTPConnection(*_host(base), timeout=60)
    paths = {
        "lobby": "/games?limit=100",
        "heavy": f"/accounts/{heavy}/games?limit=100",
        "typical": f"/accounts/{typical}/games?limit=100",
    }
    times: dict[str, list[float]] = {name: [] for name in paths}
    for _ in range(3):  # warm-up
        for path in paths.values():
            get(conn, path)
    for _ in range(reads):
        for name, path in paths.items():
            times[name].append(get(conn, path))
    conn.close()
    return {name: statistics.median(values) * 1e3 for name, values in times.items()}


def export(base: str, server_pid: int, account: str) -> dict[str, float]:
    conn = http.client.HTTPConnection(*_host(base), timeout=300)
    before = tree_rss_mb(server_pid)
    peak = before
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not stop.is_set():
            peak = max(peak, tree_rss_mb(server_pid))
            stop.wait(0.005)

    sampler = threading.Thread(target=sample)
    sampler.start()
    started = time.perf_counter()
    conn.request("GET", f"/accounts/{account}/games", headers={"Accept": "application/x-ndjson"})
    response = conn.getresponse()
    first = response.read(1)
    first_byte = time.perf_counter() - started
    lines = (first + response.read()).count(b"\n")
    total = time.perf_counter() - started
    stop.set()
    sampler.join()
    conn.close()
    return {
        "first_byte_ms": first_byte * 1e3,
        "total_s": total,
        "lines": lines,
        "rss_before_mb": before,
        "rss_growth_mb": peak - before,
    }


def walk_under_churn(
    base: str, service: GameService, account: str, rate: float
) -> dict[str, float]:
    store = service.store
    with store.connection() as conn:
        rows = conn.execute(
            "SELECT DISTINCT game_id FROM account_seats WHERE account_id = %s", (account,)
        ).fetchall()
    existing = {str(row[0]) for row in rows}
    stop = threading.Event()
    made: list[UUID] = []

    def churn() -> None:
        bot = (BotSeat(1, "greedy", "greedy bot 1"),)
        next_at = time.perf_counter()
        while not stop.is_set():
            loaded = service.create("sushi-go", {"players": 2}, bot)
            service.join(loaded.id, "churn", os.urandom(32), account=account)
            service.resign(loaded.id, 0)
            made.append(loaded.id)
            next_at += CHURNERS / rate
            stop.wait(max(0.0, next_at - time.perf_counter()))

    churners = [threading.Thread(target=churn) for _ in range(CHURNERS)]
    for thread in churners:
        thread.start()
    seen: list[str] = []
    conn = http.client.HTTPConnection(*_host(base), timeout=60)
    started = time.perf_counter()
    after = None
    pages = 0
    try:
        while True:
            path = f"/accounts/{account}/games?limit=100"
            if after is not None:
                path += f"&after={after}"
            conn.request("GET", path)
            body = json.loads(conn.getresponse().read())
            pages += 1
            seen += [item["game_id"] for item in body["games"]]
            after = body["next_after"]
            if after is None:
                break
    finally:
        walked = time.perf_counter() - started
        stop.set()
        for thread in churners:
            thread.join()
        conn.close()
    return {
        "existing": len(existing),
        "pages": pages,
        "walk_s": walked,
        "churned": len(made),
        "churn_rate": len(made) / walked,
        "duplicates": len(seen) - len(set(seen)),
        "gaps": len(existing - set(seen)),
    }


def _host(base: str) -> tuple[str, int]:
    host, port = base.removeprefix("http://").split(":")
    return host, int(port)


def ensure_keys() -> None:
    """The service's keys, for this process and the server: a scratch set unless configured."""
    if os.environ.get("CARDROOM_KEYS_FILE") or os.environ.get("CARDROOM_KEYS"):
        return
    if service_keys.keys_file().exists():
        return
    scratch = Path(tempfile.mkdtemp(prefix="cardroom-bench-keys-")) / "keys.json"
    os.environ["CARDROOM_KEYS_FILE"] = str(scratch)
    service_keys.init()


def run(server_url: str, games: int, accounts: int, reads: int, rate: float) -> None:
    ensure_keys()
    name = f"cardroom_history_{secrets.token_hex(4)}"
    url = db.ensure_database(server_url, name)
    server = None
    pool = None
    try:
        db.migrate(url)
        pool = db.make_pool(url, max_size=8)
        service = GameService(EventStore(pool))
        started = time.perf_counter()
        people = Accounts(service, accounts)
        templates = [play_template(service, people.ids[1 + 4 * n : 5 + 4 * n]) for n in range(4)]
        generate(EventStore(pool), templates, people, games)
        with pool.connection() as conn:
            conn.execute("VACUUM ANALYZE")
        print(
            f"generated {accounts} accounts, {games} games in {time.perf_counter() - started:.0f} s"
        )
        port = http_bench.free_port()
        server = http_bench.start_server(url, port, 1)
        base = f"http://127.0.0.1:{port}"
        heavy, typical = people.ids[0], people.ids[1]
        a = page_vs_lobby(base, heavy, typical, reads)
        print(
            f"(a) p50 over {reads}: GET /games?limit=100 {a['lobby']:.1f} ms;"
            f" history page of 100 (heavy account) {a['heavy']:.1f} ms,"
            f" ratio {a['heavy'] / a['lobby']:.2f} (goal <= {GOAL_RATIO});"
            f" typical account's page {a['typical']:.1f} ms, ratio {a['typical'] / a['lobby']:.2f}"
        )
        b = export(base, server.pid, heavy)
        print(
            f"(b) export of {b['lines']:.0f} games: first byte {b['first_byte_ms']:.1f} ms"
            f" (a history page: {a['heavy']:.1f} ms), whole {b['total_s']:.2f} s;"
            f" server RSS {b['rss_before_mb']:.0f} MB, growth {b['rss_growth_mb']:.1f} MB"
            f" (goal <= {GOAL_MB})"
        )
        c = walk_under_churn(base, service, heavy, rate)
        print(
            f"(c) walk of {c['existing']:.0f} games in {c['pages']:.0f} pages"
            f" ({c['walk_s']:.1f} s) while {c['churned']:.0f} games were created and finished"
            f" ({c['churn_rate']:.1f}/s): {c['duplicates']:.0f} duplicates, {c['gaps']:.0f} gaps"
        )
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
        if pool is not None:
            pool.close()
        db.drop_database(server_url, name)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.account_history", description=__doc__)
    parser.add_argument("--games", type=int, default=20_000, help="finished games (issue: 100k)")
    parser.add_argument("--accounts", type=int, default=1_000)
    parser.add_argument("--reads", type=int, default=30, help="alternated reads for (a)")
    parser.add_argument("--churn-rate", type=float, default=50.0, help="games/s during (c)")
    args = parser.parse_args(argv)
    run(db.database_url(), args.games, args.accounts, args.reads, args.churn_rate)


if __name__ == "__main__":
    main()
