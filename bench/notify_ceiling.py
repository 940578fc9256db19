"""How many appends per second each way of hearing of them carries, side by side
(docs/scaling.md, "Where LISTEN/NOTIFY stopped scaling").

Until migration 0017 every append notified ``cardroom_events`` from a statement trigger at commit
(0003), and every server process kept one LISTEN connection; since, every process polls the log
with one reader (service/live/reader.py) and nothing is sent at commit. Here a scratch table shaped
like ``events`` for this (a ``position`` identity, ``tx xid8 DEFAULT pg_current_xact_id()`` and
the reader's index on ``(tx, position)``), ``pgbench`` inserting one row per transaction into it
(16 connections), in three shapes:

- ``notify``: the old statement trigger (one ``pg_notify`` per statement, its payload the
  trigger's clock) and ``--listeners`` processes LISTENing;
- ``reader``: no trigger, and as many processes each running the service's own ``Reader`` on
  the table (``CARDROOM_LIVE_INTERVAL``, default 0.05 s);
- ``plain``: no trigger, nobody following: the baseline (the same row into a table without
  triggers).

Each follower notes the delay from the row's clock (at insert) to its hearing of it. Per shape and
rate asked (``-R``; then unthrottled): the commits/s reached, the insert latency, the delay
p50/p99. The unthrottled commits/s of each shape over ``plain``'s, same run, is issue 40's first
measure (goal: the service's shape at least 0.7 of ``plain``).

    python -m bench.notify_ceiling --url postgresql://postgres@127.0.0.1:5432/postgres

``--synchronous-commit off`` shows what part of it is each commit's WAL flush. ``--patroni``
(root, Debian's patroni and etcd-server; under ``flock /work/patroni.lock`` where drills run)
measures on the HA drill's cluster instead (bench/patroni.py: three hosts in network namespaces,
one synchronous standby), pgbench and the followers connecting to the leader across the switch.
"""

from __future__ import annotations

import argparse
import multiprocessing
import re
import secrets
import subprocess
import tempfile
import time
from collections.abc import Hashable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

from bench.ceiling import THREADS, parse_tps, pgbench_path
from bench.cluster import percentile

CLIENTS = 16
RATES = (50, 100, 200, 400, 800, 1600)
SHAPES = ("notify", "reader")  # followed at each rate asked; unthrottled, "plain" too
TABLE = """
CREATE TABLE {t} (
    game int NOT NULL,
    at timestamptz NOT NULL DEFAULT clock_timestamp(),
    position bigint GENERATED ALWAYS AS IDENTITY,
    tx xid8 DEFAULT pg_current_xact_id()
);
CREATE INDEX ON {t} (tx, position) WHERE tx IS NOT NULL;
CREATE FUNCTION {t}_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('{t}', extract(epoch FROM clock_timestamp())::text);
    RETURN NULL;
END;
$$;
CREATE TRIGGER {t}_notify AFTER INSERT ON {t} FOR EACH STATEMENT EXECUTE FUNCTION {t}_notify();
"""


@dataclass
class Step:
    shape: str  # notify, reader or plain
    target: int | None  # commits/s asked of pgbench (None: as fast as it goes)
    reached: float = 0.0
    latency_ms: float = 0.0
    delay_p50_ms: float | None = None
    delay_p99_ms: float | None = None
    received: int = 0  # rows heard of, all followers


def listen(url: str, table: str, ready: Any, stop: Any, out: Any) -> None:
    """One LISTEN connection, as a worker's hub had: the delay of each notification (s)."""
    delays: list[float] = []
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"LISTEN {table}")
        ready.set()
        while not stop.is_set():
            for note in conn.notifies(timeout=0.2):
                delays.append(time.time() - float(note.payload))
    out.put(delays)


class _Ready:
    """The reader's listener: says when it follows; the delays are noted by the source."""

    def __init__(self, ready: Any) -> None:
        self._ready = ready

    def connected(self) -> None:
        self._ready.set()

    def lost(self) -> None:
        pass

    def missed(self) -> None:
        pass

    def woken(self, wakes: Mapping[Hashable, int | None]) -> None:
        pass


def read(url: str, table: str, ready: Any, stop: Any, out: Any) -> None:
    """One log reader, as a worker's hub has: the delay of each row (s)."""
    from service.live.reader import Reader, Source
    from service.settings import settings

    delays: list[float] = []

    def heard(row: tuple[Any, ...]) -> tuple[Hashable, int | None]:
        delays.append(time.time() - row[0].timestamp())
        return 0, None

    source = Source(table, "position", ("at",), heard)
    reader = Reader(lambda: url, [source], _Ready(ready), interval=settings().live_interval)
    reader.start()
    stop.wait()
    reader.stop()
    out.put(delays)


def pgbench(url: str, script: Path, seconds: int, rate: int | None) -> tuple[float, float]:
    command = [pgbench_path(), "-n", "-c", str(CLIENTS), "-j", str(THREADS), "-T", str(seconds)]
    command += ["-f", str(script), *(["-R", str(rate)] if rate else []), url]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    latency = re.search(r"^latency average = ([0-9.]+) ms", done.stdout, re.M)
    return parse_tps(done.stdout), float(latency.group(1)) if latency else 0.0


