"""The benchmark's own measuring tools (bench/): what they read must be what happened."""

from __future__ import annotations

import subprocess
import sys

from bench import ceiling, http_bench

PGBENCH_OUTPUT = """\
transaction type: insert.sql
number of clients: 32
latency average = 4.567 ms
initial connection time = 38.123 ms
tps = 6972.123456 (without initial connection time)
"""


def test_the_ceiling_is_the_tps_pgbench_reports() -> None:
    assert ceiling.parse_tps(PGBENCH_OUTPUT) == 6972.123456


def test_the_cpu_of_a_process_tree_counts_its_children() -> None:
    burn = "import time\nend = time.process_time() + 0.5\nwhile time.process_time() < end: pass"
    spawn = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {burn!r}])"
    parent = subprocess.Popen([sys.executable, "-c", spawn + "; input()"], stdin=subprocess.PIPE)
    try:
        used = 0.0
        for _ in range(200):  # until the child has burnt its half second
            used = http_bench.process_tree_cpu(parent.pid)
            if used >= 0.5:
                break
            subprocess.run([sys.executable, "-c", "import time; time.sleep(0.05)"], check=True)
        assert used >= 0.5
    finally:
        parent.communicate(b"\n", timeout=30)
