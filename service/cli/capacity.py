"""How many workers ``cardroom serve`` starts, and whether their connections fit the database.

The default worker count follows the CPUs this process may actually use: its CPU affinity
(``sched_getaffinity``: taskset, cpusets) and its cgroup v2 CPU quota (``cpu.max`` of its cgroup
and every parent: a container's ``--cpus``), not ``os.cpu_count()``, which counts the host's.

Every pool and connection a worker opens is counted (issue 39, item 6: a pool left out of the
count filled a leader's slots in the HA drill, "too many clients already" for 9 minutes): with
``CARDROOM_HOSTS`` hosts the service may hold hosts x workers x that many, which must fit the
server's ``max_connections`` less its reserved slots, or requests would fail with "too many
clients" under load instead of at start. What a worker opens (service/http/app.py):

- its pool (``service/store/db.py``, ``make_pool``): up to ``CARDROOM_POOL_MAX``;
- the live hub's reader (``service/live/reader.py``), which webhook delivery shares: one;
- the request deadline's watchdog (``service/store/budget.py``), shared by the store's reads,
  writes and turn deadlines: one;
- for each ``DATABASE_REPLICA_URL`` (``service/store/replicas.py``): another pool of up to
  ``CARDROOM_POOL_MAX`` and its own watchdog.

The standbys' connections are counted against the primary's slots too: a standby URL may reach
any member after a failover (the same hosts, ``prefer-standby``), and a hot standby's
``max_connections`` is at least its primary's (PostgreSQL requires it), so a sum that fits the
primary fits every server whichever takes which connections. The idempotency keys open nothing
of their own (their records go in with the change, on the pool's connection).
"""

from __future__ import annotations

import logging
import math
import os
from pathlib import Path

log = logging.getLogger(__name__)

CGROUP_ROOT = Path("/sys/fs/cgroup")
# The live hub's reader connection (service/live/reader.py) and the request deadline's watchdog,
# which cancels what outlives a request's budget (service/store/budget.py).
EXTRA_PER_WORKER = 2
EXTRA_PER_REPLICA = 1  # each standby's store has a watchdog of its own
WARN_SHARE = 0.8  # above this share of the server's slots, say so: others connect too


class BudgetExceeded(RuntimeError):
    """The service's connections would not fit the database server's ``max_connections``."""


def cgroup_quota(root: Path = CGROUP_ROOT, membership: Path = Path("/proc/self/cgroup")) -> float:
    """CPUs the cgroup v2 quota allows this process (the tightest of its cgroup and every
    parent); ``math.inf`` without a quota or without cgroup v2."""
    try:
        lines = membership.read_text().splitlines()
    except OSError:
        return math.inf
    relative = next((line[3:] for line in lines if line.startswith("0::")), None)
    if relative is None:
        return math.inf
    folder = root / relative.lstrip("/")
    quota = math.inf
    while True:
        quota = min(quota, _cpu_max(folder / "cpu.max"))
        if folder == root or root not in folder.parents:
            return quota
        folder = folder.parent


def _cpu_max(path: Path) -> float:
    """``cpu.max``: "<quota> <period>" in microseconds, or "max <period>" (no quota)."""
    try:
        fields = path.read_text().split()
    except OSError:
        return math.inf
    if len(fields) < 2 or fields[0] == "max":
        return math.inf
    try:
        return int(fields[0]) / int(fields[1])
    except (ValueError, ZeroDivisionError):
        return math.inf


def usable_cpus() -> float:
    """CPUs this process may use: its affinity, capped by its CPU quota."""
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    return min(float(affinity or os.cpu_count() or 1), cgroup_quota())


def default_workers() -> int:
    """One worker per usable CPU (rounded up), plus one: a worker waiting on the database
    leaves its CPU to another."""
    return max(1, math.ceil(usable_cpus())) + 1


def per_worker(pool_max: int, replicas: int = 0) -> tuple[int, str]:
    """Connections one worker may hold, and how they add up (every pool it opens)."""
    total = pool_max + EXTRA_PER_WORKER + replicas * (pool_max + EXTRA_PER_REPLICA)
    parts = f"CARDROOM_POOL_MAX {pool_max} + {EXTRA_PER_WORKER}"
    if replicas:
        parts += (
            f" + {replicas} DATABASE_REPLICA_URL x (CARDROOM_POOL_MAX {pool_max}"
            f" + {EXTRA_PER_REPLICA})"
        )
    return total, parts


def check_connection_budget(
    url: str, hosts: int, workers: int, pool_max: int, replicas: int = 0
) -> str:
    """Raise ``BudgetExceeded`` (one line) if ``hosts`` x ``workers`` x what one worker opens
    (:func:`per_worker`: its pool, the hub's, the watchdog's, and ``replicas`` standby pools)
    exceeds the slots of the server at ``url``; else a line saying how much is used."""
    import psycopg  # not at the top: `cardroom serve` patches for gevent before psycopg loads

    each, parts = per_worker(pool_max, replicas)
    budget = hosts * workers * each
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT current_setting('max_connections')::int,"
            " current_setting('superuser_reserved_connections')::int,"
            " coalesce(current_setting('reserved_connections', true), '0')::int"
        ).fetchone()
    assert row is not None
    maximum, reserved = row[0], row[1] + row[2]
    slots = maximum - reserved
    sum_up = f"{hosts} host(s) x {workers} worker(s) x {each} connections ({parts}) = {budget}"
    if budget > slots:
        raise BudgetExceeded(
            f"the connection budget {sum_up} exceeds the database's {slots} slots"
            f" (max_connections {maximum} - {reserved} reserved): lower --workers or"
            " CARDROOM_POOL_MAX, or raise max_connections (CARDROOM_HOSTS counts the hosts)"
        )
    if budget > WARN_SHARE * slots:
        log.warning(
            "connection budget %s of the database's %d slots: little room left", sum_up, slots
        )
    return f"{sum_up} of the database's {slots} slots"
