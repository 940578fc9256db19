"""Does a pick (and reading a game) slow down as the event log grows?

``python -m bench.growth [--events N] [--games G] [--reads R]``

On a fresh database (created for the run on the server ``DATABASE_URL`` names, else the embedded
one, and dropped after): one client plays ``G`` complete 4-player games over HTTP (pick p50),
then reads each finished game ``R`` times (``GET /games/{id}`` and ``GET /games/{id}/events``,
p50). Then ``N`` events are bulk-loaded with one ``INSERT … SELECT`` of copies of one of those
finished games (every row through the table's triggers and indexes, as an append), the table is
vacuumed and analysed (what autovacuum does after a bulk insert; measuring while it runs would
measure it) and checkpointed, and the same is measured again with the same server. Goal: every
p50 within ±10 % of its fresh value.

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


def measure(url: str, base: str, games: int, reads: int) -> tuple[Figures, str]:
    """Pick and read p50s from one client; also the path of one finished game."""
    client = http_bench.Client(base)
    picks: list[float] = []
    paths: list[str] = []
    for _ in range(games):
        latencies, _, errors, path = http_bench.play_game(client, with_path=True)
        if errors:
            raise RuntimeError(f"{errors} picks failed")
        picks += latencies
        paths.append(path)
    gets = [_timed(client, path) for _ in range(reads) for path in paths]
    pages = [_timed(client, f"{path}/events") for _ in range(reads) for path in paths]
    client.conn.close()
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT count(*) FROM events").fetchone()[0]  # type: ignore[index]
    median = statistics.median
    figures = Figures(rows, median(picks) * 1e3, median(gets) * 1e3, median(pages) * 1e3)
    return figures, paths[-1]


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
    name = f"cardroom_growth_{secrets.token_hex(4)}"
    url = db.ensure_database(server_url, name)
    try:
        db.migrate(url)
        port = http_bench.free_port()
        server = http_bench.start_server(url, port, workers or 3, 4)
        base = f"http://127.0.0.1:{port}"
        try:
            http_bench.play_game(http_bench.Client(base))  # warm-up: imports, pools, caches
            fresh, path = measure(url, base, games, reads)
            started = time.perf_counter()
            table_mb = bulk_load(url, path, events)
            load_s = time.perf_counter() - started
            grown, _ = measure(url, base, games, reads)
        finally:
            server.terminate()
            server.wait(timeout=30)
        return Growth(fresh, grown, load_s, table_mb)
    finally:
        db.drop_database(server_url, name)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.growth", description=__doc__)
    parser.add_argument("--events", type=int, default=EVENTS, help="events to bulk-load")
    parser.add_argument("--games", type=int, default=3, help="games played per measurement")
    parser.add_argument("--reads", type=int, default=20, help="reads of each game per measurement")
    args = parser.parse_args(argv)
    growth = run(db.database_url(), args.events, args.games, args.reads)
    print("\n".join(growth.lines()))


if __name__ == "__main__":
    main()
