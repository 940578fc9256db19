"""`make bench`: every benchmark, side by side, against one scratch database made for the run.

The server is the one ``DATABASE_URL`` names, else the embedded PostgreSQL (as for `serve`).
In order: the domain (simulation and fold, no database); the store's floor (a bare single-row
INSERT + COMMIT) next to ``EventStore.append``; HTTP picks under gunicorn, first with one client
(latency with nothing queued) and then with 32 concurrent clients (throughput).
Environment: BENCH_OPS (operations per store loop, default 2000), BENCH_GAMES (games per HTTP
client, default 2).
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys

from bench import http_bench, store_bench
from service.store import db


def main() -> None:
    # In its own process: it pins itself to one core, which the HTTP benchmark must not inherit.
    subprocess.run([sys.executable, "-m", "bench.domain_bench"], check=True)
    print()
    server_url = db.database_url()
    name = f"cardroom_bench_{secrets.token_hex(4)}"
    url = db.ensure_database(server_url, name)
    try:
        db.migrate(url)
        results = store_bench.run(url, int(os.environ.get("BENCH_OPS", "2000")))
        for result in results:
            print(result)
        games = int(os.environ.get("BENCH_GAMES", "2"))
        alone = http_bench.run(url, clients=1, games_per_client=games)
        print(alone)
        loaded = http_bench.run(url, clients=32, games_per_client=games)
        print(loaded)
        insert = next(r for r in results if r.name == "insert_commit")
        print(
            f"\npick p50 with 1 client: {alone.p50_ms / insert.p50_ms:.1f}x the bare insert's p50"
            f" (goal <= 2x); with 32 clients: {loaded.picks_per_s:.0f} picks/s"
            " (goal >= 1,000)"
        )
    finally:
        db.drop_database(server_url, name)


if __name__ == "__main__":
    main()
