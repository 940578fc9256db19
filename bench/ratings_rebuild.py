"""A full rebuild of many rated games from their exports against ``cardroom audit`` of the same
exports (issue 37's last measure), at a scale HTTP play cannot reach in a bench run.

``python -m bench.ratings_rebuild [--games 100000] [--accounts 400] [--jobs 2] [--dir DIR]``

1. ``--games`` rated Sushi Go! games (gamewright) are played by the domain and the service's own
   bot driver (``service.autoplay.run``, what ``POST /games`` and every move run): two to five
   seats, sometimes one of them the greedy bot, the others accounts drawn from ``--accounts``,
   each account picking greedily or at random by its tier (as bench/ratings_league.py). Each
   game becomes the export the service would serve, built by the service's code: the rows with
   their hash chain (``event_sql.event_rows``, what ``EventStore.append`` inserts), the receipt
   signed when the game finishes (``signatures.row`` with the service's keyring, what the
   finishing append stores) and the JSON Lines of ``GET /games/{id}/export``
   (``routes.exports.export_text`` itself, over a read-only stand-in for the store that hands it
   those rows and that receipt). Only the clock is the bench's: game ``n`` finishes ``n``
   seconds after an epoch. Games are made in ``--jobs`` processes; each is decided by the seed
   and its number alone, so the files are the same whatever ``--jobs`` is.
2. In one run, one after the other, each a single process: ``cardroom ratings rebuild DIR``
   (every ``*.jsonl`` of the folder) and ``cardroom audit --keys KEYS FILE…`` of the same files
   with the service's public keys (in chunks of ``--chunk`` files a process: a command line
   cannot name 100,000 files; the chunks run one after the other, so both sides are one core).
   Measured: the wall time of each, and their ratio (goal: the rebuild at most 1.5 times the
   audit); their CPU time too (user + system of the processes), the steadier figure on a
   shared machine. Every audit chunk must pass (exit 0: every export verified, its signature
   included).
3. The rebuild's ratings against the ratings the service's own code gives the same games as
   they end (``domain.ratings.rated_game`` of each finished state, as service/store/ratings.py
   rates it, folded in finish order): every mu and sigma equal bit for bit, and as many of them.

The folder (``--dir``, default a fresh one under the system's temporary folder) is deleted at the
end unless ``--keep``. About 7 KB a game: 100,000 games are about 0.7 GB.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from flask import Flask

from domain import ratings
from domain.chain import GENESIS
from domain.decider import BotSeat, CreateGame, MakeMove, TakeSeat, Viewer, commitment
from domain.sushigo.greedy import greedy_pick
from domain.sushigo.randomplay import random_pick
from service import autoplay
from service import keys as service_keys
from service.http.json_provider import OrjsonProvider
from service.http.routes.exports import export_text
from service.play.loaded import Loaded, adapter_for
from service.store import signatures
from service.store.event_sql import event_rows
from service.store.event_types import StoredEvent

GOAL_RATIO = 1.5
GAME = "sushi-go"
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
TIERS = (1.0, 0.75, 0.5)  # an account's chance of a random pick, by tier (greedy costs more)
BATCH = 500  # games a worker makes per task


class Exported:
    """The read side ``export_text`` asks for (``games().records``, ``.final_signature``),
    over one game's rows as the store would hold them."""

    def __init__(self, records: list[StoredEvent], receipt: dict[str, Any]) -> None:
        self._records = records
        self._receipt = receipt

    def records(self, gid: uuid.UUID, after: int, upto: int, _: int) -> list[StoredEvent]:
        return [r for r in self._records if after < r.version <= upto]

    def final_signature(self, gid: uuid.UUID) -> dict[str, Any]:
        return self._receipt


def _app() -> Flask:
    """A bare Flask app with the service's JSON encoder, for ``export_text``'s context."""
    app = Flask(__name__)
    app.json = OrjsonProvider(app)
    return app


def game_id(seed: int, number: int) -> uuid.UUID:
    return uuid.UUID(int=random.Random(f"{seed}/{number}/id").getrandbits(128), version=4)


def account(seed: int, n: int) -> str:
    return str(uuid.UUID(int=random.Random(f"{seed}/account/{n}").getrandbits(128), version=4))


