"""How fast the store writes, next to the floor PostgreSQL itself sets.

Loops against one database, one operation at a time, into a scratch table (in a temporary
schema the benchmark creates and drops):
- ``insert_autocommit``: the floor, one durable write as pgbench makes it: a single-row INSERT on
  a connection in autocommit mode (one statement, one round trip, committed by itself);
- ``insert_commit``: the same INSERT followed by COMMIT on a connection that is not in autocommit
  mode (BEGIN, INSERT, COMMIT: more round trips), for context only;
- ``store_append``: ``EventStore.append`` of one event to one game, through the pool.
The gap between the floor and ``store_append`` is what the store adds (pool checkout, trigger,
constraint checks).
``store_append`` writes real events (they cannot be deleted): point it at a scratch database.
"""

from __future__ import annotations

import secrets
import statistics
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import psycopg
from psycopg import sql
from psycopg.types.json import Jsonb

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
            f"{self.name:<17} {self.ops:>6} ops  p50 {self.p50_ms:7.3f} ms  "
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


SCRATCH_TABLE = (
    "CREATE TABLE {}.scratch (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
    " n int NOT NULL, data jsonb NOT NULL)"
)


@contextmanager
def scratch_table(url: str) -> Iterator[sql.Composable]:
    """A scratch table in a schema of its own, dropped afterwards; yields its qualified name."""
    schema = sql.Identifier(f"bench_{secrets.token_hex(4)}")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(schema))
        conn.execute(sql.SQL(SCRATCH_TABLE).format(schema))
        try:
            yield sql.SQL("{}.scratch").format(schema)
        finally:
            conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(schema))


def _insert_loop(url: str, ops: int, name: str, autocommit: bool) -> Result:
    with scratch_table(url) as table, psycopg.connect(url, autocommit=autocommit) as conn:
        insert = sql.SQL("INSERT INTO {} (n, data) VALUES (%s, %s)").format(table)

        def op(i: int) -> None:
            conn.execute(insert, (i, Jsonb({"n": i})))
            if not autocommit:
                conn.commit()

        return measure(name, op, ops)


def bench_insert_autocommit(url: str, ops: int) -> Result:
    """The floor: one statement, one round trip, committed by itself."""
    return _insert_loop(url, ops, "insert_autocommit", autocommit=True)


def bench_insert_commit(url: str, ops: int) -> Result:
    """BEGIN, INSERT, COMMIT (psycopg's default transaction mode): for context only."""
    return _insert_loop(url, ops, "insert_commit", autocommit=False)


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
    """Every loop against ``url`` (a migrated, scratch database); the floor first."""
    return [
        bench_insert_autocommit(url, ops),
        bench_insert_commit(url, ops),
        bench_store_append(url, ops),
    ]
