"""psycopg's waits on gevent's event loop (service/store/waits.py, issue 40 goal 3): a statement
that waits in one greenlet lets the others run, as gevent's ``select.poll`` did, and every
kind of wait (an answer, a statement larger than the socket's buffer) ends. In a process of its
own: the tests' process is not monkey-patched."""

from __future__ import annotations

import json
import subprocess
import sys

from patience import scaled

SCRIPT = """
from gevent import monkey

monkey.patch_all()
import json, sys

import gevent
import psycopg
from psycopg import waiting

from service.store import db, waits

url, timeout_ms = sys.argv[1], int(sys.argv[2])
order = []


def connect():
    options = f"-c statement_timeout={timeout_ms}"
    return psycopg.connect(url, autocommit=True, options=options)


holder, waiter, other = connect(), connect(), connect()
holder.execute("SELECT pg_advisory_lock(4040)")


def slow():  # waits for the lock the holder keeps until the other greenlet is done
    try:
        waiter.execute("SELECT pg_advisory_lock(4040)")
        order.append("slow")
    except psycopg.errors.QueryCanceled:
        order.append("slow cancelled at its statement_timeout")


def quick():
    for _ in range(20):
        other.execute("SELECT 1").fetchone()
    order.append("other")
    holder.execute("SELECT pg_advisory_unlock(4040)")


first = gevent.spawn(slow)
gevent.sleep(0)  # the slow one sends its statement and waits first
gevent.joinall([first, gevent.spawn(quick)])
big = "x" * (16 << 20)  # far more than a socket's buffer: waits to write, and to read or write
length = other.execute("SELECT length(%s)", (big,)).fetchone()[0]
print(json.dumps({"installed": waiting.wait is waits.wait, "order": order, "length": length}))
"""


def run_script(database_url: str) -> dict[str, object]:
    timeout_ms = int(scaled(5.0) * 1000)
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, database_url, str(timeout_ms)],
        capture_output=True,
        text=True,
        timeout=scaled(60.0),
        check=True,
    )
    answer: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return answer


def test_a_waiting_statement_lets_other_greenlets_run(database_url: str) -> None:
    answer = run_script(database_url)
    assert answer["installed"] is True
    # Under a wait that blocks the worker (psycopg's C wait), the slow statement holds every
    # greenlet until its statement_timeout: the order would be the other way round.
    assert answer["order"] == ["other", "slow"]
    assert answer["length"] == 16 << 20