def play(seed: int, number: int, accounts: int) -> tuple[uuid.UUID, Any, list[Any], bytes]:
    """Game ``number``: its id, final state, events (in order) and seed."""
    rng = random.Random(f"{seed}/{number}")
    gid = game_id(seed, number)
    adapter = adapter_for(GAME)
    players = rng.randint(2, 5)
    bots = (BotSeat(players - 1, "greedy", "greedy bot"),) if rng.random() < 0.3 else ()
    people = rng.sample(range(accounts), players - len(bots))
    secret = rng.randbytes(32)
    commands: list[Any] = [
        CreateGame({"players": players}, commitment(secret), secret, bots, rated=True),
        *(TakeSeat(f"p{n}", secret, account(seed, n)) for n in people),
    ]
    outcome = autoplay.run(adapter, adapter.game.initial_state(), secret, commands)
    events, state = list(outcome.events), outcome.state
    tier = {seat: people[seat] % len(TIERS) for seat in range(len(people))}
    while not state.over:
        seat = autoplay.awaiting(adapter.game, state)[0]
        if rng.random() < TIERS[tier[seat]]:
            pick = random_pick(state, seat, rng)
        else:
            pick = greedy_pick(state, seat)
        outcome = autoplay.run(adapter, state, secret, [MakeMove(seat, pick, secret)])
        events += outcome.events
        state = outcome.state
    return gid, state, events, secret


def export(
    app: Flask,
    ring: service_keys.Keyring,
    number: int,
    gid: uuid.UUID,
    state: Any,
    events: list[Any],
) -> str:
    """The game's export as ``GET /games/{id}/export`` serves it."""
    finished = EPOCH + timedelta(seconds=number)
    rows = event_rows(gid, 1, GENESIS, events)
    records = [
        StoredEvent(
            version,
            kind,
            schema,
            data.obj,
            finished - timedelta(milliseconds=len(rows) - version),
            version,
            digest,
        )
        for _, version, kind, schema, data, digest in rows
    ]
    last = rows[-1]
    signed = signatures.row(ring.receipt, gid, last[1], last[-1], events[-1].data)
    with app.app_context() as context:
        context.app.extensions["cardroom"] = Exported(records, signed[3].obj)
        return export_text(Loaded(gid, adapter_for(GAME), state), Viewer())


def make(task: tuple[str, int, int, int, int]) -> list[ratings.RatedGame]:
    """Games ``first`` to ``last - 1`` written to ``folder``; their rated games, as the
    service's rating of each finish sees them."""
    folder, seed, first, last, accounts = task
    app, ring = _app(), service_keys.load()
    rated = []
    for number in range(first, last):
        gid, state, events, _ = play(seed, number, accounts)
        text = export(app, ring, number, gid, state, events)
        Path(folder, f"g{number:07d}.jsonl").write_text(text, encoding="utf-8")
        finished = EPOCH + timedelta(seconds=number)
        game = ratings.rated_game(GAME, str(gid), state, finished)
        assert game is not None, f"game {number} was not rated"
        rated.append(game)
    return rated


def generate(folder: Path, games: int, accounts: int, jobs: int, seed: int) -> ratings.Ledger:
    """Every game's export in ``folder``; the ledger of the service's ratings of them."""
    tasks = [
        (str(folder), seed, first, min(first + BATCH, games), accounts)
        for first in range(0, games, BATCH)
    ]
    rated: list[ratings.RatedGame] = []
    with ProcessPoolExecutor(jobs) as pool:
        for done, part in enumerate(pool.map(make, tasks), start=1):
            rated += part
            if done % 20 == 0:
                print(f"  {len(rated)} games written", file=sys.stderr, flush=True)
    return ratings.fold(rated)


def cardroom(*args: str, cwd: Path | None = None, out: Any = subprocess.DEVNULL) -> int:
    """``cardroom ARGS`` as a process of this Python (this checkout's code)."""
    command = [sys.executable, "-m", "service.cli.main", *args]
    return subprocess.run(command, cwd=cwd, stdout=out, stderr=subprocess.DEVNULL).returncode


def children_cpu() -> float:
    """CPU seconds (user + system) of this process's finished children so far."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def timed_rebuild(folder: Path, output: Path) -> tuple[float, float, int]:
    """The rebuild's wall time, its CPU time, and its exit code."""
    started, cpu = time.perf_counter(), children_cpu()
    with output.open("w") as out:
        code = cardroom("ratings", "rebuild", str(folder), out=out)
    return time.perf_counter() - started, children_cpu() - cpu, code


