"""A thousand open account streams (``GET /accounts/me/stream``, issue 35) on one ``cardroom
serve`` with its defaults.

Side by side in one run, on one server:

1. the pick load of bench/http_bench.py (32 clients playing whole anonymous 4-player games) with
   no account stream open, then with ``--streams`` open (one account each, each its own token),
   then again with none and with them open: the p99 ratio compares the two loads of each kind
   pooled (the machine's drift over the run falls on both sides of it), each pair's ratio too;
2. how soon a ``your_turn`` reaches its stream: ``--playing`` of those accounts each sit in a
   2-player Sushi Go! game against a greedy bot (joined with the account token), and ``--picks``
   picks by their seats, paced evenly over ``--spread`` seconds, each open the next turn at once
   (the bot picks in the same append); from the append (its first event's ``recorded_at``, the
   transaction's clock, before its commit) and from the pick's answer to the arrival of that
   turn's ``your_turn`` on the account's stream, p50/p99 with the reader's interval
   (``CARDROOM_LIVE_INTERVAL``);
3. the server's CPU (all workers, /proc), the database's committed transactions and ``/healthz``
   latency over ``--quiet`` seconds with nothing happening, first with no stream open, then with
   the streams open (heartbeats every 15 s; the difference is what idle streams cost), and the
   memory (PSS of master and workers) per open stream;
4. every stream counts the items it reads twice, by item id: on one connection (never allowed)
   and after a resumption with ``Last-Event-ID`` (the documented at-least-once re-send), and
   every pick's ``your_turn`` must arrive (missed ones are counted).

The streams live in ``--processes`` processes of their own (bench/crowd.py's account-stream
watchers: asyncio protocols on raw sockets), on loopback source addresses 127.77.x.y (20 per
address: the server's per-address cap, 32, stays in force). Everything is bounded in count and
time (``--deadline``); all traffic is to 127.0.0.1.

    python -m bench.account_streams                          # embedded PostgreSQL, temp dir
    python -m bench.account_streams --url postgresql://...   # a migrated scratch database
"""

from __future__ import annotations

import argparse
import asyncio
import math
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import http_bench
from bench.crowd import Crowds, Spec
from bench.streams import (
    PICK_CLIENTS,
    Api,
    Game,
    Phase,
    database,
    healthz_while,
    log,
    measure_phase,
    percentile,
    pick,
    pooled,
    raise_open_files_limit,
    recorded_at,
    server_pss_kb,
    source_address,
    start_server,
    tear_down,
    transactions,
    turn_of,
    wait_open,
)
from service.settings import settings

PICK_CONNECTIONS = 8  # the bench's own connections sending the paced picks
ARRIVAL_SECONDS = 10.0  # how long the last your_turn may take before it counts as missed
ROUND_PICKS = 10  # a 2-player game's picks per round (a hand of 10): 3 rounds, then it ends


@dataclass
class Options:
    streams: int = 1_000
    playing: int = 100  # of the accounts, those seated in a game against a bot
    picks: int = 300
    spread: float = 30.0  # seconds over which the picks go out
    quiet: float = 30.0
    pick_clients: int = PICK_CLIENTS
    processes: int = 4
    worker_class: str = "gevent"
    pairs: int = 2  # pick loads without and with the streams (2: without, with, without, with)
    settle: float = 11.0  # seconds before each quiet window (see ``quiet``)


@dataclass
class Turns:
    """Per pick, seconds until its ``your_turn`` was read: from the append's ``recorded_at``,
    from sending the pick, and from its answer (negative: the item came first)."""

    from_commit: list[float] = field(default_factory=list)
    from_send: list[float] = field(default_factory=list)
    from_answer: list[float] = field(default_factory=list)
    missed: int = 0
    seconds: float = 0.0

    def row(self) -> str:
        ms = 1000

        def p(values: list[float], share: float) -> str:
            return f"{percentile(values, share) * ms:.1f}"

        picks = len(self.from_send) + self.missed
        return (
            f"{picks} picks in {self.seconds:.1f} s ({picks / max(self.seconds, 1e-9):.0f}/s): "
            f"from the append p50 {p(self.from_commit, 0.5)} ms  p99 {p(self.from_commit, 0.99)} "
            f"ms  max {max(self.from_commit, default=math.nan) * ms:.1f} ms; from sending the "
            f"pick p50 {p(self.from_send, 0.5)} ms  p99 {p(self.from_send, 0.99)} ms; from its "
            f"answer p50 {p(self.from_answer, 0.5)} ms  p99 {p(self.from_answer, 0.99)} ms; "
            f"missed {self.missed}"
        )


