"""Where the server's CPU per pick goes, in shares: bench.http_bench's load, sampled.

``python -m bench.cpu_shares [--clients 32] [--games 1] [--top 30]`` creates a scratch database
on the server ``DATABASE_URL`` names (else the embedded one) and runs bench.http_bench against
``cardroom serve`` (its defaults) while each worker samples itself: a ``SIGPROF`` timer on the
process's CPU time records the Python stack running when it fires (a sitecustomize of the
server's alone, as bench.streams' ``--profile``; no hook in the service). Unlike cProfile it
costs little and charges no per-call overhead, and under gevent it sees the greenlet that runs,
not the ones waiting. The kernel fires it at most once a tick (about 100-250 a second), and C
code is charged to the Python function that called it.

It prints the workers' samples by request part (the route's view, what Flask, Werkzeug and the
hooks do around it, gunicorn's reading of the request), then by feature (a sample goes to the
feature of its innermost frame that has one: the rate limiter, the access log, the database,
...; the rest to the package of its innermost frame), then the functions most often on the
stack.
"""

from __future__ import annotations

import argparse
import collections
import marshal
import os
import re
import secrets
import tempfile
from collections.abc import Iterable
from pathlib import Path

from bench import http_bench
from service.store import db

SAMPLER_SITE = """
import atexit, collections, marshal, os, signal
def _sample():
    counts = collections.Counter()
    def take(signum, frame):
        stack = []
        while frame is not None:
            stack.append((frame.f_code.co_filename, frame.f_code.co_name))
            frame = frame.f_back
        counts[tuple(stack)] += 1
    signal.signal(signal.SIGPROF, take)
    signal.setitimer(signal.ITIMER_PROF, 0.001, 0.001)
    def dump():
        signal.setitimer(signal.ITIMER_PROF, 0, 0)
        path = os.path.join(os.environ["CARDROOM_BENCH_SAMPLES"], f"worker-{os.getpid()}.samples")
        with open(path, "wb") as out:
            marshal.dump(list(counts.items()), out)
    atexit.register(dump)
os.register_at_fork(after_in_child=_sample)
"""

Frame = tuple[str, str]  # file, function
Stack = tuple[Frame, ...]  # innermost first

VIEWS = {"make_move": "pick (its view)", "get_game": "GET /games/{id} (its view)"}
# What a sample is charged to: the first of its frames, innermost first, that one of these
# matches (name, a part of the frame's file path, its function or None for any).
LIMITER = "rate limiter (Flask-Limiter, limits)"
DATABASE = "database (psycopg, pool, waiting under gevent)"
ANSWER = "the view answered (domain view, dump, JSON)"
WRITE = "gunicorn: write the response"
OWN = "the route's own code (token, load, idempotency)"
FEATURES: list[tuple[str, str, str | None]] = [
    (LIMITER, "/flask_limiter/", None),
    (LIMITER, "/limits/", None),
    ("access log line", "/service/http/observe.py", "_log_access"),
    ("metrics (prometheus_client)", "/prometheus_client/", None),
    (DATABASE, "/psycopg/", None),
    (DATABASE, "/psycopg_pool/", None),
    ("receipt (Ed25519 signature, canonical JSON)", "/service/keys.py", "receipt"),
    ("move body (marshmallow load)", "/service/http/routes/moves.py", "move_body"),
    (ANSWER, "/service/http/routes/common.py", "view_body"),
    (ANSWER, "/service/http/routes/common.py", "json_response"),
    ("decide, hash chain, append rows", "/service/play/commands.py", "move"),
    (OWN, "/service/http/routes/moves.py", "make_move"),
    (OWN, "/service/http/routes/views.py", "get_game"),
    (WRITE, "/service/http/worker.py", "write"),
    (WRITE, "/gunicorn/http/wsgi.py", None),
    ("gunicorn: read and parse the request", "/gunicorn/http/", None),
    ("request hooks (service/http/observe)", "/service/http/observe.py", None),
]


def package(filename: str) -> str:
    if found := re.search(r"site-packages/([^/]+)", filename):
        return found.group(1)
    for root in ("service", "domain", "bench"):
        if f"/{root}/" in filename:
            return root + "/" + filename.split(f"/{root}/", 1)[1].removesuffix(".py")
    return "stdlib " + filename.rsplit("/", 1)[-1]


def part(stack: Stack) -> str:
    names = [function for _, function in stack]
    for function in names:
        if function in VIEWS:
            return VIEWS[function]
    if "handle_request" in names:
        return "around the views (Flask, Werkzeug, hooks, limiter, log)"
    if "handle" in names:
        return "gunicorn: read and parse the request, keep-alive"
    return "not in a request (threads, timers, start)"


def feature(stack: Stack) -> str:
    for file, function in stack:
        for name, place, wanted in FEATURES:
            if place in file and (wanted is None or function == wanted):
                return name
    innermost = package(stack[0][0])
    return "other: " + ("the standard library" if innermost.startswith("stdlib") else innermost)


def shares(samples: Iterable[tuple[Stack, int]], top: int) -> str:
    samples = list(samples)
    total = sum(count for _, count in samples)
    lines = [f"{total} samples of the workers' CPU"]
    for title, key in (("by request part", part), ("by feature", feature)):
        counter: collections.Counter[str] = collections.Counter()
        for stack, count in samples:
            counter[key(stack)] += count
        lines.append(f"\n{title}:")
        shown = [(what, n) for what, n in counter.most_common() if n / total >= 0.005]
        lines += [f"  {n / total:6.1%}  {what}" for what, n in shown]
        rest = total - sum(n for _, n in shown)
        lines.append(f"  {rest / total:6.1%}  (each of the rest below 0.5 %)")
    on_stack: collections.Counter[str] = collections.Counter()
    for stack, count in samples:
        for name in {f"{package(file)}:{function}" for file, function in stack}:
            on_stack[name] += count
    lines.append(f"\nfunctions most often on the stack (top {top}):")
    lines += [f"  {n / total:6.1%}  {name}" for name, n in on_stack.most_common(top)]
    return "\n".join(lines)


def load(folder: Path) -> list[tuple[Stack, int]]:
    found: list[tuple[Stack, int]] = []
    for path in folder.glob("worker-*.samples"):
        found += marshal.loads(path.read_bytes())
    return found


def run(clients: int, games: int) -> tuple[http_bench.HttpResult, list[tuple[Stack, int]]]:
    admin = db.database_url()
    name = f"cardroom_bench_{secrets.token_hex(4)}"
    url = db.ensure_database(admin, name)
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "sitecustomize.py").write_text(SAMPLER_SITE)
        saved = {key: os.environ.get(key) for key in ("PYTHONPATH", "CARDROOM_BENCH_SAMPLES")}
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [folder, saved["PYTHONPATH"]]))
        os.environ["CARDROOM_BENCH_SAMPLES"] = folder
        try:
            db.migrate(url)
            result = http_bench.run(url, clients=clients, games_per_client=games)
            return result, load(Path(folder))
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
            db.drop_database(admin, name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--games", type=int, default=1, help="games per client")
    parser.add_argument("--top", type=int, default=30)
    args = parser.parse_args()
    result, samples = run(args.clients, args.games)
    print(result)
    print(shares(samples, args.top))


if __name__ == "__main__":
    main()