def chunks(items: Sequence[str], size: int) -> Iterator[Sequence[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def timed_audit(folder: Path, keys: Path, chunk: int) -> tuple[float, float, int]:
    """The audit's wall time, its CPU time, and how many chunks failed (0: every export
    verified)."""
    names = sorted(p.name for p in folder.glob("*.jsonl"))
    failed = 0
    started, cpu = time.perf_counter(), children_cpu()
    for part in chunks(names, chunk):
        failed += cardroom("audit", "--keys", str(keys), *part, cwd=folder) != 0
    return time.perf_counter() - started, children_cpu() - cpu, failed


def same(a: float, b: float) -> bool:
    return struct.pack("<d", a) == struct.pack("<d", b)


def compare(expected: ratings.Ledger, output: Path) -> tuple[int, int]:
    """(ratings the rebuild printed equal bit for bit to the service's, the service's count)."""
    equal = 0
    for line in output.read_text().splitlines():
        got = json.loads(line)
        held = expected.ratings.get((got["pool"], got["account_id"]))
        if held is not None and same(held.mu, got["mu"]) and same(held.sigma, got["sigma"]):
            equal += held.games == got["games"]
    return equal, len(expected.ratings)


def measure(folder: Path, games: int, accounts: int, jobs: int, chunk: int) -> dict[str, Any]:
    started = time.perf_counter()
    expected = generate(folder, games, accounts, jobs, seed=37)
    made_s = time.perf_counter() - started
    size = sum(p.stat().st_size for p in folder.glob("*.jsonl"))
    keys = folder / "keys.json"  # the public JWK Set, as `cardroom keys` prints it
    keys.write_text(json.dumps(service_keys.load().jwks()))
    output = folder / "rebuilt.jsonl.out"
    rebuild_s, rebuild_cpu, rebuild_code = timed_rebuild(folder, output)
    audit_s, audit_cpu, failed = timed_audit(folder, keys, chunk)
    equal, held = compare(expected, output)
    return {
        "made_s": made_s,
        "bytes": size,
        "rebuild_s": rebuild_s,
        "rebuild_cpu": rebuild_cpu,
        "rebuild_code": rebuild_code,
        "audit_s": audit_s,
        "audit_cpu": audit_cpu,
        "failed_chunks": failed,
        "equal": equal,
        "ratings": held,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.ratings_rebuild", description=__doc__)
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--accounts", type=int, default=400)
    parser.add_argument("--jobs", type=int, default=2, help="processes making the games")
    parser.add_argument("--chunk", type=int, default=10_000, help="files per audit process")
    parser.add_argument("--dir", type=Path, help="where the exports go (default: a new folder)")
    parser.add_argument("--keep", action="store_true", help="keep the exports")
    args = parser.parse_args(argv)
    from bench.account_history import ensure_keys

    ensure_keys()
    folder = args.dir or Path(tempfile.mkdtemp(prefix="cardroom-rebuild-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        r = measure(folder, args.games, args.accounts, args.jobs, args.chunk)
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
    ratio = r["rebuild_s"] / r["audit_s"]
    print(
        f"{args.games} rated games played and exported in {r['made_s']:.0f} s ({args.jobs} jobs,"
        f" {r['bytes'] / 1e6:.0f} MB of exports)"
    )
    print(
        f"cardroom ratings rebuild of all of them: {r['rebuild_s']:.1f} s (exit"
        f" {r['rebuild_code']}); cardroom audit --keys of the same files: {r['audit_s']:.1f} s"
        f" ({r['failed_chunks']} of {-(-args.games // args.chunk)} chunks failed); both one"
        f" process at a time: ratio {ratio:.3f} (goal <= {GOAL_RATIO})"
    )
    print(
        f"CPU time (user + system): rebuild {r['rebuild_cpu']:.1f} s, audit"
        f" {r['audit_cpu']:.1f} s: ratio {r['rebuild_cpu'] / r['audit_cpu']:.3f}"
    )
    print(
        f"{r['equal']} of {r['ratings']} ratings the service's code gave these games rebuilt"
        " bit for bit (mu, sigma and games)"
    )
    ok = r["rebuild_code"] == 0 and r["failed_chunks"] == 0 and r["equal"] == r["ratings"]
    return 0 if ok and ratio <= GOAL_RATIO else 1


if __name__ == "__main__":
    sys.exit(main())
