"""A point-in-time restore into the Patroni cluster, made as docs/scaling.md ("Backups") tells an
operator to make it, on bench/ha.py's cluster: three hosts in network namespaces, each an etcd
member, a Patroni member with PostgreSQL 15 (every member archiving its WAL: Patroni's
``archive_command``) and ``cardroom serve`` deployed as the README says (the app role's URL,
``CARDROOM_HOSTS``, one keys file).

1. A base backup from the synchronous standby (``pg_basebackup -U replicator -X none``).
2. The first set of games played through the hosts (bench/load.py's clients, each game checked
   and audited); its events counted; the target recorded (the leader's ``now()``).
3. The second set played; the segment holding it archived.
4. Patroni stopped on every host, the standbys first (as ``systemctl stop patroni``: the
   leader gives its key up); the cluster's keys removed from etcd (``patronictl remove``); every
   member's data directory moved aside. The hosts' ``cardroom serve`` keep running (they answer
   503 meanwhile; ``--restart-hosts``: stopped before, started after).
5. Patroni started on the first host with a custom bootstrap method (``bootstrap.method:
   pitr``): its command copies the base backup into the data directory, its ``recovery_conf``
   replays the archive up to the target (``restore_command``, ``recovery_target_time``,
   ``recovery_target_action: promote``); then on the other two, which clone the restored leader.
6. Checked: the restored leader holds every event of the first set and none of the second
   (bench/backup.py's comparison) on a new timeline, every game's hash chain whole; each standby
   streams from it on that timeline with the same events; every host serves every game of the
   first set with an audit that passes (hash chain and the service's signature) and answers 404
   for the second set's (nothing it cached of them survives the restore); then more games are
   played on the restored cluster.

    python -m bench.pitr_patroni       # 6 games before the target, 6 after, 2 on the restored
    python -m bench.pitr_patroni --before 1 --after 1 --after-restore 0 --workers 1 --no-fsync
                                       # tests/test_pitr_patroni.py's

Root only (namespaces), Debian's patroni, etcd-server and postgresql-15; run it under
``flock /work/patroni.lock`` where other drills may run (one cluster at a time per machine).
Everything it starts is stopped, its namespaces and folders removed, even on failure.
"""

from __future__ import annotations

import argparse
import http.client
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
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from uuid import UUID

import psycopg

from bench.backup import Restored, archive_current, audits, compare, count_events
from bench.ha import HaOptions, load_options, servers_for, start_all
from bench.ha_net import Switch
from bench.load import Server, run_load
from bench.patroni import PG_BIN, PG_PORT, Member, PatroniCluster, available
from bench.patroni_config import REPLICATOR

RESTORE_TIMEOUT = 180.0  # seconds for the restored leader to take writes (replay included)
WHOLE_AGAIN = 180.0  # ... and for both standbys to clone it and stream
T = TypeVar("T")
# The service's request budget (5 s) and a loaded machine's scheduling (bench/ha.py's slack).
ANSWER_BOUND = HaOptions().budget + HaOptions().slack


@dataclass
class PitrOptions:
    before: int = 6  # games played before the target
    after: int = 6  # games played after it (the restore must leave them out)
    after_restore: int = 2  # games played on the restored cluster
    workers: int = 2  # each host's `cardroom serve` workers (the drill's)
    # The hosts stopped before the restore and started after it; by default they keep running
    # (503 while the cluster is down) and must drop what they cached of the lost games.
    restart_hosts: bool = False
    fsync: bool = True


