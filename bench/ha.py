"""The high-availability drill: three hosts, each in its own network namespace on one switch
(bench/ha_net.py), each running an etcd member, a Patroni member with PostgreSQL 15 under it
(bench/patroni.py) and ``cardroom serve``; bench/load.py's clients (4 per game) spread over the
hosts play whole Sushi Go games, turning to the next host when one does not answer (as a load
balancer would). The service reaches the leader with a libpq multi-host URL over the three hosts
(``target_session_attrs=read-write``). Faults, one per load run (bench/ha_faults.py):

1. ``kill -9`` of the leader's postmaster;
2. the leader's host cut off the network (``--partition-seconds``), then back; the old leader
   rejoins as a standby by itself (3);
4. the synchronous standby dies, and comes back;
5. a planned switchover;
6. a rolling restart of every ``cardroom serve``.

For each: acknowledged picks lost, doubled, recorded without a client's choice (all must be 0);
the answers clients got from the fault until the cluster was whole again (each a 2xx/4xx, or a
503 with Retry-After; none later than the request budget); requests that got no answer (a cut-off
or restarting host); seconds from the fault to the first acknowledged pick sent after it (< 10 s
for 1 and 2); every game finished and audited.

    python -m bench.ha                                  # the full drill: 30 games (120 clients)
    python -m bench.ha --faults kill,partition --games 6 --partition-seconds 15  # CI's

Root only (namespaces); Debian's patroni, etcd-server and postgresql-15. Everything it starts
is stopped, its namespaces and folders removed, even on failure.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench.ha_faults import (
    FaultFunction,
    Notes,
    kill_primary,
    partition_primary,
    rolling_restart,
    switchover,
    sync_standby_dies,
)
from bench.ha_net import Switch
from bench.load import LONG_POLL_SECONDS, PLAYERS, ROOT, Options, Result, Server, run_load
from bench.patroni import PatroniCluster

FAULTS = ("kill", "partition", "sync_standby", "switchover", "rolling_restart")
SERVING_GOAL = 10.0  # seconds from a kill or a partition to the first acknowledged pick
# ... when the host cut off also led etcd: an etcd election, and every lease extended by its
# timeout, come first (docs/scaling.md, "Failover"): the goal is not met there, this is the bound.
SERVING_BOUND_ETCD_LEADER = 15.0
# Libpq settings of the service's URL: a dead or cut-off server is given up in seconds, not
# after TCP's minutes of retransmissions (tcp_user_timeout, keepalives); the hosts are tried in
# a random order, so a dead first host does not delay every new connection.
URL_OPTIONS = (
    "&load_balance_hosts=random&tcp_user_timeout=4000"
    "&keepalives=1&keepalives_idle=2&keepalives_interval=1&keepalives_count=2"
)


@dataclass
class HaOptions:
    games: int = 30
    workers: int = 2
    faults: tuple[str, ...] = FAULTS
    partition_seconds: float = 30.0
    standby_down_seconds: float = 15.0
    budget: float = float(os.environ.get("CARDROOM_REQUEST_BUDGET", "5"))
    slack: float = 1.0  # a loaded machine's scheduling on top of the budget
    deadline: float = 300.0  # seconds per load run
    fault_after: float = 0.4
    fsync: bool = True
    seed: int | None = None


@dataclass
class Row:
    fault: str
    seconds: float = 0.0  # the load run, the fault and the cluster's return included
    picks: int = 0
    lost: int = 0
    doubled: int = 0
    unchosen: int = 0
    answers: int = 0  # from the fault until the cluster was whole again
    ok_answers: int = 0  # 2xx, 3xx, 4xx
    unavailable: int = 0  # 503 with Retry-After
    bad_answers: int = 0  # any other 5xx, or a 503 without Retry-After
    slowest: float = 0.0
    over_budget: int = 0
    no_answer: int = 0  # requests given up (a cut-off or restarting host)
    serving_after: float | None = None
    games: int = 0
    finished: int = 0
    audited: int = 0
    notes: dict[str, float | str | None] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def answer_bound(kind: str, options: HaOptions) -> float:
    """How long an answer may take: the request budget (+ the slack), and a long poll's wait on
    top (it answers within its wait + the budget, service/live/hub.py: wait_past)."""
    wait = LONG_POLL_SECONDS if kind == "long poll" else 0.0
    return options.budget + wait + options.slack


def tally(row: Row, result: Result, notes: Notes, options: HaOptions) -> None:
    row.picks = len(result.stats.acked)
    row.lost = row.picks - result.acked_found
    row.doubled = sum(bool(re.search(r": [2-9]\d* card_picked events", p)) for p in result.problems)
    row.unchosen = result.unchosen
    row.games, row.finished, row.audited = len(result.games), result.complete, result.audits_passed
    fault = result.fault
    if fault is None or not fault.at:
        row.problems.append("the fault never came")
        return
    end = notes.whole_at or time.monotonic()
    window = [a for a in result.stats.answers if fault.at <= a[0] <= end]
    row.answers = len(window)
    row.ok_answers = sum(status < 500 for _, _, status, _, _ in window)
    row.unavailable = sum(status == 503 and retry for _, _, status, retry, _ in window)
    row.bad_answers = row.answers - row.ok_answers - row.unavailable
    row.slowest = round(max((a[1] for a in window), default=0.0), 2)
    late = Counter(kind for _, took, _, _, kind in window if took > answer_bound(kind, options))
    row.over_budget = sum(late.values())
    if late:
        notes.details["past the budget"] = ", ".join(f"{k} {n}" for k, n in late.most_common())
    row.no_answer = sum(fault.at <= t <= end for t, _, _ in result.stats.no_answers)
    if fault.first_pick_after is not None:
        row.serving_after = round(fault.first_pick_after, 2)
    row.notes = notes.details
    # What the log checks found first (a pick lost, doubled or never sent), then the rest:
    # a run cut off by its deadline has a problem per seat, and only 10 are kept.
    row.problems += sorted(result.problems, key=lambda p: "deadline" in p)[:10]
    if row.over_budget or row.bad_answers:
        row.problems.append(f"{row.over_budget} answers past the budget, {row.bad_answers} bad")
    bound = serving_bound(row)
    if bound is not None and (row.serving_after is None or row.serving_after > bound):
        row.problems.append(f"first pick {row.serving_after} s after the fault (< {bound} s)")
    if not notes.whole_at:
        row.problems.append("the cluster was not whole again")


def serving_bound(row: Row) -> float | None:
    """Seconds within which a kill or a partition must be served again (None: other faults)."""
    if row.fault not in ("kill", "partition"):
        return None
    if row.notes.get("cut-off host led etcd") == "yes":
        return SERVING_BOUND_ETCD_LEADER
    return SERVING_GOAL


@dataclass
class Drill:
    options: HaOptions
    rows: list[Row] = field(default_factory=list)
    weight: dict[str, dict[str, float]] = field(default_factory=dict)
    made: list[str] = field(default_factory=list)
    build_seconds: float = 0.0  # namespaces, etcd, Patroni, PostgreSQL, the hosts' servers
    deployment: dict[str, Any] = field(default_factory=dict)  # roles and authentication, as seen

    @property
    def ok(self) -> bool:
        return bool(self.rows) and all(not row.problems for row in self.rows)

    def table(self) -> str:
        o = self.options
        head = (
            f"3 hosts (network namespaces), Patroni + etcd, synchronous_mode; {o.games} games"
            f" ({o.games * PLAYERS} clients) per fault; request budget {o.budget} s"
            f" (+{o.slack} s slack); built in {self.build_seconds} s, then per fault"
            f" {', '.join(f'{r.fault} {r.seconds} s' for r in self.rows)}; weight {self.weight}"
        )
        columns = (
            "| fault | picks acked | lost | doubled | unchosen | answers in fault:"
            " ok / 503+Retry-After / bad | slowest s | over budget | no answer |"
            " first pick after fault s | finished / audited |"
        )
        lines = [head, f"deployment: {self.deployment}", "", columns, "|" + "---|" * 11]
        for r in self.rows:
            lines.append(
                f"| {r.fault} | {r.picks} | {r.lost} | {r.doubled} | {r.unchosen} |"
                f" {r.ok_answers} / {r.unavailable} / {r.bad_answers} | {r.slowest} |"
                f" {r.over_budget} | {r.no_answer} | {r.serving_after} |"
                f" {r.finished}/{r.games}, {r.audited}/{r.games} |"
            )
        lines.append("")
        for r in self.rows:
            notes = "; ".join(f"{k} {v}" for k, v in r.notes.items())
            lines.append(f"{r.fault}: {notes}")
            lines += [f"  problem: {p}" for p in r.problems]
        lines.append("OK" if self.ok else "FAILED")
        return "\n".join(lines)


def servers_for(
    cluster: PatroniCluster, switch: Switch, options: HaOptions, log: Path, folder: Path
) -> list[Server]:
    """Each host's ``cardroom serve`` as docs/scaling.md deploys it: the app role's URL (with its
    password; the owner migrated), ``CARDROOM_HOSTS`` counting every host in the connection
    budget, one keys file made by ``cardroom keys init`` and given to every host; each runs in
    ``folder`` (its keys, temporary files, anything written to a relative path), never in the
    checkout."""
    url = cluster.app_url() + URL_OPTIONS
    keys_file = folder / "keys" / "keys.json"
    scratch = folder / "tmp"  # the metrics' files (TMPDIR), removed with the folder
    scratch.mkdir(exist_ok=True)
    # connect_timeout 2 s (libpq's least): each connection attempt that tries the cut-off host
    # first loses that long before it tries the next.
    env = {
        "CARDROOM_HOSTS": str(len(switch.hosts)),
        "CARDROOM_REQUEST_BUDGET": str(options.budget),
        "CARDROOM_CONNECT_TIMEOUT": "2",
        "CARDROOM_KEYS_FILE": str(keys_file),
        "TMPDIR": str(scratch),
    }
    init_keys({**env, "DATABASE_URL": url}, folder)
    return [
        Server(
            url,
            8000,
            options.workers,
            1,
            log,
            host=h.address,
            prefix=h.prefix,
            env=env,
            cwd=folder,
        )  # fmt: skip
        for h in switch.hosts
    ]


def init_keys(env: dict[str, str], folder: Path) -> None:
    """``cardroom keys init``, as an operator runs it once before giving every host the file."""
    command = [sys.executable, "-m", "service.cli.main", "keys", "init"]
    environment = {**os.environ, "PYTHONPATH": str(ROOT), **env}
    done = subprocess.run(
        command, cwd=folder, env=environment, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"cardroom keys init: {done.stdout}{done.stderr}")


def start_all(servers: list[Server]) -> None:
    """Start the hosts' servers at once (each waits for its own /healthz)."""
    errors: list[BaseException] = []

    def start(server: Server) -> None:
        try:
            server.start()
        except BaseException as exc:  # reported below, in this thread
            errors.append(exc)

    threads = [threading.Thread(target=start, args=(s,), daemon=True) for s in servers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(90)
    if errors:
        raise errors[0]


def fault_function(
    name: str,
    cluster: PatroniCluster,
    switch: Switch,
    servers: list[Server],
    options: HaOptions,
    notes: Notes,
) -> FaultFunction:
    if name == "kill":
        return kill_primary(cluster, notes)
    if name == "partition":
        return partition_primary(cluster, switch, options.partition_seconds, notes)
    if name == "sync_standby":
        return sync_standby_dies(cluster, options.standby_down_seconds, notes)
    if name == "switchover":
        return switchover(cluster, notes)
    return rolling_restart(servers, cluster, notes)


def load_options(options: HaOptions, games: int) -> Options:
    """How bench/load.py's clients play ``games`` games over the drill's hosts: 4 per game,
    turning to another host when theirs does not answer, a 503 with Retry-After an answer."""
    return Options(
        clients=games * PLAYERS,
        games=games,
        workers=options.workers,
        deadline=options.deadline,
        fault_after=options.fault_after,
        seed=options.seed,
        request_timeout=options.budget + 5,
        next_host_on_failure=True,
        busy_503_ok=True,
    )


def play(
    name: str,
    cluster: PatroniCluster,
    switch: Switch,
    servers: list[Server],
    options: HaOptions,
    log: Path,
) -> Row:
    notes = Notes()
    load = load_options(options, options.games)
    fault = fault_function(name, cluster, switch, servers, options, notes)
    began = time.monotonic()
    result = run_load("", load, log=log, servers=servers, fault=fault, keep_servers=True)
    row = Row(name, seconds=round(time.monotonic() - began, 1))
    tally(row, result, notes, options)
    return row


def drill(options: HaOptions, log: Path | None = None) -> Drill:
    """Build everything, run the faults one by one, tear everything down (also on failure)."""
    log = log or Path(tempfile.mkstemp(prefix="cardroom-ha-", suffix=".log")[1])
    result = Drill(options)
    began = time.monotonic()
    folder = Path(tempfile.mkdtemp(prefix="cardroom-ha-hosts-"))  # the hosts' working folder
    try:
        with Switch(3) as switch:
            cluster = PatroniCluster(switch, fsync=options.fsync)
            result.made = [*switch.made, str(folder), str(cluster.root)]
            with cluster:
                servers = servers_for(cluster, switch, options, log, folder)
                try:
                    start_all(servers)
                    cluster.wait_members(120)
                    result.build_seconds = round(time.monotonic() - began, 1)
                    result.weight = cluster.weight()
                    result.deployment = cluster.deployment()
                    for name in options.faults:
                        result.rows.append(play(name, cluster, switch, servers, options, log))
                finally:
                    for server in servers:
                        server.stop()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    defaults = HaOptions()
    parser.add_argument("--games", type=int, default=defaults.games)
    parser.add_argument("--workers", type=int, default=defaults.workers)
    parser.add_argument("--faults", default=",".join(FAULTS), help=f"some of {FAULTS}")
    parser.add_argument("--partition-seconds", type=float, default=defaults.partition_seconds)
    parser.add_argument("--standby-down-seconds", type=float, default=defaults.standby_down_seconds)
    parser.add_argument("--budget", type=float, default=defaults.budget)
    parser.add_argument("--no-fsync", action="store_true")
    parser.add_argument("--seed", type=int)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    faults = tuple(args.faults.split(","))
    if not set(faults) <= set(FAULTS):
        parser.error(f"--faults: some of {','.join(FAULTS)}")
    options = HaOptions(
        games=args.games,
        workers=args.workers,
        faults=faults,
        partition_seconds=args.partition_seconds,
        standby_down_seconds=args.standby_down_seconds,
        budget=args.budget,
        fsync=not args.no_fsync,
        seed=args.seed,
    )
    log = Path(tempfile.mkstemp(prefix="cardroom-ha-", suffix=".log")[1])
    result = drill(options, log)
    print(result.table())
    if not result.ok:
        print(f"the servers' log: {log}")
    if result.ok:
        log.unlink()
    if args.json:
        args.json.write_text(json.dumps(asdict(result), indent=2))
    return 0 if result.ok else 1


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
