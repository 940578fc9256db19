"""cardroom beside a peer users would otherwise pick: boardgame.io 0.50 with bgio-postgres on the
same PostgreSQL (issue 40, goal 4), moves/s and move p50 of each side and their ratios.

The peer (bench/peer_bgio/, installed there with ``npm ci`` at bench time) is a Sushi Go!-shaped
boardgame.io game of the same shape as cardroom's: 4 seats, hands of 8 from the 108-card deck,
three rounds, every seat picking at once and secretly (playerView shows a seat its own hand and
pick only; the move is redacted in the others' logs), hands passing left after each turn, the last
card of a round picked for its holder. Its server is boardgame.io's ``Server`` with
``PostgresStore`` (Sequelize's defaults, its query log off), one Node process as boardgame.io
runs (its per-match move queue lives in the process), on 127.0.0.1.

The clients are the same on both sides (bench/http_bench.py's lean keep-alive client, the same
count of clients in the same 8 processes, the same number of whole games each) and play the same
way: create a game, take all 4 seats, pick the first card of each seat's hand, read a seat's view
only when its hand is unknown. Only the moves are timed. On the peer, games are created and seats
taken through boardgame.io's Lobby REST API; a move goes to a route that runs boardgame.io's
``Master.onUpdate`` as its socket.io transport does (0.50 has no HTTP move endpoint) and answers
after the state is written, with the seat's filtered state (server.js says more).

The sides run one after the other on databases of their own, alternating (peer first, then
cardroom first, ...): the machine is shared and noisy, and alternation spreads its drift over
both. moves/s is over all of a side's runs together; p50 is the median of its runs' p50s.

Without node or npm the comparison is skipped with a message (it is a benchmark, not a test).
Environment for ``python -m bench.peer``: BENCH_CLIENTS (32), BENCH_GAMES (games per client, 1),
BENCH_PAIRS (peer/cardroom pairs, 2).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import secrets
import shutil
import statistics
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from bench import http_bench
from bench.http_bench import Client, HttpResult

PEER_DIR = Path(__file__).with_name("peer_bgio")
PEER = "boardgame.io 0.50.2 + bgio-postgres 1.0.16, one Node process"
GOAL_MOVES_X = 2.5  # cardroom's moves/s >= 2.5x the peer's
GOAL_P50_X = 0.5  # cardroom's move p50 <= 0.5x the peer's
GAME = "/games/sushi-go"

Goal = tuple[str, str, str, bool]  # what, measured, goal, met (as bench/run.py's)


def missing() -> str | None:
    """Why the peer cannot run here (None: it can)."""
    absent = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    if absent:
        return f"skipped: {' and '.join(absent)} not found (install Node.js 18+ with npm to run it)"
    return None


def install() -> None:
    """``npm ci`` into bench/peer_bgio when its node_modules is missing or older than the
    lockfile (node_modules is never committed)."""
    installed = PEER_DIR / "node_modules" / ".package-lock.json"
    lock = PEER_DIR / "package-lock.json"
    if installed.exists() and installed.stat().st_mtime >= lock.stat().st_mtime:
        return
    subprocess.run(
        ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
        cwd=PEER_DIR,
        check=True,
        stdout=subprocess.DEVNULL,
    )


@contextlib.contextmanager
def peer_server(url: str) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """The peer's server on a free loopback port against the database ``url``."""
    port = http_bench.free_port()
    env = {**os.environ, "DATABASE_URL": url, "PORT": str(port), "NODE_ENV": "production"}
    server = subprocess.Popen(
        ["node", "server.js"], cwd=PEER_DIR, env=env, stdout=subprocess.DEVNULL
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{base}/games", timeout=1):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the boardgame.io peer did not start") from None
                time.sleep(0.1)
        yield base, server
    finally:
        server.terminate()
        server.wait(timeout=30)


