"""How long after an append's commit its waiter wakes: the live hub and its log reader
(service/live/reader.py), polling every ``CARDROOM_LIVE_INTERVAL`` (default 0.05 s).

A fresh database on the server of ``--url``, migrated; one hub; ``--appends`` appends to one game,
each from its own autocommit statement while a thread waits on the hub past the version before.
Each append comes a random while after the last (so its commit falls anywhere between two
polls), and the wake-up's delay is measured from the moment its COMMIT was acknowledged to the
appender (a poll between the commit becoming visible and the acknowledgement arriving may wake
it a little before: a delay near 0 or just below). p50 and p99 are printed with the interval.

    python -m bench.live_latency --url postgresql://postgres@127.0.0.1:5432/postgres
"""

from __future__ import annotations

import argparse
import random
import secrets
import threading
import time
import uuid

import psycopg

from bench.cluster import percentile
from service.live.hub import Hub
from service.settings import settings
from service.store.db import drop_database, ensure_database, migrate

APPEND = (
    "INSERT INTO events (game_id, version, type, schema_version, data, hash)"
    " VALUES (%s, %s, 'bench', 1, '{}', repeat('0', 64))"
)


def wake(hub: Hub, game: uuid.UUID, after: int, woken: list[float]) -> None:
    if hub.wait(game, after, 5.0):
        woken.append(time.monotonic())


def measure(url: str, appends: int, interval: float) -> list[float]:
    hub = Hub(lambda: url, name="cardroom-live-bench", interval=interval)
    delays: list[float] = []
    try:
        assert hub.start(), "the hub's reader could not connect"
        with psycopg.connect(url, autocommit=True) as conn:
            game = uuid.uuid4()
            conn.execute("INSERT INTO games (id, game) VALUES (%s, 'bench')", (game,))
            for version in range(1, appends + 1):
                woken: list[float] = []
                waiter = threading.Thread(target=wake, args=(hub, game, version - 1, woken))
                waiter.start()
                time.sleep(random.uniform(interval, 3 * interval))  # any phase of the polls
                conn.execute(APPEND, (game, version))
                committed = time.monotonic()
                waiter.join()
                if woken:
                    delays.append(woken[0] - committed)
    finally:
        hub.stop()
    return delays


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--url", default="postgresql://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--appends", type=int, default=300)
    parser.add_argument("--interval", type=float, default=settings().live_interval)
    args = parser.parse_args()
    name = f"cardroom_live_bench_{secrets.token_hex(4)}"
    url = ensure_database(args.url, name)
    try:
        migrate(url)
        delays = measure(url, args.appends, args.interval)
    finally:
        drop_database(args.url, name)
    p50, p99 = (1000 * percentile(delays, q) for q in (0.5, 0.99))  # type: ignore[operator]
    print(
        f"live wake-up from commit, interval {args.interval * 1000:.0f} ms: p50 {p50:.1f} ms,"
        f" p99 {p99:.1f} ms, max {1000 * max(delays):.1f} ms ({len(delays)} of"
        f" {args.appends} appends woke their waiter)"
    )


if __name__ == "__main__":
    main()
