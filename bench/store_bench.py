"""How fast the store writes, next to the floor PostgreSQL itself sets.

Two loops against one database, one operation at a time:
- ``insert_commit``: a bare single-row INSERT + COMMIT into a scratch table (in a temporary schema
  the benchmark creates and drops) -- the cost of one durable write on this server;
- ``store_append``: ``EventStore.append`` of one event to one game, through the pool.
The gap between the two is what the store adds (pool checkout, trigger, constraint checks).
``store_append`` writes real events (they cannot be deleted): point it at a scratch database.
"""

from __future__ import annotations

import secrets
import statistics
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

import psycopg
from psycopg import sql

from domain.decider import GAME_CREATED, Event
from service.store.db import make_pool
from service.store.events import EventStore


@dataclass(frozen=True)
class Result:
    name: str
    ops: int
    p50_ms: float
    p99_ms: float
    ops_per_s: float

    def __str__(self) -> str:
        return (
            f"{self.name:<14} {self.ops:>6} ops  p50 {self.p50_ms:7.3f} ms  "
            f"p99 {self.p99_ms:7.3f} ms  {self.ops_per_s:9.1f} ops/s"
        )


def measure(name: str, op: Callable[[int], object], ops: int, warmup: int = 20) -> Result:
    for i in range(warmup):
        op(-1 - i)
    latencies: list[float] = []
    started = time.perf_counter()
    for i in range(ops):
        t0 = time.perf_counter()
        op(i)
        latencies.append(time.perf_counter() - t0)
    elapsed = time.perf_counter() - started
    cuts = statistics.quantiles(latencies, n=100, method="inclusive")
    return Result(name, ops, cuts[49] * 1e3, cuts[98] * 1e3, ops / elapsed)


def bench_insert_commit(url: str, ops: int) -> Result:
    schema = sql.Identifier(f"bench_{secrets.token_hex(4)}")
    with psycopg.connect(url) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(schema))
        conn.execute(
            sql.SQL(
                "CREATE TABLE {}.scratch (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
                " n int NOT NULL, data jsonb NOT NULL)"
            ).format(schema)
        )
        conn.commit()
        insert = sql.SQL("INSERT INTO {}.scratch (n, data) VALUES (%s, %s)").format(schema)
        try:

            def op(i: int) -> None:
                conn.execute(insert, (i, psycopg.types.json.Jsonb({"n": i})))
                conn.commit()

            return measure("insert_commit", op, ops)
        finally:
            conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(schema))
            conn.commit()


def bench_store_append(url: str, ops: int) -> Result:
    with make_pool(url, max_size=2) as pool:
        store = EventStore(pool)
        game_id = uuid.uuid4()
        version = store.create_game(game_id, "bench", b"bench", [Event(GAME_CREATED, {})])

        def op(i: int) -> None:
            nonlocal version
            version = store.append(game_id, version, [Event("bench", {"n": i})])

        return measure("store_append", op, ops)


def run(url: str, ops: int = 1000) -> list[Result]:
    """Both loops against ``url`` (a migrated, scratch database)."""
    return [bench_insert_commit(url, ops), bench_store_append(url, ops)]
