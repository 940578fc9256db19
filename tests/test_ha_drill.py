"""The high-availability drill, reduced (bench/ha.py): three hosts in network namespaces, each an
etcd member, a Patroni member with PostgreSQL 15 under it, and ``cardroom serve``; a few games
played through them while, one at a time, the leader's postmaster is killed with ``kill -9`` and
the leader's host is cut off the network and then let back. Nothing acknowledged is lost or
doubled, nothing is recorded that no client chose, every answer is a 2xx/4xx or a 503 with
Retry-After within the request budget, the service takes picks again within 10 s (15 s when the
host cut off also led etcd: docs/scaling.md, "Failover"), the old leader stops taking writes
before another takes them and comes back as a standby by itself. The service runs as the README
and docs/scaling.md deploy it (issue 39, item 6): the app role's URL with its password, the
owner having migrated; ``CARDROOM_HOSTS`` counting the three hosts in the connection budget;
``replicator`` and ``rewinder`` roles; SCRAM passwords for every connection; the hosts' keys and
files in a folder of the drill's own, never in the checkout.

It needs root (namespaces) and Debian's patroni, etcd-server and postgresql-15 (`.ci/run`
installs them). Without them, or where namespaces cannot be made, it is skipped with the reason,
except under CI (CI=true), where it fails: CI cannot pass without the drill.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench import patroni
from bench.ha import HaOptions, drill, serving_bound
from bench.ha_net import NoNamespaces
from bench.load import ROOT


def missing() -> str | None:
    if os.geteuid() != 0:
        return "the HA drill needs root (network namespaces)"
    return patroni.available()


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in {"true", "1", "yes"}


@contextlib.contextmanager
def one_cluster() -> Iterator[None]:
    """The block runs a Patroni cluster: skipped with the reason where the drill cannot run
    (failed under CI), and one such test at a time in the suite, whatever xdist's workers: the
    restore test's cluster beside the drill's once slowed a failover in CI past its 10 s bound
    (the new leader writable after 11.6 s)."""
    reason = missing()
    if reason is not None:
        if in_ci():
            pytest.fail(f"{reason}: .ci/run installs what it needs, as root")
        pytest.skip(reason)
    with (Path(tempfile.gettempdir()) / "cardroom-patroni-tests.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        except NoNamespaces as exc:  # root, but namespaces refused (no NET_ADMIN)
            if in_ci():
                raise
            pytest.skip(str(exc))


def namespaces() -> set[str]:
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False)
    return {line.split()[0] for line in listed.stdout.splitlines() if line.strip()}


def test_a_killed_or_cut_off_leader_loses_no_acknowledged_pick(tmp_path: Path) -> None:
    options = HaOptions(
        games=3, workers=1, faults=("kill", "partition"), partition_seconds=12, fsync=False
    )
    checkout_keys = ROOT / "data" / "keys"
    had_keys = checkout_keys.exists()  # a developer's own `cardroom serve` may have made them
    with one_cluster():
        result = drill(options, log=tmp_path / "servers.log")
    print(result.table())
    assert result.ok, result.table()  # every problem fails the drill, a late first pick too
    kill, partition = result.rows
    for row in (kill, partition):
        assert row.finished == row.audited == 3
        assert row.lost == row.doubled == row.unchosen == 0
        assert row.picks >= 3 * 4 * 3 * 7 - 5  # a few answers lost in the fault: resent, 409
        bound = serving_bound(row)  # 10 s; 15 s when the host cut off also led etcd
        assert bound is not None and row.serving_after is not None
        assert row.serving_after < bound
        assert row.bad_answers == row.over_budget == 0
        assert row.unavailable + row.ok_answers == row.answers > 0
    # Fencing: the old leader refused writes before another member took them (Patroni demotes a
    # leader that cannot renew its key, before the key expires); it came back as a standby with
    # no step of ours.
    demoted = partition.notes["old leader read-only after (s)"]
    promoted = partition.notes["new leader writable after (s)"]
    assert isinstance(demoted, float) and isinstance(promoted, float)
    assert demoted < promoted < options.partition_seconds
    assert partition.notes["old leader back as standby after heal (s)"] is not None
    # Deployed as documented: every session of the service is the app role's, the roles of
    # docs/scaling.md exist, every connection needs its password.
    deployment = result.deployment
    assert set(deployment["service sessions by user"]) == {"cardroom_app"}, deployment
    assert deployment["roles"] == ["cardroom_app", "replicator", "rewinder"], deployment
    assert deployment["pg_hba methods"] == ["scram-sha-256"], deployment
    assert deployment["app role without password"] == "refused", deployment
    log = (tmp_path / "servers.log").read_text()
    assert "connections: 3 host(s) x 1 worker(s) x" in log  # CARDROOM_HOSTS in the budget
    assert "Running upgrade" not in log  # the app role migrates nothing: the owner did
    # Nothing left behind: its namespaces, its bridge, its folders; nothing in the checkout.
    assert not set(result.made) & namespaces()
    assert result.made[-2].startswith(tempfile.gettempdir())  # the hosts' working folder
    assert not any(Path(made).exists() for made in result.made[-2:])
    assert checkout_keys.exists() == had_keys


def test_the_drills_configuration_imports_nothing_of_the_cluster() -> None:
    """No import circle (issue 39, item 13): bench/patroni.py starts the members configured by
    bench/patroni_config.py, which names a member by the attributes it reads (``MemberLike``)."""
    from test_layers import imports

    def imported(module: str) -> set[str]:
        path = ROOT / "bench" / f"{module.split('.')[-1]}.py"
        return {name.rsplit(".", 1)[0] for name in imports(path.read_text(), module)}

    assert "bench.patroni_config" in imported("bench.patroni")
    assert "bench.patroni" not in imported("bench.patroni_config")  # it was, for a type