def play_game(client: Client) -> tuple[list[float], int, int]:
    """One whole peer game driven by one client as http_bench._play drives cardroom's: pick
    latencies, requests made, errors."""
    match = client.call("POST", f"{GAME}/create", {"numPlayers": http_bench.PLAYERS})[2]["matchID"]
    seats = [str(seat) for seat in range(http_bench.PLAYERS)]
    credentials = [
        client.call("POST", f"{GAME}/{match}/join", {"playerID": s, "playerName": f"bot{s}"})[2][
            "playerCredentials"
        ]
        for s in seats
    ]
    hands: list[list[str] | None] = [None] * len(seats)
    latencies: list[float] = []
    made, errors, state_id = len(seats) + 1, 0, 0
    while True:
        for seat in range(len(seats)):
            if hands[seat] is None:
                query = f"?playerID={seat}&credentials={credentials[seat]}"
                state = client.call("GET", f"{GAME}/{match}/view{query}")[2]["state"]
                made += 1
                if state["ctx"].get("gameover") is not None:
                    return latencies, made, errors
                hands[seat] = [] if state["G"]["pick"] else state["G"]["hand"]
                state_id = state["_stateID"]
            hand = hands[seat]
            if not hand:
                continue  # picked already this turn
            move = {"playerID": seats[seat], "credentials": credentials[seat], "card": hand[0]}
            started = time.perf_counter()
            status, _, body = client.call(
                "POST", f"{GAME}/{match}/move", {**move, "stateID": state_id}
            )
            latencies.append(time.perf_counter() - started)
            made += 1
            if status != 200:
                errors, hands[seat] = errors + 1, None
                continue
            state = body["state"]
            state_id = state["_stateID"]
            if state["ctx"].get("gameover") is not None:
                return latencies, made, errors
            if state["G"]["pick"] is None:  # this pick completed the turn: hands moved on
                hands = [None] * len(seats)
                hands[seat] = state["G"]["hand"]
            else:
                hands[seat] = []


def _client(args: tuple[str, int]) -> tuple[list[float], int, int, float]:
    base, games = args
    cpu = time.process_time()
    client = Client(base)
    latencies: list[float] = []
    made = errors = 0
    for _ in range(games):
        lat, n, e = play_game(client)
        latencies, made, errors = latencies + lat, made + n, errors + e
    client.conn.close()
    return latencies, made, errors, time.process_time() - cpu


def run_peer(url: str, clients: int, games: int) -> HttpResult:
    """``clients`` clients in (at most) 8 processes, as http_bench.run, against the peer."""
    with (
        peer_server(url) as (base, server),
        multiprocessing.get_context("spawn").Pool(min(clients, 8)) as pool,
    ):
        pool.map(http_bench._noop, range(min(clients, 8)))  # start the processes beforehand
        cpu_before = http_bench.process_tree_cpu(server.pid)
        started = time.perf_counter()
        results = pool.map(_client, [(base, games)] * clients, chunksize=1)
        elapsed = time.perf_counter() - started
        server_cpu = http_bench.process_tree_cpu(server.pid) - cpu_before
    latencies = sorted(x for lat, *_ in results for x in lat)
    return HttpResult(
        clients=clients,
        workers=1,
        picks=len(latencies),
        p50_ms=statistics.median(latencies) * 1000,
        p99_ms=latencies[int(0.99 * (len(latencies) - 1))] * 1000,
        picks_per_s=len(latencies) / elapsed,
        requests_per_s=sum(n for _, n, _, _ in results) / elapsed,
        errors=sum(e for _, _, e, _ in results),
        server_cpu_s=server_cpu,
        client_cpu_s=sum(cpu for *_, cpu in results),
    )


def line(label: str, result: HttpResult) -> str:
    return (
        f"[{label}] {result.picks} moves  p50 {result.p50_ms:7.3f} ms  p99 {result.p99_ms:7.3f} ms"
        f"  {result.picks_per_s:7.1f} moves/s  ({result.clients} clients, {result.errors} errors,"
        f" server CPU {result.cpu_ms_per_pick:.3f} ms per move)"
    )


def rate(results: list[HttpResult]) -> float:
    """Moves per second over all of ``results`` together."""
    return sum(r.picks for r in results) / sum(r.picks / r.picks_per_s for r in results)


