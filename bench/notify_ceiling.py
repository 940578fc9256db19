"""How many appends per second LISTEN/NOTIFY carries before its fan-out delay grows
(docs/scaling.md, "Where LISTEN/NOTIFY stops scaling").

Every append notifies ``cardroom_events`` from a statement trigger at commit (migration 0003), and
every server process keeps one LISTEN connection (service/live/hub.py). Here: a scratch table
with the same kind of trigger (one ``pg_notify`` per statement, its payload the trigger's clock),
``pgbench`` inserting into it at rising target rates (``-R``, 16 connections), and ``--listeners``
processes LISTENing, as the worker processes of the hosts would; each notes the delay from the
trigger to its receipt. Per rate: the commits/s reached, the insert latency, the delay p50/p99.
Side by side in the same run, the same unthrottled load with the trigger and without it (the
baseline: what the notification costs the commits).

    python -m bench.notify_ceiling --url postgresql://postgres@127.0.0.1:5432/postgres

The ceiling: where the commits that notify saturate (the rate asked is no longer reached, and
the delay jumps). ``--synchronous-commit off`` shows what part of it is each commit's WAL flush.
"""

from __future__ import annotations

import argparse
import multiprocessing
import re
import secrets
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import psycopg

from bench.ceiling import THREADS, parse_tps, pgbench_path
from bench.cluster import percentile

CLIENTS = 16
RATES = (50, 100, 200, 400, 800, 1600)
TRIGGER = """
CREATE TABLE {t} (game int NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp());
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
    target: int | None  # commits/s asked of pgbench (None: as fast as it goes)
    notify: bool
    reached: float = 0.0
    latency_ms: float = 0.0
    delay_p50_ms: float | None = None
    delay_p99_ms: float | None = None
    received: int = 0  # notifications received, all listeners


def listen(url: str, channel: str, ready: object, stop: object, out: object) -> None:
    """One LISTEN connection, as a worker's hub has: the delay of each notification (s)."""
    delays: list[float] = []
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"LISTEN {channel}")
        ready.set()  # type: ignore[attr-defined]
        while not stop.is_set():  # type: ignore[attr-defined]
            for note in conn.notifies(timeout=0.2):
                delays.append(time.time() - float(note.payload))
    out.put(delays)  # type: ignore[attr-defined]


def pgbench(url: str, script: Path, seconds: int, rate: int | None) -> tuple[float, float]:
    command = [pgbench_path(), "-n", "-c", str(CLIENTS), "-j", str(THREADS), "-T", str(seconds)]
    command += ["-f", str(script), *(["-R", str(rate)] if rate else []), url]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    latency = re.search(r"^latency average = ([0-9.]+) ms", done.stdout, re.M)
    return parse_tps(done.stdout), float(latency.group(1)) if latency else 0.0


def step(url: str, table: str, script: Path, rate: int | None, notify: bool, args: object) -> Step:
    result = Step(rate, notify)
    context = multiprocessing.get_context("spawn")
    stop, out = context.Event(), context.Queue()
    listeners = []
    for _ in range(args.listeners if notify else 0):  # type: ignore[attr-defined]
        ready = context.Event()
        process = context.Process(target=listen, args=(url, table, ready, stop, out))
        process.start()
        ready.wait(30)
        listeners.append(process)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"ALTER TABLE {table} {'ENABLE' if notify else 'DISABLE'} TRIGGER USER")
    result.reached, result.latency_ms = pgbench(url, script, args.seconds, rate)  # type: ignore[attr-defined]
    stop.set()
    delays: list[float] = []
    for _ in listeners:
        delays += out.get(timeout=60)
    for process in listeners:
        process.join(30)
    result.received = len(delays)
    if delays:
        result.delay_p50_ms = round(percentile(delays, 0.5) * 1000, 2)  # type: ignore[operator]
        result.delay_p99_ms = round(percentile(delays, 0.99) * 1000, 2)  # type: ignore[operator]
    return result


def ceiling(steps: list[Step]) -> float:
    """The most commits/s that notified, at any rate asked: where the commits saturate."""
    return max((s.reached for s in steps if s.notify), default=0.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--url", default="postgresql://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--listeners", type=int, default=6, help="LISTEN connections")
    parser.add_argument("--seconds", type=int, default=5, help="per rate")
    parser.add_argument("--rates", default=",".join(map(str, RATES)))
    parser.add_argument(
        "--synchronous-commit",
        default="on",
        choices=("on", "off"),
        help="off: commits do not wait for their WAL flush (shows what the flush costs)",
    )
    args = parser.parse_args()
    table = f"notify_bench_{secrets.token_hex(4)}"
    with psycopg.connect(args.url, autocommit=True) as conn:
        conn.execute(TRIGGER.format(t=table))
    steps = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            script = Path(tmp) / "append.sql"
            setting = f"SET synchronous_commit = {args.synchronous_commit};\n"
            script.write_text(f"{setting}INSERT INTO {table} (game) VALUES (1);\n")
            for rate in [int(r) for r in args.rates.split(",")]:
                steps.append(step(args.url, table, script, rate, True, args))
                print(steps[-1], flush=True)
            for notify in (True, False):
                steps.append(step(args.url, table, script, None, notify, args))
                print(steps[-1], flush=True)
    finally:
        with psycopg.connect(args.url, autocommit=True) as conn:
            conn.execute(f"DROP TABLE {table}; DROP FUNCTION {table}_notify()")
    fast_on, fast_off = steps[-2], steps[-1]
    print(
        f"synchronous_commit={args.synchronous_commit}, {args.listeners} listeners: commits with"
        f" NOTIFY saturate at {ceiling(steps):.0f}/s; unthrottled, the same run: "
        f" {fast_on.reached:.0f} commits/s with NOTIFY, {fast_off.reached:.0f} without"
    )


if __name__ == "__main__":
    main()
