"""Does a pick (and reading a game) slow down as the event log grows?

``python -m bench.growth [--events N] [--games G] [--reads R]``

Two fresh databases on one server (the one ``DATABASE_URL`` names, else the embedded one; both
dropped after), each with its own ``cardroom serve``. Into the second, after one game is played
on it, ``N`` events are bulk-loaded with one ``INSERT … SELECT`` of copies of that finished game
(every row through the table's triggers and indexes, as an append); it is then vacuumed and
analysed (what autovacuum does after a bulk insert; measuring while it runs would measure it)
and checkpointed. Then one client measures both, alternating game by game and read by read (so
that the machine's load, which moves times 2x from minute to minute here, weighs on both alike):
``G`` complete 4-player games on each (pick p50), then ``R`` reads of each finished game
(``GET /games/{id}`` and ``GET /games/{id}/events``, p50). Goal: every p50 of the grown
database within ±10 % of the fresh one's.

The copies keep the original's hashes, which name the original game: they do not pass an audit.
The benchmark is for scratch databases only.
"""

from __future__ import annotations

import argparse
import secrets
import statistics
import time
from dataclasses import dataclass

import psycopg

from bench import http_bench
from service.store import db

GOAL = 0.10  # ±10 %
EVENTS = 1_000_000


@dataclass(frozen=True)
class Figures:
    events: int  # rows in the events table when measured
    pick_ms: float
    get_game_ms: float
    get_events_ms: float


@dataclass(frozen=True)
class Growth:
    fresh: Figures
    grown: Figures
    load_s: float
    table_mb: float

    def lines(self) -> list[str]:
        rows = [
            ("pick p50", self.fresh.pick_ms, self.grown.pick_ms),
            ("GET /games/{id} p50", self.fresh.get_game_ms, self.grown.get_game_ms),
            ("GET /games/{id}/events p50", self.fresh.get_events_ms, self.grown.get_events_ms),
        ]
        out = [
            f"growth: events {self.fresh.events:,} -> {self.grown.events:,} "
            f"({self.table_mb:,.0f} MB, loaded in {self.load_s:.0f} s)"
        ]
        for name, before, after in rows:
            change = after / before - 1
            out.append(
                f"  {name:<27} {before:7.3f} -> {after:7.3f} ms  {change:+6.1%}"
                f"  goal within ±{GOAL:.0%}: {'met' if abs(change) <= GOAL else 'MISSED'}"
            )
        return out

    @property
    def changes(self) -> list[float]:
        pairs = [
            (self.fresh.pick_ms, self.grown.pick_ms),
            (self.fresh.get_game_ms, self.grown.get_game_ms),
            (self.fresh.get_events_ms, self.grown.get_events_ms),
        ]
        return [after / before - 1 for before, after in pairs]


def _timed(client: http_bench.Client, path: str) -> float:
    started = time.perf_counter()
    status, _, _ = client.call("GET", path)
    elapsed = time.perf_counter() - started
    if status != 200:
        raise RuntimeError(f"GET {path}: {status}")
    return elapsed


class _Side:
    """One database and the server in front of it, with what was measured on it."""

    def __init__(self, url: str, base: str) -> None:
        self.url = url
        self.client = http_bench.Client(base)
        self.picks: list[float] = []
        self.gets: list[float] = []
        self.pages: list[float] = []
        self.paths: list[str] = []

    def play(self) -> None:
        latencies, _, errors, path = http_bench.play_game(self.client, with_path=True)
        if errors:
            raise RuntimeError(f"{errors} picks failed")
        self.picks += latencies
        self.paths.append(path)

    def read(self, path: str) -> None:
        self.gets.append(_timed(self.client, path))
        self.pages.append(_timed(self.client, f"{path}/events"))

    def figures(self) -> Figures:
        with psycopg.connect(self.url) as conn:
            rows = conn.execute("SELECT count(*) FROM events").fetchone()[0]  # type: ignore[index]
        median = statistics.median
        return Figures(
            rows, median(self.picks) * 1e3, median(self.gets) * 1e3, median(self.pages) * 1e3
        )