@dataclass
class Quiet:
    """``seconds`` with nothing happening: the server's CPU (share of one core), the database's
    committed transactions a second, and /healthz latencies sampled every 0.1 s."""

    seconds: float
    cpu: float
    transactions: float
    healthz: list[float]

    def row(self) -> str:
        ms = 1000
        return (
            f"the server's CPU {self.cpu * 100:.1f} % of one core, {self.transactions:.1f} "
            f"database transactions/s, /healthz p50 {percentile(self.healthz, 0.5) * ms:.1f} ms "
            f"max {max(self.healthz, default=math.nan) * ms:.1f} ms"
        )


async def quiet(server: int, url: str, port: int, seconds: float, settle: float) -> Quiet:
    """``settle`` seconds first: PostgreSQL 15 reports an idle backend's counts up to 10 s late,
    and those of the work before (creating accounts, opening the streams) must not fall in."""
    await asyncio.sleep(settle)
    api, done = Api(port), asyncio.Event()
    cpu, committed = http_bench.process_tree_cpu(server), transactions(url)
    sampler = asyncio.create_task(healthz_while(api, done))
    await asyncio.sleep(seconds)
    done.set()
    healthz = await sampler
    cpu = (http_bench.process_tree_cpu(server) - cpu) / seconds
    # less the bench's own read, and its /healthz (each one a transaction of the server's)
    committed = transactions(url) - committed - 1 - len(healthz)
    return Quiet(seconds, cpu, committed / seconds, healthz)


@dataclass
class Report:
    options: Options
    idles: list[Phase]
    busies: list[Phase]
    turns: Turns
    quiets: tuple[Quiet, Quiet]  # with no stream open, with them open
    pss_kb: tuple[int, int]
    open_seconds: float
    tallies: list[dict[str, Any]]

    @property
    def ratio(self) -> float:
        idle, busy = pooled(self.idles), pooled(self.busies)
        return percentile(busy.picks, 0.99) / percentile(idle.picks, 0.99)

    def total(self, key: str) -> int:
        return sum(int(tally[key]) for tally in self.tallies)

    def text(self) -> str:
        o, ms = self.options, 1000
        idle, busy = pooled(self.idles), pooled(self.busies)
        pairs = ", ".join(
            f"{percentile(b.picks, 0.99) / percentile(i.picks, 0.99):.2f}"
            for i, b in zip(self.idles, self.busies, strict=True)
        )
        errors = sum((Counter(tally["errors"]) for tally in self.tallies), Counter())
        before, after = self.pss_kb
        return "\n".join(
            [
                f"cardroom serve defaults ({o.worker_class} worker), {o.pick_clients} pick "
                f"clients; {o.streams:,} account streams (one account and token each) in "
                f"{o.processes} processes; reader interval (CARDROOM_LIVE_INTERVAL) "
                f"{settings().live_interval * ms:.0f} ms",
                f"  {2 * o.pairs} pick loads: with no account stream open, then with them "
                "open, in turn",
                *(
                    line
                    for n, (i, b) in enumerate(zip(self.idles, self.busies, strict=True))
                    for line in (
                        f"  {2 * n + 1}. no streams   {i.row()}",
                        f"  {2 * n + 2}. {o.streams:>5,} open  {b.row()}",
                    )
                ),
                f"  both no streams {idle.row()}",
                f"  both {o.streams:>5,}   {busy.row()}",
                f"  pick p99 {percentile(idle.picks, 0.99) * ms:.1f} ms without, "
                f"{percentile(busy.picks, 0.99) * ms:.1f} ms with: ratio {self.ratio:.2f} "
                f"(goal <= 1.5; each pair: {pairs})",
                f"your_turn on the account's stream, {o.playing} accounts each in a game against "
                f"a greedy bot, picks paced over {o.spread:.0f} s (goal p99 <= 250 ms after the "
                "turn opens):",
                f"  {self.turns.row()}",
                f"{o.quiet:.0f} s with nothing happening, no stream open: {self.quiets[0].row()}",
                f"  the same with {o.streams:,} streams open and idle: {self.quiets[1].row()}",
                f"  what the idle streams cost: "
                f"{(self.quiets[1].cpu - self.quiets[0].cpu) * 100:.1f} % of one core, "
                f"{self.quiets[1].transactions - self.quiets[0].transactions:.1f} "
                "database transactions/s",
                f"memory {before / 1024:.0f} MB -> {after / 1024:.0f} MB PSS (master + workers): "
                f"{(after - before) / max(o.streams, 1):.1f} KB per stream; opened in "
                f"{self.open_seconds:.1f} s",
                f"items read {self.total('items'):,} (and {self.total('waiting'):,} turns waiting "
                f"at a new stream's start): {self.total('doubled')} twice on one connection "
                f"(goal 0), {self.total('resent')} again after a resumption (at least once: "
                f"allowed); {self.total('reconnects')} reconnections; errors {dict(errors)}",
            ]
        )


