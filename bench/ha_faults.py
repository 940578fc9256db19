"""The faults of the high-availability drill (bench/ha.py), one per load run. Each waits until a
share of the picks is acknowledged (bench/load.py's ``_fault_due``), strikes, notes what the
engine did and when, and returns once the cluster is whole again (every member running, a
synchronous standby streaming), so the next fault starts from a healthy cluster.

``fault.back_at`` is set at the moment of the fault: the first acknowledged pick counted is the
first one *sent* after it (bench/load.py), so the figure is "from the fault to the first
acknowledged pick".
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import psycopg

from bench.ha_net import Switch
from bench.load import Fault, Run, Server, _fault_due
from bench.patroni import Member, PatroniCluster

WHOLE_AGAIN = 120.0  # seconds the cluster may take to be whole again after a fault


@dataclass
class Notes:
    """What the engine did, as seen from outside."""

    ended_at: float = 0.0  # the fault is over (partition healed, member back, ...)
    whole_at: float = 0.0  # every member back and streaming
    details: dict[str, float | str | None] = field(default_factory=dict)


FaultFunction = Callable[[Run], None]


def _start(run: Run) -> Fault | None:
    fault = _fault_due(run, "failover", "fault")
    if fault is not None:
        fault.back_at = fault.at
    return fault


def _whole(cluster: PatroniCluster, notes: Notes) -> None:
    cluster.wait_members(WHOLE_AGAIN)
    notes.whole_at = time.monotonic()


_NOT_TAKING_WRITES = ("shutting down", "starting up", "not yet accepting connections")


def read_only_since(member: Member, since: float, until: float) -> float | None:
    """Seconds from ``since`` until ``member``'s PostgreSQL refuses writes (in recovery, or not
    running), asked over its Unix socket every 0.1 s: this works while its host is cut off."""
    while time.monotonic() < until:
        try:
            with member.socket_connect(dbname="postgres", connect_timeout=1) as conn:
                row = conn.execute("SELECT pg_is_in_recovery()").fetchone()
                if row is not None and row[0]:
                    return time.monotonic() - since
        except psycopg.Error as exc:
            # Shutting down to demote, starting as a standby, or not running at all: it takes
            # no writes. (Any other refusal, "too many clients" say, proves nothing.)
            if member.postmaster() is None or any(w in str(exc) for w in _NOT_TAKING_WRITES):
                return time.monotonic() - since
        time.sleep(0.1)
    return None


def new_leader_since(
    cluster: PatroniCluster, old: Member, since: float, until: float
) -> tuple[Member | None, float | None]:
    """The member that took the writes after ``old``, and seconds from ``since``."""
    while time.monotonic() < until:
        for member in cluster.members:
            if member is not old and cluster.writable(member):
                return member, time.monotonic() - since
        time.sleep(0.1)
    return None, None


def kill_primary(cluster: PatroniCluster, notes: Notes) -> FaultFunction:
    """kill -9 of the leader's postmaster. With ``primary_start_timeout: 0`` Patroni fails over
    to the synchronous standby at once (the default, 300 s, first tries to start it again in
    place); the old leader rejoins as its standby."""

    def fault(run: Run) -> None:
        leader = cluster.leader()
        if (f := _start(run)) is None or leader is None:
            return
        cluster.kill_postmaster(leader)
        new, writable = any_leader_since(cluster, f.at, f.at + 60)
        notes.details["a leader writable again after (s)"] = writable and round(writable, 2)
        notes.details["leader after"] = "the same" if new is leader else (new.name if new else None)
        notes.ended_at = time.monotonic()
        _whole(cluster, notes)

    return fault


def any_leader_since(
    cluster: PatroniCluster, since: float, until: float
) -> tuple[Member | None, float | None]:
    """The first member found taking writes again, and seconds from ``since``."""
    time.sleep(0.5)  # the killed postmaster's backends are gone, its port closed
    while time.monotonic() < until:
        for member in cluster.members:
            if cluster.writable(member):
                return member, time.monotonic() - since
        time.sleep(0.1)
    return None, None


def partition_primary(
    cluster: PatroniCluster, switch: Switch, seconds: float, notes: Notes
) -> FaultFunction:
    """The leader's host cut off the network for ``seconds``, then back: when does the old
    leader stop taking writes (Patroni demotes it once it cannot renew its key), when does
    another take them, and how does the old one come back (pg_rewind, or a new clone)."""

    def fault(run: Run) -> None:
        leader = cluster.leader()
        if (f := _start(run)) is None or leader is None:
            return
        logged = log_size(leader)
        # A new etcd leader extends every lease (the leader key's too) by its election timeout:
        # the failover takes longer when the host cut off also led etcd.
        notes.details["cut-off host led etcd"] = "yes" if cluster.etcd_leader() is leader else "no"
        healed = False
        switch.partition(leader.host)
        # The fault is the cut, done: a pick sent before the link was down (while etcd was
        # asked, or while `ip` ran) reached the old leader, and does not count as served after.
        with run.stats.lock:
            f.at = f.back_at = time.monotonic()
            f.first_pick_after = None
        try:
            # Both watched at once: which came first, the old leader's demotion or the new one?
            successor: list[tuple[Member | None, float | None]] = []
            watcher = threading.Thread(
                target=lambda: successor.append(
                    new_leader_since(cluster, leader, f.at, f.at + seconds)
                ),
                daemon=True,
            )
            watcher.start()
            demoted = read_only_since(leader, f.at, f.at + seconds)
            watcher.join(seconds + 5)
            new, promoted = successor[0] if successor else (None, None)
            notes.details["old leader read-only after (s)"] = demoted and round(demoted, 2)
            notes.details["new leader writable after (s)"] = promoted and round(promoted, 2)
            notes.details["new leader"] = new.name if new else None
            time.sleep(max(0.0, f.at + seconds - time.monotonic()))
            switch.heal(leader.host)
            healed = True
        finally:
            if not healed:
                switch.heal(leader.host)
        notes.ended_at = time.monotonic()
        _whole(cluster, notes)
        notes.details["old leader back as standby after heal (s)"] = round(
            notes.whole_at - notes.ended_at, 2
        )
        notes.details["rejoined by"] = rejoin_method(leader, logged)

    return fault


def log_size(member: Member) -> int:
    with contextlib.suppress(OSError):
        return (member.folder / "patroni.log").stat().st_size
    return 0


def rejoin_method(member: Member, since: int) -> str:
    """How Patroni brought the old leader back, from what its log says after ``since`` bytes."""
    with contextlib.suppress(OSError):
        with (member.folder / "patroni.log").open("rb") as log:
            log.seek(since)
            text = log.read().decode(errors="replace").lower()
        if "running pg_rewind" in text:
            return "pg_rewind"
        if "removing data directory" in text or "using basebackup" in text:
            return "a new clone"
    return "following the new leader (nothing to rewind)"


def sync_standby_dies(cluster: PatroniCluster, down: float, notes: Notes) -> FaultFunction:
    """The synchronous standby dies (Patroni and PostgreSQL, kill -9) for ``down`` seconds.
    Policy (synchronous_mode, not strict): Patroni names the other standby synchronous; with no
    standby left, the leader takes writes alone (availability over durability)."""

    def fault(run: Run) -> None:
        sync = cluster.sync_standby()
        if (f := _start(run)) is None or sync is None:
            return
        cluster.stop_member(sync)
        until = f.at + down
        new_sync = None
        while time.monotonic() < until:
            new_sync = cluster.sync_standby()
            if new_sync is not None and new_sync is not sync:
                notes.details["other standby synchronous after (s)"] = round(
                    time.monotonic() - f.at, 2
                )
                break
            time.sleep(0.1)
        time.sleep(max(0.0, until - time.monotonic()))
        cluster.start_patroni(sync)
        notes.ended_at = time.monotonic()
        _whole(cluster, notes)

    return fault


def switchover(cluster: PatroniCluster, notes: Notes) -> FaultFunction:
    """A planned switchover to the synchronous standby (Patroni's REST API, as ``patronictl
    switchover`` does it)."""

    def fault(run: Run) -> None:
        sync, old = cluster.sync_standby(), cluster.leader()
        if (f := _start(run)) is None or sync is None:
            return
        cluster.switchover(sync)
        leader = cluster.wait_leader(60, not_=old)
        notes.details["new leader"] = leader.name
        notes.details["new leader writable after (s)"] = round(time.monotonic() - f.at, 2)
        notes.ended_at = time.monotonic()
        _whole(cluster, notes)

    return fault


def rolling_restart(servers: list[Server], cluster: PatroniCluster, notes: Notes) -> FaultFunction:
    """Every ``cardroom serve`` stopped (SIGTERM: gunicorn finishes what it is answering) and
    started again, one host after the other."""

    def fault(run: Run) -> None:
        if _start(run) is None:
            return
        restarts = []
        for server in servers:
            server.stop()
            restarts.append(round(server.start(), 2))
        notes.details["restart seconds per host"] = ", ".join(map(str, restarts))
        notes.ended_at = time.monotonic()
        _whole(cluster, notes)

    return fault