@dataclass
class Pitr:
    options: PitrOptions
    target: str = ""  # recovery_target_time
    first: list[str] = field(default_factory=list)  # the games before the target (paths)
    second: list[str] = field(default_factory=list)  # the games after it
    restored: Restored | None = None  # the restored leader against the original
    timeline: int = 0  # the restored leader's (the original's was 1)
    standbys: dict[str, dict[str, int]] = field(default_factory=dict)  # name -> events, timeline
    audited: int = 0  # (host, game of the first set) whose audit passes, signature included
    gone: int = 0  # (host, game of the second set) answered 404
    after_restore: int = 0  # games played, finished and audited on the restored cluster
    seconds: dict[str, float] = field(default_factory=dict)
    base_mb: float = 0.0
    segments: int = 0  # WAL segments in the archive when the restore began
    replayed: int = 0  # WAL segments from the base backup's start to the target
    during_restore: dict[str, int] = field(default_factory=dict)  # a host's answers meanwhile
    load: list[float] = field(default_factory=list)  # 1-minute load average: began, ended
    problems: list[str] = field(default_factory=list)
    made: list[str] = field(default_factory=list)  # its namespaces, bridge, folders (all removed)

    @property
    def ok(self) -> bool:
        return self.restored is not None and not self.problems

    def summary(self) -> str:
        r, o, hosts = self.restored, self.options, len(self.standbys) + 1
        lines = [
            f"games: {len(self.first)} before the target {self.target}, {len(self.second)} after",
            f"base backup {self.base_mb} MB from the synchronous standby; {self.segments} WAL"
            f" segments archived when the restore began, {self.replayed} replayed to the target",
            f"restored leader: {r}; timeline {self.timeline}",
            f"standbys: {self.standbys}",
            f"the service, every host: {self.audited}/{hosts * len(self.first)} audits pass"
            f" (chain and signature), {self.gone}/{hosts * len(self.second)} later games 404;"
            f" {self.after_restore}/{o.after_restore} games played on the restored cluster",
            f"one host's answers to a client during the restore: {self.during_restore}",
            f"seconds: {self.seconds}",
            f"load average {self.load}",
        ]
        lines += [f"problem: {p}" for p in self.problems]
        lines.append("OK" if self.ok else "FAILED")
        return "\n".join(lines)


# --- the backup and the games -------------------------------------------------------------------


def base_backup(cluster: PatroniCluster, source: Member, fsync: bool) -> Path:
    """docs/scaling.md's ``pg_basebackup`` from ``source``, as the replication role (the only
    one pg_hba lets replicate), run as the servers' user; the WAL comes from the archive."""
    folder = cluster.root / "base"
    argv = ["runuser", "-u", cluster.user, "--", str(PG_BIN / "pg_basebackup")]
    argv += ["-h", source.host.address, "-p", str(PG_PORT), "-U", REPLICATOR, "-D", str(folder)]
    argv += ["-X", "none", "--checkpoint=fast", *([] if fsync else ["--no-sync"])]
    env = {**os.environ, "PGPASSWORD": cluster.passwords.replication}
    done = subprocess.run(
        argv, env=env, cwd=cluster.root, capture_output=True, text=True, timeout=300, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"pg_basebackup failed: {done.stdout}{done.stderr}")
    return folder


def play(servers: list[Server], options: PitrOptions, games: int, log: Path) -> list[str]:
    """``games`` whole games over the hosts, each checked and audited (bench/load.py); their
    paths."""
    load = load_options(HaOptions(workers=options.workers), games)
    result = run_load("", load, log=log, servers=servers, keep_servers=True)
    if not result.ok or not result.complete == result.audits_passed == games:
        raise RuntimeError(f"{games} games: {result.summary()}")
    return result.games


def record_target(url: str) -> tuple[str, str]:
    """The moment to restore to: the leader's clock, after every commit of the first set
    (each was acknowledged) and before any of the second (none has been sent); and its WAL
    position then."""
    with psycopg.connect(url, connect_timeout=5) as conn:
        now, lsn = conn.execute("SELECT now()::text, pg_current_wal_lsn()::text").fetchall()[0]
    return str(now), str(lsn)


def wal_bytes(lsn: str) -> int:
    """A WAL position ("16/B374D848") as a byte count."""
    high, low = lsn.split("/")
    return (int(high, 16) << 32) + int(low, 16)


def backup_start(base: Path) -> str:
    """Where the base backup's WAL replay starts (its backup_label's START WAL LOCATION)."""
    label = (base / "backup_label").read_text()
    found = re.search(r"^START WAL LOCATION: (\S+)", label, re.MULTILINE)
    if found is None:
        raise RuntimeError(f"no start in the backup label: {label}")
    return found.group(1)


# --- the restore --------------------------------------------------------------------------------


