"""The database failover of bench/webhooks.py's at-least-once run (issue 36): the high-availability
drill's cluster (bench/ha_net.py's three hosts, bench/patroni.py's etcd + Patroni + PostgreSQL
15, ``synchronous_mode``), reached as every host of bench/ha.py reaches it (a multi-host URL,
``target_session_attrs=read-write``, the drill's libpq timeouts), and one failover struck in the
middle of the run: the leader's postmaster killed with ``kill -9`` (Patroni promotes the
synchronous standby), or a planned switchover.

Nothing here changes the drill: it only uses bench/patroni.py's cluster and its faults' helpers.
Root only (namespaces), Debian's patroni, etcd-server and postgresql-15; run it under
``flock /work/patroni.lock`` where other drills may run (one cluster at a time per machine).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from bench.ha import URL_OPTIONS
from bench.ha_faults import any_leader_since
from bench.ha_net import Switch
from bench.patroni import PatroniCluster, available

KINDS = ("kill", "switchover")
# What bench/ha.py's hosts run `cardroom serve` with against the cluster: no least-privilege
# role there (the cluster's database is the bench's own), libpq's shortest connect timeout.
SERVICE_ENV = {"CARDROOM_APP_ROLE": "", "CARDROOM_CONNECT_TIMEOUT": "2"}
WHOLE_AGAIN = 120.0


@contextmanager
def cluster_database() -> Iterator[tuple[PatroniCluster, str]]:
    """A running cluster, its database migrated: (cluster, the service's DATABASE_URL)."""
    reason = available()
    if reason is not None:
        raise RuntimeError(reason)
    with Switch(3) as switch, PatroniCluster(switch, fsync=False) as cluster:
        cluster.wait_members(WHOLE_AGAIN)
        yield cluster, cluster.service_url() + URL_OPTIONS


def strike(cluster: PatroniCluster, kind: str) -> dict[str, Any]:
    """One failover (``kind``: one of :data:`KINDS`); returns once the cluster is whole again,
    with what happened and when (seconds from the strike)."""
    began = time.monotonic()
    old = cluster.leader()
    if old is None:
        raise RuntimeError(f"no leader to fail over from: {cluster.roles()}")
    if kind == "kill":
        cluster.kill_postmaster(old)  # its backends exit; Patroni promotes the sync standby
        new, writable = any_leader_since(cluster, began, began + 60)
    else:
        sync = cluster.sync_standby()
        cluster.switchover(sync)
        new = cluster.wait_leader(60, not_=old)
        writable = time.monotonic() - began
    cluster.wait_members(WHOLE_AGAIN)
    return {
        "kind": kind,
        "old leader": old.name,
        "new leader": new.name if new is not None else None,
        "writable again after s": None if writable is None else round(writable, 2),
        "whole again after s": round(time.monotonic() - began, 2),
    }
