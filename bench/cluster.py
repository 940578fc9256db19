"""The several-hosts drill: a PostgreSQL primary and a hot standby (bench/pg_cluster.py), two or
three ``cardroom serve`` hosts in their own network namespaces (``ip netns`` + veth; separate
loopback addresses where namespaces cannot be made), and bench/load.py's clients spread over the
hosts, playing whole 4-player games.

Phases (each a full load run on fresh games):

1. reads on the primary: the hosts without ``DATABASE_REPLICA_URL``;
2. reads on the standby: the same hosts with it;
3. failover: with reads on the standby, the primary is killed (``kill -9`` of the postmaster and
   all its processes) once a share of the picks is acknowledged, and the standby promoted; the
   hosts find it by themselves (libpq multi-host, ``target_session_attrs=read-write``).

Measured: picks/s, read latency (spectators reading the lobby, views and event pages on every
host) p50/p99, the replication lag the primary reports (``pg_stat_replication.replay_lag``)
p50/p99, promotion time, time from the kill to the first acknowledged pick, acknowledged picks
lost (every one is looked for in the log), games finished and audited.

Loopback and its own namespaces only; every run is bounded in time; everything it made (servers,
namespaces, folders) is removed at the end, even on failure.

    python -m bench.cluster                                  # the full drill (README)
    python -m bench.cluster --hosts 2 --games 4 --no-compare # the reduced one (tests)
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import psutil

from bench.load import PLAYERS, Options, Result, Run, Server, _fault_due, _get, run_load
from bench.pg_cluster import Cluster, free_port


@dataclass
class DrillOptions:
    hosts: int = 3
    games: int = 30
    workers: int = 2
    threads: int = 16
    readers: int = 6  # spectator threads, spread over the hosts
    sync_commit: str = "on"
    netns: bool = True  # hosts in network namespaces when the machine allows it
    compare: bool = True  # phases 1 and 2; without: the failover phase only
    deadline: float = 240.0  # seconds per phase
    fault_after: float = 0.4
    fsync: bool = True
    seed: int | None = None


@dataclass
class Phase:
    name: str
    seconds: float = 0.0
    picks: int = 0  # acknowledged (a 2xx)
    picks_logged: int = 0  # card_picked events (a pick whose answer was lost is logged too)
    picks_per_second: float = 0.0
    reads: int = 0
    read_p50_ms: float | None = None
    read_p99_ms: float | None = None
    lag_p50_ms: float | None = None
    lag_p99_ms: float | None = None
    games: int = 0
    finished: int = 0
    audited: int = 0
    acked_lost: int = 0
    acked_before_kill: int | None = None
    # CPU seconds per acknowledged pick (all processes of each, incl. reaped ones)
    primary_cpu_ms_per_pick: float | None = None
    standby_cpu_ms_per_pick: float | None = None
    hosts_cpu_ms_per_pick: float | None = None
    promote_seconds: float | None = None
    serving_again_seconds: float | None = None  # from the kill to the first acknowledged pick
    healthy_seconds: float | None = None  # from the promotion to /healthz 200 on every host
    problems: list[str] = field(default_factory=list)


def percentile(values: list[float], share: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


def ms(value: float | None) -> float | None:
    return None if value is None else round(value * 1000, 2)


def tree_cpu(process: psutil.Process | None) -> float:
    """CPU seconds of ``process`` and its processes, the ones still running and the ones it
    has reaped: a count that machine noise does not move much (unlike a wall time)."""
    if process is None:
        return 0.0
    try:
        times = process.cpu_times()
        total = times.user + times.system + times.children_user + times.children_system
        for child in process.children(recursive=True):
            with contextlib.suppress(psutil.NoSuchProcess):
                child_times = child.cpu_times()
                total += child_times.user + child_times.system
        return total
    except psutil.NoSuchProcess:
        return 0.0


# --- hosts ---------------------------------------------------------------------------------------


@dataclass
class Host:
    address: str  # where the host's server listens (clients connect here)
    database_host: str  # how the host reaches the database servers
    prefix: tuple[str, ...] = ()  # the command that puts a process on this host


class Network:
    """The hosts' addresses: a network namespace per host, joined to this one by a veth pair
    (10.77.X.4i+1 here, 10.77.X.4i+2 there), or, where namespaces cannot be made, 127.0.0.2,
    127.0.0.3, ... The database servers stay here; each host reaches them at its veth's far end.
    """

    def __init__(self, count: int, netns: bool) -> None:
        self.namespaces: list[str] = []
        self.hosts: list[Host] = []
        if netns:
            try:
                self._namespaces(count)
            except (OSError, subprocess.CalledProcessError) as exc:
                print(f"no network namespaces ({exc}): hosts on loopback addresses instead")
                self.close()
                self.hosts = []
        if not self.hosts:
            self.hosts = [Host(f"127.0.0.{2 + i}", "127.0.0.1") for i in range(count)]

    @property
    def kind(self) -> str:
        return "network namespaces (veth)" if self.namespaces else "loopback addresses"

    @property
    def database_listen(self) -> str:
        return ",".join(["127.0.0.1", *{h.database_host for h in self.hosts} - {"127.0.0.1"}])

    def _namespaces(self, count: int) -> None:
        tag = os.getpid() % 100_000
        subnet = f"10.77.{os.getpid() % 250}"
        for i in range(count):
            ns, outer, inner = f"cr{tag}h{i}", f"cr{tag}o{i}", f"cr{tag}i{i}"
            here, there = f"{subnet}.{4 * i + 1}", f"{subnet}.{4 * i + 2}"
            self.namespaces.append(ns)
            for command in (
                f"ip netns add {ns}",
                f"ip link add {outer} type veth peer name {inner}",
                f"ip link set {inner} netns {ns}",
                f"ip addr add {here}/30 dev {outer}",
                f"ip link set {outer} up",
                f"ip netns exec {ns} ip addr add {there}/30 dev {inner}",
                f"ip netns exec {ns} ip link set {inner} up",
                f"ip netns exec {ns} ip link set lo up",
            ):
                subprocess.run(command.split(), check=True, capture_output=True, timeout=10)
            self.hosts.append(Host(there, here, ("ip", "netns", "exec", ns)))

    def close(self) -> None:
        """Delete the namespaces (their veth pairs go with them)."""
        for ns in self.namespaces:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=10, check=False)
        self.namespaces = []


# --- spectators and the lag ---------------------------------------------------------------------


class Sampler:
    """Beside a load run: spectators reading the lobby, a game's view and its first events on
    every host (latency of each read), and the replication lag every 50 ms."""

    def __init__(self, hosts: list[tuple[str, int]], cluster: Cluster, readers: int) -> None:
        self.hosts, self.cluster = hosts, cluster
        self.latencies: list[float] = []
        self.lags: list[float] = []
        self.stop = threading.Event()
        self.threads = [
            threading.Thread(target=self._read, args=(hosts[i % len(hosts)], i), daemon=True)
            for i in range(readers)
        ]
        self.threads.append(threading.Thread(target=self._lag, daemon=True))

    def __enter__(self) -> Sampler:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(10)

    def _get(self, conn: http.client.HTTPConnection, path: str) -> Any:
        started = time.monotonic()
        conn.request("GET", path)
        response = conn.getresponse()
        body = response.read()
        if response.status == 200:
            self.latencies.append(time.monotonic() - started)
            return json.loads(body)
        return None

    def _read(self, address: tuple[str, int], index: int) -> None:
        rng = random.Random(index)
        conn = http.client.HTTPConnection(*address, timeout=10)
        while not self.stop.wait(0.01):
            try:
                lobby = self._get(conn, "/games?status=playing&limit=20")
                if not lobby or not lobby["games"]:
                    continue
                game = rng.choice(lobby["games"])
                view = self._get(conn, f"{game['url']}?min_version={game['version']}")
                if view:
                    self._get(conn, f"{game['url']}/events?limit=50&min_version={view['version']}")
            except (OSError, http.client.HTTPException, ValueError):
                conn.close()  # the failover: reconnect on the next read
                conn = http.client.HTTPConnection(*address, timeout=10)
        conn.close()

    def _lag(self) -> None:
        while not self.stop.wait(0.05):
            lag = self.cluster.replay_lag()
            if lag is not None:
                self.lags.append(lag)


# --- the phases ---------------------------------------------------------------------------------


def servers_for(
    cluster: Cluster, network: Network, options: DrillOptions, replica: bool, log: Path
) -> list[Server]:
    servers = []
    for host in network.hosts:
        env = {"CARDROOM_APP_ROLE": ""}  # the drill's URLs name their user already
        if replica:
            env["DATABASE_REPLICA_URL"] = cluster.standby_url(host.database_host)
        servers.append(
            Server(
                cluster.primary_url(host.database_host),
                free_port(),
                options.workers,
                options.threads,
                log,
                host=host.address,
                prefix=host.prefix,
                env=env,
            )
        )
    return servers


def play_phase(
    name: str,
    cluster: Cluster,
    network: Network,
    options: DrillOptions,
    replica: bool,
    failover: bool,
    log: Path,
) -> Phase:
    phase = Phase(name)
    servers = servers_for(cluster, network, options, replica, log)
    try:
        return _play(phase, servers, cluster, options, failover, log)
    finally:
        for server in servers:
            server.stop()  # run_load stops them too; not if a start failed


def _play(
    phase: Phase,
    servers: list[Server],
    cluster: Cluster,
    options: DrillOptions,
    failover: bool,
    log: Path,
) -> Phase:
    for server in servers:
        server.start()
    load = Options(
        clients=options.games * PLAYERS,
        games=options.games,
        workers=options.workers,
        threads=options.threads,
        deadline=options.deadline,
        fault_after=options.fault_after,
        seed=options.seed,
    )

    def kill_and_promote(run: Run) -> None:
        fault = _fault_due(run, "failover", "failover")
        if fault is None:
            return
        phase.promote_seconds = cluster.failover()
        fault.back_at = time.monotonic()
        phase.healthy_seconds = all_healthy(addresses, until=fault.back_at + 30)
        if phase.healthy_seconds is not None:
            phase.healthy_seconds = round(phase.healthy_seconds - fault.back_at, 3)

    addresses = [(s.host, s.port) for s in servers]
    processes = [cluster.primary.postmaster(), cluster.standby.postmaster()]
    hosts = [psutil.Process(s.process.pid) for s in servers if s.process is not None]
    before = [tree_cpu(p) for p in processes] + [sum(map(tree_cpu, hosts))]
    with Sampler(addresses, cluster, options.readers) as sampler:
        result = run_load(
            "",
            load,
            log=log,
            servers=servers,
            fault=kill_and_promote if failover else None,
            keep_servers=True,
        )
        after = [tree_cpu(p) for p in processes] + [sum(map(tree_cpu, hosts))]
    summarise(phase, result, sampler)
    if not failover and phase.picks:
        per_pick = [
            round((b - a) * 1000 / phase.picks, 3) for a, b in zip(before, after, strict=True)
        ]
        phase.primary_cpu_ms_per_pick, phase.standby_cpu_ms_per_pick = per_pick[:2]
        phase.hosts_cpu_ms_per_pick = per_pick[2]
    return phase


def all_healthy(addresses: list[tuple[str, int]], until: float) -> float | None:
    """When (monotonic) every host answered /healthz 200, polling every 20 ms; None if not by
    ``until``."""
    waiting = set(addresses)
    while waiting and time.monotonic() < until:
        for host, port in sorted(waiting):
            with contextlib.suppress(OSError, http.client.HTTPException):
                if _get(port, "/healthz", 1.0, host)[0] == 200:
                    waiting.discard((host, port))
        time.sleep(0.02)
    return None if waiting else time.monotonic()


def summarise(phase: Phase, result: Result, sampler: Sampler) -> None:
    acked = len(result.stats.acked)
    phase.seconds = round(result.duration, 2)
    phase.picks = acked
    phase.picks_logged = result.picks_found
    phase.picks_per_second = round(acked / result.duration, 1) if result.duration else 0.0
    phase.reads = len(sampler.latencies)
    phase.read_p50_ms = ms(percentile(sampler.latencies, 0.5))
    phase.read_p99_ms = ms(percentile(sampler.latencies, 0.99))
    phase.lag_p50_ms = ms(percentile(sampler.lags, 0.5))
    phase.lag_p99_ms = ms(percentile(sampler.lags, 0.99))
    phase.games = len(result.games)
    phase.finished = result.complete
    phase.audited = result.audits_passed
    phase.acked_lost = acked - result.acked_found
    phase.problems = result.problems[:20]
    fault = result.fault
    if fault is not None and fault.at:
        phase.acked_before_kill = fault.acked_before
    if fault is not None and fault.back_at and fault.first_pick_after is not None:
        phase.serving_again_seconds = round(fault.back_at - fault.at + fault.first_pick_after, 3)


@dataclass
class Drill:
    options: DrillOptions
    network: str = ""
    made: list[str] = field(default_factory=list)  # its namespaces and folder (all removed)
    phases: list[Phase] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(not p.problems and p.acked_lost == 0 for p in self.phases)

    def summary(self) -> str:
        o = self.options
        lines = [
            f"{o.hosts} hosts ({self.network}) x {o.workers} workers x {o.threads} threads;"
            f" primary + hot standby, synchronous_commit={o.sync_commit}; {o.games} games"
            f" ({o.games * PLAYERS} clients) and {o.readers} spectators per phase"
        ]
        for p in self.phases:
            line = (
                f"{p.name}: {p.picks} picks in {p.seconds:.1f} s = {p.picks_per_second} picks/s;"
                f" reads {p.reads}, p50 {p.read_p50_ms} ms, p99 {p.read_p99_ms} ms;"
                f" replay lag p50 {p.lag_p50_ms} ms, p99 {p.lag_p99_ms} ms;"
                f" games finished {p.finished}/{p.games}, audited {p.audited}/{p.games};"
                f" acknowledged picks lost {p.acked_lost}"
            )
            if p.primary_cpu_ms_per_pick is not None:
                line += (
                    f"; CPU per pick: primary {p.primary_cpu_ms_per_pick} ms, standby"
                    f" {p.standby_cpu_ms_per_pick} ms, hosts {p.hosts_cpu_ms_per_pick} ms"
                )
            if p.promote_seconds is not None:
                line += (
                    f"; killed after {p.acked_before_kill} acknowledged picks;"
                    f" promote {p.promote_seconds:.2f} s; /healthz 200 on every host"
                    f" {p.healthy_seconds} s after it; first pick acknowledged"
                    f" {p.serving_again_seconds} s after the kill"
                )
            lines.append(line)
            lines += [f"  problem: {text}" for text in p.problems]
        lines.append("OK" if self.ok else "FAILED")
        return "\n".join(lines)


def drill(options: DrillOptions, log: Path | None = None) -> Drill:
    """Build everything, run the phases, tear everything down (also on failure)."""
    log = log or Path(tempfile.mkstemp(prefix="cardroom-cluster-", suffix=".log")[1])
    result = Drill(options)
    network = Network(options.hosts, options.netns)
    try:
        result.network = network.kind
        cluster = Cluster(
            sync_commit=options.sync_commit, listen=network.database_listen, fsync=options.fsync
        )
        result.made = [*network.namespaces, str(cluster.root)]
        with cluster:
            if options.compare:
                for name, replica in (("reads on primary", False), ("reads on standby", True)):
                    phase = play_phase(name, cluster, network, options, replica, False, log)
                    result.phases.append(phase)
            phase = play_phase(
                "failover (reads on standby)", cluster, network, options, True, True, log
            )
            result.phases.append(phase)
    finally:
        network.close()
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    defaults = DrillOptions()
    parser.add_argument("--hosts", type=int, default=defaults.hosts)
    parser.add_argument("--games", type=int, default=defaults.games)
    parser.add_argument("--workers", type=int, default=defaults.workers)
    parser.add_argument("--threads", type=int, default=defaults.threads)
    parser.add_argument("--readers", type=int, default=defaults.readers)
    parser.add_argument(
        "--sync-commit", choices=("on", "remote_apply", "off"), default=defaults.sync_commit
    )
    parser.add_argument("--no-netns", action="store_true", help="hosts on loopback addresses")
    parser.add_argument("--no-compare", action="store_true", help="the failover phase only")
    parser.add_argument("--deadline", type=float, default=defaults.deadline)
    parser.add_argument("--seed", type=int)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    if not 1 <= args.hosts <= 8:
        parser.error("--hosts: 1 to 8")
    options = DrillOptions(
        hosts=args.hosts,
        games=args.games,
        workers=args.workers,
        threads=args.threads,
        readers=args.readers,
        sync_commit=args.sync_commit,
        netns=not args.no_netns,
        compare=not args.no_compare,
        deadline=args.deadline,
        seed=args.seed,
    )
    log = Path(tempfile.mkstemp(prefix="cardroom-cluster-", suffix=".log")[1])
    result = drill(options, log)
    print(result.summary())
    if result.ok:
        log.unlink()
    else:
        print(f"the servers' log: {log}")
    if args.json:
        args.json.write_text(json.dumps(asdict(result), indent=2))
    return 0 if result.ok else 1


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