def stop_cluster(cluster: PatroniCluster) -> None:
    """Patroni stopped everywhere, the standbys first (stopping the leader first would fail it
    over to one of them); the cluster's keys then removed from etcd, as ``patronictl remove``
    does it; every data directory moved aside."""
    leader = cluster.leader()
    if leader is None:
        raise RuntimeError(f"no leader to stop: {cluster.roles()}")
    at_once(cluster.stop_patroni, [m for m in cluster.members if m is not leader])
    cluster.stop_patroni(leader)
    config = cluster.members[0].folder / "patroni.json"
    # Its three questions: the cluster's name, the warning, the leader's name (asked only while
    # the leader key lives; the leader gave it up on stopping).
    answers = f"cardroom\nYes I am aware\n{leader.name}\n"
    done = subprocess.run(
        ["patronictl", "-c", str(config), "remove", "cardroom"],
        input=answers,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    left = cluster.dcs()
    if done.returncode != 0 or left:
        raise RuntimeError(f"patronictl remove: {done.stdout}{done.stderr}; left in etcd: {left}")
    for member in cluster.members:  # kept, not deleted: the operator's way back
        member.data.rename(member.folder / "data.before-restore")


def restore_script(root: Path, user: str, base: Path) -> Path:
    """The custom bootstrap's command (written into ``root``, run as ``user``): Patroni calls it
    with ``--scope=`` and ``--datadir=``; it puts the base backup where the data directory
    goes."""
    script = root / "restore-base"
    script.write_text(
        "#!/bin/sh\nset -e\n"
        'for arg in "$@"; do case "$arg" in --datadir=*) datadir="${arg#--datadir=}";; esac; done\n'
        f'mkdir -p "$datadir"\ncp -a {base}/. "$datadir/"\n'
        'chmod 700 "$datadir"\n'  # after the copy, which gives it the backup folder's mode
    )
    script.chmod(0o755)
    shutil.chown(script, user)
    return script


def pitr_bootstrap(script: Path, archive: Path, target: str) -> dict[str, Any]:
    """Patroni's ``bootstrap`` method that restores to ``target`` (its "custom bootstrap")."""
    return {
        "method": "pitr",
        "pitr": {
            "command": str(script),
            "keep_existing_recovery_conf": False,
            "recovery_conf": {
                "restore_command": f"cp {archive}/%f %p",
                "recovery_target_time": target,
                # Open for writes at the target (Patroni waits for the end of recovery; with
                # "pause", PostgreSQL's default, it would wait for ever).
                "recovery_target_action": "promote",
                "recovery_target_timeline": "latest",
            },
        },
    }


def restore(cluster: PatroniCluster, base: Path, target: str) -> tuple[float, float]:
    """Patroni on the first host with the restoring method, then on the others (each host has
    the same configuration; only the one that initializes the cluster runs the method, the
    others clone it). Seconds until the restored leader takes writes, until the cluster is
    whole (both standbys streaming, one synchronous)."""
    script = restore_script(cluster.root, cluster.user, base)
    bootstrap = pitr_bootstrap(script, cluster.archive, target)
    first, *others = cluster.members
    began = time.monotonic()
    cluster.start_patroni(first, bootstrap)
    try:
        cluster.wait_leader(RESTORE_TIMEOUT)
    except RuntimeError as exc:
        raise RuntimeError(f"{exc}\n{tail(first.folder / 'patroni.out')}") from exc
    writable = time.monotonic() - began
    for member in others:
        cluster.start_patroni(member, bootstrap)
    cluster.wait_members(WHOLE_AGAIN)
    return writable, time.monotonic() - began


def at_once(stop: Callable[[T], object], each: list[T]) -> None:
    """``stop`` of every one of ``each`` at the same time (each waits for its own end)."""
    with ThreadPoolExecutor(max_workers=max(1, len(each))) as pool:
        list(pool.map(stop, each))


class Watch(threading.Thread):
    """A client asking one host for a game every quarter second while the cluster is stopped
    and restored: what it was answered ("200", "503 Retry-After", "no answer", ...) and the
    slowest answer."""

    def __init__(self, server: Server, game: str) -> None:
        super().__init__(daemon=True)
        self.server, self.game = server, game
        self.answers: Counter[str] = Counter()
        self.slowest = 0.0
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            began = time.monotonic()
            conn = http.client.HTTPConnection(self.server.host, self.server.port, timeout=15)
            try:
                conn.request("GET", self.game)
                response = conn.getresponse()
                response.read()
                retry = " Retry-After" if response.getheader("Retry-After") else ""
                self.answers[f"{response.status}{retry}"] += 1
                self.slowest = max(self.slowest, time.monotonic() - began)
            except (OSError, http.client.HTTPException):
                self.answers["no answer"] += 1
            finally:
                conn.close()
            self.done.wait(0.25)

    def stop(self) -> dict[str, int]:
        self.done.set()
        self.join(30)
        return dict(self.answers)


def tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


# --- the checks ---------------------------------------------------------------------------------


def timeline_and_lsn(member: Member) -> tuple[int, str]:
    """The timeline a primary writes on (its WAL file's first 8 hex digits) and its position."""
    with psycopg.connect(member.url("postgres"), connect_timeout=5) as conn:
        name, lsn = conn.execute(
            "SELECT pg_walfile_name(pg_current_wal_lsn()), pg_current_wal_lsn()::text"
        ).fetchall()[0]
    return int(str(name)[:8], 16), str(lsn)


def standby_events(member: Member, lsn: str, timeout: float = 60) -> dict[str, int]:
    """A standby's events once it has replayed up to ``lsn`` (the leader's), and the timeline
    it receives (its WAL receiver's)."""
    until = time.monotonic() + timeout
    query = (
        "SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn,"
        " (SELECT received_tli FROM pg_stat_wal_receiver)"
    )
    while time.monotonic() < until:
        with psycopg.connect(member.url(), connect_timeout=5) as conn:
            caught_up, timeline = conn.execute(query, (lsn,)).fetchall()[0]
        if caught_up:
            events = sum(count_events(member.url()).values())
            return {"events": events, "timeline": int(timeline or 0)}
        time.sleep(0.2)
    raise RuntimeError(f"{member.name} did not replay up to {lsn} within {timeout:.0f} s")


def check_database(
    cluster: PatroniCluster, before: dict[UUID, int], after: dict[UUID, int], result: Pitr
) -> None:
    leader = cluster.leader()
    if leader is None:
        raise RuntimeError(f"no leader after the restore: {cluster.roles()}")
    got = count_events(leader.url())
    result.restored = compare(before, after, got, audits(leader.url(), list(got)))
    result.timeline, lsn = timeline_and_lsn(leader)
    for member in cluster.members:
        if member is not leader:
            result.standbys[member.name] = standby_events(member, lsn)


def check_service(
    servers: list[Server], first: list[str], second: list[str], before: dict[UUID, int]
) -> tuple[int, int, list[str]]:
    """Every host asked for every game: a game of the first set audited (its hash chain, the
    service's signature on its end, as many events as before the target), one of the second
    answered 404. (audited, gone, what failed)."""
    from cardroom_client import Client

    audited, gone, failures = 0, 0, []
    for server in servers:
        with Client(server.base) as client:
            for game in first:
                report = client.json("GET", f"{game}/audit")
                events = before.get(UUID(game.rsplit("/", 1)[-1]))
                if (
                    report.get("ok") is True
                    and report["chain"]["ok"] is True
                    and report["signature"]["ok"] is True
                    and report["events"] == events
                ):
                    audited += 1
                else:
                    failures.append(f"{server.host} {game}: {json.dumps(report)[:300]}")
            for game in second:
                status = client.request("GET", game, ok=(200, 404)).status_code
                gone += status == 404
                if status != 404:
                    failures.append(f"{server.host} {game}: {status}, played after the target")
    return audited, gone, failures


def judge(result: Pitr, first_ids: set[UUID], hosts: int) -> None:
    r, problems = result.restored, result.problems
    if r is None:
        problems.append("nothing restored")
        return
    if r.missing or r.extra or r.restored != r.before or r.after <= 0:
        problems.append(f"events: {r.missing} missing, {r.extra} after the target restored")
    if r.games != len(first_ids) or r.audits_ok != r.games:
        problems.append(f"{r.games} games restored ({len(first_ids)} before the target),"
                        f" {r.audits_ok} with a whole chain")  # fmt: skip
    if result.timeline <= 1:
        problems.append(f"the restored leader writes on timeline {result.timeline}")
    for name, standby in result.standbys.items():
        if standby != {"events": r.restored, "timeline": result.timeline}:
            problems.append(f"{name}: {standby}, the leader {r.restored} on {result.timeline}")
    if len(result.standbys) != hosts - 1:
        problems.append(f"{len(result.standbys)} standbys follow the restored leader")
    if result.audited != hosts * len(result.first) or result.gone != hosts * len(result.second):
        problems.append("the service does not serve what was restored (above)")
    wrong = set(result.during_restore) - {"200", "503 Retry-After"}
    if wrong or result.seconds.get("slowest answer during the restore", 0) > ANSWER_BOUND:
        problems.append(f"during the restore: {result.during_restore}, {result.seconds}")


# --- the drill ----------------------------------------------------------------------------------


def drill(options: PitrOptions, log: Path | None = None) -> Pitr:
    """Build the cluster, back up, play, restore, check; tear everything down (on failure too)."""
    reason = available()
    if reason is not None:
        raise RuntimeError(reason)
    log = log or Path(tempfile.mkstemp(prefix="cardroom-pitr-", suffix=".log")[1])
    result = Pitr(options, load=[os.getloadavg()[0]])
    folder = Path(tempfile.mkdtemp(prefix="cardroom-pitr-hosts-"))  # the hosts' working folder
    began = time.monotonic()
    try:
        with Switch(3) as switch, PatroniCluster(switch, fsync=options.fsync) as cluster:
            result.made = [*switch.made, str(folder), str(cluster.root)]
            servers = servers_for(cluster, switch, HaOptions(workers=options.workers), log, folder)
            try:
                start_all(servers)
                cluster.wait_members(WHOLE_AGAIN)
                result.seconds["build"] = round(time.monotonic() - began, 1)
                run(cluster, servers, options, log, result)
            finally:
                for server in servers:
                    server.stop()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        result.seconds["whole drill"] = round(time.monotonic() - began, 1)
        result.load.append(os.getloadavg()[0])
    return result


def run(
    cluster: PatroniCluster, servers: list[Server], options: PitrOptions, log: Path, result: Pitr
) -> None:
    """Steps 1 to 6 of the module's docstring on a built cluster, its hosts serving."""
    base, before, after = back_up_and_play(cluster, servers, options, log, result)
    watch = Watch(servers[0], result.first[0])
    if options.restart_hosts:
        at_once(Server.stop, servers)
    else:
        watch.start()
    try:
        restore_and_check(cluster, servers, options, base, (before, after), result)
    finally:
        if watch.is_alive():
            result.during_restore = watch.stop()
            result.seconds["slowest answer during the restore"] = round(watch.slowest, 2)
    if options.after_restore:
        result.after_restore = len(play(servers, options, options.after_restore, log))
    judge(result, set(before), len(cluster.members))


def back_up_and_play(
    cluster: PatroniCluster, servers: list[Server], options: PitrOptions, log: Path, result: Pitr
) -> tuple[Path, dict[UUID, int], dict[UUID, int]]:
    """Steps 1 to 3: the base backup; the games before the target, the target, the games after
    it, archived. (The base backup, the events per game before the target, after it.)"""
    source = cluster.sync_standby()
    if source is None:
        raise RuntimeError(f"no synchronous standby to back up from: {cluster.roles()}")
    at = time.monotonic()
    base = base_backup(cluster, source, options.fsync)
    result.seconds["base backup"] = round(time.monotonic() - at, 1)
    result.base_mb = round(sum(f.stat().st_size for f in base.rglob("*") if f.is_file()) / 2**20, 1)
    url = cluster.service_url()  # the owner's, to whichever host leads
    result.first = play(servers, options, options.before, log)
    before = count_events(url)
    result.target, lsn = record_target(url)
    # The 16 MB segments the restore replays: from the base backup's first to the target's.
    result.replayed = (wal_bytes(lsn) >> 24) - (wal_bytes(backup_start(base)) >> 24) + 1
    result.second = play(servers, options, options.after, log)
    after = count_events(url)
    archive_current(url)
    return base, before, after


def restore_and_check(
    cluster: PatroniCluster,
    servers: list[Server],
    options: PitrOptions,
    base: Path,
    counts: tuple[dict[UUID, int], dict[UUID, int]],
    result: Pitr,
) -> None:
    """Steps 4 to 6: the cluster stopped, restored to the target, checked; the service asked."""
    at = time.monotonic()
    stop_cluster(cluster)
    result.seconds["Patroni stopped, etcd cleared"] = round(time.monotonic() - at, 1)
    result.segments = sum(1 for f in cluster.archive.iterdir() if len(f.name) == 24)
    writable, whole = restore(cluster, base, result.target)
    result.seconds["restore: leader writable"] = round(writable, 1)
    result.seconds["restore: both standbys streaming"] = round(whole, 1)
    check_database(cluster, *counts, result)
    at = time.monotonic()
    if options.restart_hosts:
        start_all(servers)
    result.audited, result.gone, failures = check_service(
        servers, result.first, result.second, counts[0]
    )
    result.seconds["the service's checks"] = round(time.monotonic() - at, 1)
    result.problems += failures[:10]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    defaults = PitrOptions()
    parser.add_argument("--before", type=int, default=defaults.before)
    parser.add_argument("--after", type=int, default=defaults.after)
    parser.add_argument("--after-restore", type=int, default=defaults.after_restore)
    parser.add_argument("--workers", type=int, default=defaults.workers)
    parser.add_argument("--restart-hosts", action="store_true")
    parser.add_argument("--no-fsync", action="store_true")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    options = PitrOptions(
        before=args.before,
        after=args.after,
        after_restore=args.after_restore,
        workers=args.workers,
        restart_hosts=args.restart_hosts,
        fsync=not args.no_fsync,
    )
    log = Path(tempfile.mkstemp(prefix="cardroom-pitr-", suffix=".log")[1])
    result = drill(options, log)
    print(result.summary())
    if result.ok:
        log.unlink()
    else:
        print(f"the servers' log: {log}")
    if args.json:
        args.json.write_text(json.dumps(asdict(result), indent=2, default=str))
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