def step(url: str, table: str, script: Path, rate: int | None, shape: str, args: Any) -> Step:
    result = Step(shape, rate)
    context = multiprocessing.get_context("spawn")
    stop, out = context.Event(), context.Queue()
    follow = {"notify": listen, "reader": read}.get(shape)
    followers = []
    for _ in range(args.listeners if follow else 0):
        ready = context.Event()
        process = context.Process(target=follow, args=(url, table, ready, stop, out))
        process.start()
        ready.wait(30)
        followers.append(process)
    with psycopg.connect(url, autocommit=True) as conn:
        trigger = "ENABLE" if shape == "notify" else "DISABLE"
        conn.execute(f"ALTER TABLE {table} {trigger} TRIGGER USER")
    result.reached, result.latency_ms = pgbench(url, script, args.seconds, rate)
    time.sleep(0.5)  # the followers hear of the last rows
    stop.set()
    delays: list[float] = []
    for _ in followers:
        delays += out.get(timeout=60)
    for process in followers:
        process.join(30)
    result.received = len(delays)
    if delays:
        result.delay_p50_ms = round(percentile(delays, 0.5) * 1000, 2)  # type: ignore[operator]
        result.delay_p99_ms = round(percentile(delays, 0.99) * 1000, 2)  # type: ignore[operator]
    return result


def ceiling(steps: list[Step], shape: str) -> float:
    """The most commits/s of ``shape`` at any rate asked: where its commits saturate."""
    return max((s.reached for s in steps if s.shape == shape), default=0.0)


GOAL_SHARE = 0.7  # issue 40: the service's shape commits at least 0.7 of plain's rate
Goal = tuple[str, str, str, bool]  # what, measured, goal, met (as bench/run.py's)


@contextmanager
def scratch_table(url: str, synchronous_commit: str = "on") -> Iterator[tuple[str, Path]]:
    """A table shaped like ``events`` for this, and the pgbench script appending to it."""
    table = f"notify_bench_{secrets.token_hex(4)}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(TABLE.format(t=table))
    try:
        with tempfile.TemporaryDirectory() as tmp:
            script = Path(tmp) / "append.sql"
            setting = f"SET synchronous_commit = {synchronous_commit};\n"
            script.write_text(f"{setting}INSERT INTO {table} (game) VALUES (1);\n")
            yield table, script
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"DROP TABLE {table}; DROP FUNCTION {table}_notify()")


def bench(url: str, pairs: int = 2, followers: int = 6, seconds: int = 5) -> list[Goal]:
    """What `make bench` runs (issue 40's first row): unthrottled appends from 16 connections
    with ``followers`` processes reading the log, and the same rows into the same table with
    nobody following, alternated ``pairs`` times; the rates' ratio (``synchronous_commit=on``,
    the server's default)."""
    args = argparse.Namespace(listeners=followers, seconds=seconds)
    reader: list[Step] = []
    plain: list[Step] = []
    print(f"\nappends, {CLIENTS} connections, {followers} log readers / nobody following:")
    missed = 0  # rows some follower did not hear of
    with scratch_table(url) as (table, script):
        for _ in range(pairs):
            before = _rows(url, table)
            reader.append(step(url, table, script, None, "reader", args))
            missed += followers * (_rows(url, table) - before) - reader[-1].received
            plain.append(step(url, table, script, None, "plain", args))
            print(f"  {reader[-1].reached:,.0f} / {plain[-1].reached:,.0f} commits/s", flush=True)
    ratio = sum(s.reached for s in reader) / sum(s.reached for s in plain)
    print("  every follower heard of every row:", "yes" if missed == 0 else f"no, {missed} missed")
    what = f"append, {CLIENTS} conns / plain INSERT"
    return [(what, f"{ratio:.2f}x", f">= {GOAL_SHARE:g}x", ratio >= GOAL_SHARE and missed == 0)]


def _rows(url: str, table: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(f"SELECT count(*) FROM {table}").fetchone()
    return int(row[0]) if row else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--url", default="postgresql://postgres@127.0.0.1:5432/postgres")
    parser.add_argument(
        "--patroni",
        action="store_true",
        help="on the HA drill's Patroni cluster instead (root: 3 hosts in network namespaces,"
        " a synchronous standby); --url is not used",
    )
    parser.add_argument("--listeners", type=int, default=6, help="followers (processes)")
    parser.add_argument("--seconds", type=int, default=5, help="per rate")
    parser.add_argument("--rates", default=",".join(map(str, RATES)))
    parser.add_argument("--shapes", default=",".join(SHAPES), help="followed at each rate")
    parser.add_argument(
        "--synchronous-commit",
        default="on",
        choices=("on", "off"),
        help="off: commits do not wait for their WAL flush (shows what the flush costs)",
    )
    args = parser.parse_args()
    if not args.patroni:
        measure(args.url, args)
        return
    from bench.ha_net import Switch
    from bench.patroni import PatroniCluster

    with Switch(3) as switch, PatroniCluster(switch) as cluster:
        leader = cluster.wait_leader(90)
        print(f"Patroni: leader {leader.name}, {cluster.roles()}", flush=True)
        measure(leader.url("postgres"), args)


def measure(url: str, args: argparse.Namespace) -> None:
    """Every rate asked of every shape, then each unthrottled and ``plain``; the summary."""
    steps = []
    shapes = [s for s in args.shapes.split(",") if s]
    with scratch_table(url, args.synchronous_commit) as (table, script):
        for shape in shapes:
            for rate in [int(r) for r in args.rates.split(",") if r]:
                steps.append(step(url, table, script, rate, shape, args))
                print(steps[-1], flush=True)
        fast = {}
        for shape in (*shapes, "plain"):
            fast[shape] = step(url, table, script, None, shape, args)
            steps.append(fast[shape])
            print(steps[-1], flush=True)
    plain = fast["plain"].reached
    print(
        f"synchronous_commit={args.synchronous_commit}, {args.listeners} followers each;"
        " unthrottled, the same run: "
        + ", ".join(
            f"{s} {fast[s].reached:.0f} commits/s ({fast[s].reached / plain:.2f}x plain,"
            f" most at any rate {ceiling(steps, s):.0f}/s)"
            for s in shapes
        )
        + f", plain {plain:.0f}"
    )


if __name__ == "__main__":
    main()