def compare(
    cardroom_url: str, peer_url: str, clients: int, games: int, pairs: int
) -> tuple[list[HttpResult], list[HttpResult]]:
    """Alternating runs (peer first, then cardroom first, ...): cardroom's and the peer's."""
    install()
    mine: list[HttpResult] = []
    theirs: list[HttpResult] = []
    for turn in range(pairs):
        sides = ["boardgame.io", "cardroom"][:: 1 if turn % 2 == 0 else -1]
        for side in sides:
            if side == "cardroom":
                mine.append(http_bench.run(cardroom_url, clients, games))
            else:
                theirs.append(run_peer(peer_url, clients, games))
            print(line(side, (mine if side == "cardroom" else theirs)[-1]), flush=True)
    return mine, theirs


def goals(mine: list[HttpResult], theirs: list[HttpResult]) -> list[Goal]:
    """The two rows of issue 40's measure "vs boardgame.io on the same PostgreSQL"."""
    moves = rate(mine) / rate(theirs)
    p50 = statistics.median(r.p50_ms for r in mine) / statistics.median(r.p50_ms for r in theirs)
    return [
        (
            "4. moves/s / boardgame.io's",
            f"{moves:.2f}x",
            f">= {GOAL_MOVES_X:g}x",
            moves >= GOAL_MOVES_X,
        ),
        ("4. move p50 / boardgame.io's", f"{p50:.2f}x", f"<= {GOAL_P50_X:g}x", p50 <= GOAL_P50_X),
    ]


def cpu_per_move(results: list[HttpResult]) -> float:
    """Server CPU milliseconds per move over all of ``results`` (the GETs and set-up included)."""
    return sum(r.server_cpu_s for r in results) * 1e3 / sum(r.picks for r in results)


def summary(mine: list[HttpResult], theirs: list[HttpResult]) -> str:
    """Both sides' figures; and the server CPU per move, which a loaded machine moves less than
    the rates (one Node process competes for the cores as one, cardroom's workers as several)."""
    p50 = [statistics.median(r.p50_ms for r in side) for side in (mine, theirs)]
    cpu = [cpu_per_move(side) for side in (mine, theirs)]
    return (
        f"cardroom {rate(mine):.1f} moves/s, p50 {p50[0]:.3f} ms, server CPU {cpu[0]:.2f} ms per"
        f" move; {PEER}: {rate(theirs):.1f} moves/s, p50 {p50[1]:.3f} ms, server CPU"
        f" {cpu[1]:.2f} ms per move ({len(mine)} alternating runs each, {mine[0].clients}"
        f" clients, {mine[0].picks // mine[0].clients} moves per client); the peer's server CPU"
        f" per move / cardroom's: {cpu[1] / cpu[0]:.2f}x"
    )


@contextlib.contextmanager
def databases(admin: str) -> Iterator[tuple[str, str]]:
    """A migrated scratch database for cardroom and an empty one for the peer (bgio-postgres
    creates its table), on the server ``admin`` names; both dropped after."""
    from service.store import db

    names = [f"cardroom_bench_{secrets.token_hex(4)}", f"cardroom_peer_{secrets.token_hex(4)}"]
    try:
        urls = [db.ensure_database(admin, name) for name in names]
        db.migrate(urls[0])
        yield urls[0], urls[1]
    finally:
        for name in names:
            with contextlib.suppress(Exception):
                db.drop_database(admin, name)


def bench(admin: str, clients: int, games: int, pairs: int) -> list[Goal]:
    """What `make bench` runs: the comparison's lines and its goal rows (none when skipped)."""
    why = missing()
    if why is not None:
        print(f"\nvs boardgame.io: {why}")
        return []
    print(f"\nvs {PEER}, same PostgreSQL, alternating runs (goal 4):", flush=True)
    with databases(admin) as (cardroom_url, peer_url):
        mine, theirs = compare(cardroom_url, peer_url, clients, games, pairs)
    print(summary(mine, theirs))
    return goals(mine, theirs)


def main() -> None:
    from service.store import db

    env = os.environ.get
    rows = bench(
        db.database_url(),
        int(env("BENCH_CLIENTS", "32")),
        int(env("BENCH_GAMES", "1")),
        int(env("BENCH_PAIRS", "2")),
    )
    for what, measured, goal, met in rows:
        print(f"{what:<30}  {measured:>8}  {goal:>8}  {'met' if met else 'MISSED'}")


if __name__ == "__main__":
    main()
