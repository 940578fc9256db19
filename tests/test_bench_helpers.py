"""The benchmark's own measuring tools (bench/): what they read must be what happened."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from bench import ceiling, cpu_shares, http_bench, streams

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


SITE = "/venv/lib/python3.11/site-packages"
LIMITER_WRAPPER = (f"{SITE}/flask_limiter/_limits.py", "__inner")
MOVE = ("/app/service/http/routes/moves.py", "make_move")
AROUND = [
    (f"{SITE}/flask/app.py", "dispatch_request"),
    (f"{SITE}/gunicorn/workers/base_async.py", "handle_request"),
]


def test_a_sample_is_charged_to_the_innermost_feature_on_its_stack() -> None:
    in_the_append = (
        (f"{SITE}/psycopg/cursor.py", "execute"),
        ("/app/service/play/commands.py", "move"),
        MOVE,
        LIMITER_WRAPPER,
        *AROUND,
    )
    in_the_limiter = ((f"{SITE}/werkzeug/local.py", "__get__"), LIMITER_WRAPPER, *AROUND)
    in_the_route = (("/app/service/http/auth.py", "require_token"), MOVE, LIMITER_WRAPPER)
    assert cpu_shares.feature(in_the_append) == cpu_shares.DATABASE
    assert cpu_shares.feature(in_the_limiter) == cpu_shares.LIMITER
    assert cpu_shares.feature(in_the_route) == cpu_shares.OWN
    assert cpu_shares.part(in_the_append) == "pick (its view)"
    assert cpu_shares.part(in_the_limiter).startswith("around the views")
    text = cpu_shares.shares([(in_the_append, 3), (in_the_limiter, 1)], top=2)
    assert "75.0%  database" in text and "25.0%  rate limiter" in text


def test_the_collections_recorded_by_the_servers_workers_are_summed_per_generation(
    tmp_path: Path,
) -> None:
    """bench/streams.py's sitecustomize records each collection a worker makes; the summary
    counts those of the phase per generation, with their CPU, longest pause and most walked."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(streams.GC_SITE)
    # the child makes only the collections it asks for
    child = "import gc, os\nif os.fork() == 0:\n    gc.disable()\n"
    child += "    gc.collect(0); gc.collect(0); gc.collect(1)\n"
    child += "    os._exit(0)\nos.wait()\n"
    env = {**os.environ, "PYTHONPATH": str(site), "CARDROOM_BENCH_GC": str(site)}
    started = time.time()
    subprocess.run([sys.executable, "-c", child], env=env, check=True, timeout=60)
    summary = streams.collections_during(site, started, time.time()).split("; ")
    assert summary[0].startswith("gen 0: 2, ") and summary[1].startswith("gen 1: 1, ")
    assert summary[2].startswith("gen 2: 0, ")
    walked = int(summary[1].split(", ")[-1].removesuffix(" objects").replace(",", ""))
    assert walked > 0