async def new_account(api: Api) -> str:
    """A new account's token."""
    status, _, body = await api.call("POST", "/accounts", {"name": f"b{uuid.uuid4().hex[:14]}"})
    if status != 201:
        raise RuntimeError(f"account refused: {status} {body}")
    return str(body["token"])


async def seated(api: Api, token: str) -> Game:
    """A 2-player Sushi Go! game: seat 1 a greedy bot, seat 0 the account (its token picks)."""
    body = {"game": "sushi-go", "players": 2, "bots": [{"seat": 1, "kind": "greedy"}]}
    status, _, created = await api.call("POST", "/games", body)
    if status != 201:
        raise RuntimeError(f"game refused: {status} {created}")
    path = f"/games/{created['game_id']}"
    status, _, joined = await api.call("POST", f"{path}/players", {}, token)
    if status != 201:
        raise RuntimeError(f"join refused: {status} {joined}")
    _, _, view = await api.call("GET", path, token=token)
    return Game(path, token, view["you"]["hand"], view["version"], turn_of(view))


async def paced_turns(crowds: Crowds, apis: list[Api], games: list[Game], o: Options) -> Turns:
    """``o.picks`` picks, round-robin over ``games``, the i-th sent ``i * spread / picks`` s
    after the first; then when each opened turn's ``your_turn`` was read."""
    order = [games[i % len(games)] for i in range(o.picks)]
    interval = o.spread / max(o.picks, 1)
    locks = {game.path: asyncio.Lock() for game in games}  # one pick at a time per game
    sent: dict[tuple[str, int], tuple[int, float, float]] = {}  # key -> first, sent, answered
    queue = list(enumerate(order))
    start = time.monotonic()

    async def send(api: Api) -> None:
        while queue:
            index, game = queue.pop(0)
            if (wait := start + index * interval - time.monotonic()) > 0:
                await asyncio.sleep(wait)
            async with locks[game.path]:
                started = time.time()
                first = await pick(api, game)
                # the turn it opened: the version after the append (the bot's pick included)
                sent[(game.path, game.version)] = (first, started, time.time())

    await asyncio.gather(*(send(api) for api in apis))
    turns = Turns(seconds=time.monotonic() - start)
    keys = list(sent)
    deadline = time.monotonic() + ARRIVAL_SECONDS
    while True:
        seen = crowds.arrivals(keys)
        if all(count >= 1 for count, _ in seen) or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.05)
    recorded = await recorded_at(apis, [(path, sent[(path, v)][0]) for path, v in keys])
    for key, (count, arrived) in zip(keys, seen, strict=True):
        first, started, answered = sent[key]
        if not count:
            turns.missed += 1
            continue
        turns.from_commit.append(arrived - recorded[(key[0], first)])
        turns.from_send.append(arrived - started)
        turns.from_answer.append(arrived - answered)
    return turns