def measure(fresh: _Side, grown: _Side, games: int, reads: int) -> None:
    """Alternate between the two, swapping which goes first every round."""
    for round_ in range(games):
        for side in (fresh, grown) if round_ % 2 == 0 else (grown, fresh):
            side.play()
    for round_ in range(reads):
        for index in range(games):
            pair = (fresh, grown) if (round_ + index) % 2 == 0 else (grown, fresh)
            for side in pair:
                side.read(side.paths[-games + index])


def bulk_load(url: str, game_path: str, events: int) -> float:
    """Copies of the game at ``game_path`` until about ``events`` more events; the table's MB."""
    game_id = game_path.rsplit("/", 1)[1]
    with psycopg.connect(url, autocommit=True) as conn:
        per_game = conn.execute(
            "SELECT count(*) FROM events WHERE game_id = %s", (game_id,)
        ).fetchone()[0]  # type: ignore[index]
        copies = -(-events // per_game)
        with conn.transaction():
            conn.execute(
                "CREATE TEMP TABLE copies ON COMMIT DROP AS"
                " SELECT gen_random_uuid() AS id FROM generate_series(1, %s)",
                (copies,),
            )
            conn.execute(
                "INSERT INTO games (id, game) SELECT c.id, g.game FROM copies c, games g"
                " WHERE g.id = %s",
                (game_id,),
            )
            # In version order within each copy: the contiguity trigger sees the rows before.
            conn.execute(
                "INSERT INTO events (game_id, version, type, schema_version, data, hash)"
                " SELECT c.id, e.version, e.type, e.schema_version, e.data, e.hash"
                " FROM copies c CROSS JOIN events e WHERE e.game_id = %s"
                " ORDER BY c.id, e.version",
                (game_id,),
            )
        conn.execute("VACUUM (ANALYZE) events")
        conn.execute("VACUUM (ANALYZE) games")
        conn.execute("CHECKPOINT")
        size = conn.execute("SELECT pg_total_relation_size('events')").fetchone()[0]  # type: ignore[index]
    return size / 2**20


def run(
    server_url: str, events: int = EVENTS, games: int = 3, reads: int = 20, workers: int = 0
) -> Growth:
    names = [f"cardroom_growth_{secrets.token_hex(4)}" for _ in range(2)]
    urls = [db.ensure_database(server_url, name) for name in names]
    servers = []
    try:
        sides = []
        for url in urls:
            db.migrate(url)
            port = http_bench.free_port()
            servers.append(http_bench.start_server(url, port, workers or 3, 4))
            sides.append(_Side(url, f"http://127.0.0.1:{port}"))
        fresh, grown = sides
        fresh.play()  # warm-up: imports, pools, caches
        grown.play()  # warm-up, and the finished game the bulk load copies
        started = time.perf_counter()
        table_mb = bulk_load(grown.url, grown.paths[0], events)
        load_s = time.perf_counter() - started
        for side in sides:
            side.picks.clear()
        measure(fresh, grown, games, reads)
        return Growth(fresh.figures(), grown.figures(), load_s, table_mb)
    finally:
        for server in servers:
            server.terminate()
            server.wait(timeout=30)
        for name in names:
            db.drop_database(server_url, name)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.growth", description=__doc__)
    parser.add_argument("--events", type=int, default=EVENTS, help="events to bulk-load")
    parser.add_argument("--games", type=int, default=3, help="games played on each database")
    parser.add_argument("--reads", type=int, default=20, help="reads of each game")
    args = parser.parse_args(argv)
    growth = run(db.database_url(), args.events, args.games, args.reads)
    print("\n".join(growth.lines()))


if __name__ == "__main__":
    main()