async def run(url: str, o: Options) -> Report:
    if o.picks > o.playing * (3 * ROUND_PICKS - 1):
        raise ValueError("more picks than the games have turns: raise --playing")
    port = http_bench.free_port()
    site = Path(tempfile.mkdtemp(prefix="cardroom-account-streams-site-"))
    server = start_server(url, port, o.worker_class, site)
    crowds = Crowds(port, o.processes)
    try:
        apis = [Api(port) for _ in range(PICK_CONNECTIONS)]
        log(f"creating {o.streams:,} accounts, {o.playing} of them in a game against a bot")
        tokens = await _spread(apis, o.streams, lambda api, _: new_account(api))
        games = await _spread(apis, o.playing, lambda api, i: seated(api, tokens[i]))
        specs = [Spec.of_account(token, source_address(i)) for i, token in enumerate(tokens)]

        log(f"{o.quiet:.0f} s with nothing happening, no stream open")
        idle_quiet = await quiet(server.pid, url, port, o.quiet, o.settle)

        log("pick load with no account stream open")
        idles = [await measure_phase(port, o.pick_clients)]

        await asyncio.sleep(1)
        before_kb = server_pss_kb(server.pid)
        opened = time.monotonic()
        log(f"opening {o.streams:,} account streams")
        crowds.open(specs)
        await wait_open(crowds, o.streams, 300)
        open_seconds = time.monotonic() - opened
        await asyncio.sleep(2)
        after_kb = server_pss_kb(server.pid)

        log(f"{o.quiet:.0f} s with the streams open and nothing happening")
        open_quiet = await quiet(server.pid, url, port, o.quiet, o.settle)

        log(f"{o.picks} paced picks, each turn's your_turn on its account's stream")
        turns = await paced_turns(crowds, apis, games, o)

        log("pick load beside the streams")
        busies = [await measure_phase(port, o.pick_clients)]
        tallies = [crowds.close()]

        for _ in range(o.pairs - 1):
            await asyncio.sleep(1)
            log("pick load with no account stream open, again")
            idles.append(await measure_phase(port, o.pick_clients))
            log("opening the account streams again; pick load beside them")
            crowds.open(specs)
            await wait_open(crowds, o.streams, 300)
            await asyncio.sleep(2)
            busies.append(await measure_phase(port, o.pick_clients))
            tallies.append(crowds.close())
    finally:
        tear_down(crowds, server, site)
    return Report(
        o,
        idles,
        busies,
        turns,
        (idle_quiet, open_quiet),
        (before_kb, after_kb),
        open_seconds,
        tallies,
    )


async def _spread(apis: list[Api], count: int, make: Any) -> list[Any]:
    """``make(api, i)`` for i < ``count``, over the bench's connections; results in order."""
    found: list[Any] = [None] * count
    queue = list(range(count))

    async def work(api: Api) -> None:
        while queue:
            index = queue.pop(0)
            found[index] = await make(api, index)

    await asyncio.gather(*(work(api) for api in apis))
    return found


def main(argv: list[str] | None = None) -> None:
    defaults = Options()
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--url", help="a migrated scratch database (default: embedded, temp dir)")
    parser.add_argument("--streams", type=int, default=defaults.streams)
    parser.add_argument("--playing", type=int, default=defaults.playing)
    parser.add_argument("--picks", type=int, default=defaults.picks)
    parser.add_argument("--spread", type=float, default=defaults.spread)
    parser.add_argument("--quiet", type=float, default=defaults.quiet)
    parser.add_argument("--pick-clients", type=int, default=defaults.pick_clients)
    parser.add_argument("--processes", type=int, default=defaults.processes)
    parser.add_argument("--worker-class", default="gevent", choices=["gevent", "gthread"])
    parser.add_argument("--pairs", type=int, default=defaults.pairs, help="pick loads without/with")
    parser.add_argument("--settle", type=float, default=defaults.settle)
    parser.add_argument("--deadline", type=float, default=900, help="seconds for the whole run")
    args = parser.parse_args(argv)
    options = Options(
        args.streams,
        args.playing,
        args.picks,
        args.spread,
        args.quiet,
        args.pick_clients,
        args.processes,
        args.worker_class,
        args.pairs,
        args.settle,
    )
    limit = raise_open_files_limit()
    if limit < options.streams + 1024:
        raise SystemExit(f"open files limited to {limit}: lower --streams")
    with database(args.url) as url:
        report = asyncio.run(asyncio.wait_for(run(url, options), args.deadline))
    print(report.text())


if __name__ == "__main__":
    main()
