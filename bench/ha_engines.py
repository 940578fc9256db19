"""The two high-availability engines side by side, on the same switched network of namespaces
(bench/ha_net.py), the way docs/scaling.md chose between them: Patroni (with etcd) and
pg_auto_failover. For each: time to build three PostgreSQL 15 nodes, the weight of everything
running (processes, resident memory), and seconds from cutting the primary's host off the network
to the first write through a libpq multi-host URL (``target_session_attrs=read-write``), then
seconds from healing the partition until the old primary is a standby again.

    python -m bench.ha_engines patroni
    python -m bench.ha_engines pg_auto_failover            # its default timeouts
    python -m bench.ha_engines pg_auto_failover --tuned    # the shortest timeouts it takes

Root only (namespaces); everything it starts is stopped, its namespaces and folders removed.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import psutil
import psycopg

from bench.ha_net import NetHost, Switch
from bench.patroni import PG_BIN, PatroniCluster

PARTITION_SECONDS = 30


def first_write(url: str, within: float) -> float | None:
    """Seconds until a write through ``url`` succeeds (one try every 0.1 s), None if never."""
    started = time.monotonic()
    while time.monotonic() - started < within:
        with contextlib.suppress(psycopg.Error):
            options = "-c statement_timeout=1000"
            with psycopg.connect(url, connect_timeout=1, options=options) as conn:
                conn.execute("CREATE TABLE IF NOT EXISTS probe (x int)")
                conn.execute("INSERT INTO probe VALUES (1)")
                return time.monotonic() - started
        time.sleep(0.1)
    return None


def patroni() -> None:
    with Switch(3) as switch:
        began = time.monotonic()
        with PatroniCluster(switch, fsync=False) as cluster:
            cluster.wait_members(90)
            print(f"built in {time.monotonic() - began:.1f} s; weight {cluster.weight()}")
            leader = cluster.leader()
            assert leader is not None
            switch.partition(leader.host)
            cut = time.monotonic()
            print(
                f"partition of {leader.name}: first write {first_write(cluster.service_url(), 90)}"
            )
            time.sleep(max(0.0, cut + PARTITION_SECONDS - time.monotonic()))
            switch.heal(leader.host)
            healed = time.monotonic()
            cluster.wait_members(120)
            print(f"{cluster.roles()}; all back {time.monotonic() - healed:.1f} s after healing")


class AutoFailover:
    """A monitor (a fourth host: pg_auto_failover's monitor is a node of its own) and three
    Postgres nodes under ``pg_autoctl``. Each on its own port: they share /var/run/postgresql."""

    def __init__(self, switch: Switch, tuned: bool) -> None:
        self.switch, self.tuned = switch, tuned
        self.root = Path(tempfile.mkdtemp(prefix="cardroom-pgaf-"))
        shutil.chown(self.root, "postgres")
        self.monitor, self.nodes = switch.hosts[3], switch.hosts[:3]
        self.processes: list[subprocess.Popen[bytes]] = []

    def autoctl(self, host: NetHost, *argv: str, log: str | None = None) -> None:
        env = [f"XDG_CONFIG_HOME={self.root}/config", f"XDG_DATA_HOME={self.root}/data"]
        env.append(f"PATH={PG_BIN}:{os.environ['PATH']}")
        command = [*host.prefix, "runuser", "-u", "postgres", "--", "env", *env]
        command += ["pg_autoctl", *argv]
        if log is not None:
            with (self.root / log).open("ab") as out:
                process = subprocess.Popen(command, stdout=out, stderr=out, start_new_session=True)
            self.processes.append(process)
            return
        subprocess.run(command, capture_output=True, check=True, timeout=300)

    @property
    def monitor_url(self) -> str:
        return f"postgresql://autoctl_node@{self.monitor.address}:5440/pg_auto_failover"

    def states(self) -> list[tuple[str, str, str]]:
        with psycopg.connect(self.monitor_url, connect_timeout=2) as conn:
            query = "SELECT nodename, reportedstate, goalstate FROM pgautofailover.node"
            return conn.execute(query + " ORDER BY nodeid").fetchall()

    def settled(self, count: int) -> bool:
        with contextlib.suppress(psycopg.Error):
            states = self.states()
            ok = ("single", "primary", "secondary")
            return len(states) == count and all(r == g and r in ok for _, r, g in states)
        return False

    def build(self) -> None:
        pgctl = str(PG_BIN / "pg_ctl")
        mon = str(self.root / "monitor")
        self.autoctl(self.monitor, "create", "monitor", "--pgdata", mon, "--pgport", "5440",
                     "--hostname", self.monitor.address, "--auth", "trust", "--no-ssl",
                     "--pgctl", pgctl)  # fmt: skip
        self.autoctl(self.monitor, "run", "--pgdata", mon, log="monitor.log")
        wait(lambda: bool(self._reachable()), 60)
        if self.tuned:
            self._tune()
        for i, host in enumerate(self.nodes):
            data = str(self.root / f"node{i}")
            self.autoctl(host, "create", "postgres", "--pgdata", data, "--pgport", str(5441 + i),
                         "--hostname", host.address, "--name", f"node{i}",
                         "--monitor", f"{self.monitor_url}?sslmode=disable", "--auth", "trust",
                         "--no-ssl", "--pgctl", pgctl, "--dbname", "cardroom",
                         "--pg-hba-lan")  # fmt: skip
            if self.tuned:
                self.autoctl(host, "config", "set", "--pgdata", data,
                             "timeout.network_partition_timeout", "5")  # fmt: skip
            self.autoctl(host, "run", "--pgdata", data, log=f"node{i}.log")
            wait(lambda n=i + 1: self.settled(n), 300)

    def _reachable(self) -> bool:
        with contextlib.suppress(psycopg.Error):
            psycopg.connect(self.monitor_url, connect_timeout=1).close()
            return True
        return False

    def _tune(self) -> None:
        """The monitor's health checks at their shortest sensible values (milliseconds)."""
        for name, value in (
            ("health_check_period", 1000),
            ("health_check_timeout", 1000),
            ("health_check_max_retries", 1),
            ("health_check_retry_delay", 500),
            ("node_considered_unhealthy_timeout", 3000),
            ("primary_demote_timeout", 5000),
        ):
            self._psql(f"ALTER SYSTEM SET pgautofailover.{name} = {value}")
        self._psql("SELECT pg_reload_conf()")

    def _psql(self, query: str) -> None:
        command = [*self.monitor.prefix, "runuser", "-u", "postgres", "--", "psql", "-p", "5440"]
        subprocess.run([*command, "-d", "pg_auto_failover", "-c", query], check=True, timeout=30)

    def service_url(self) -> str:
        hosts = ",".join(f"{h.address}:{5441 + i}" for i, h in enumerate(self.nodes))
        return f"postgresql://postgres@{hosts}/cardroom?target_session_attrs=read-write"

    def weight(self) -> dict[str, float]:
        count, rss = 0, 0.0
        for process in self.processes:
            with contextlib.suppress(psutil.NoSuchProcess):
                root = psutil.Process(process.pid)
                for each in [root, *root.children(recursive=True)]:
                    count += 1
                    rss += each.memory_info().rss / 2**20
        return {"processes": count, "rss_mb": round(rss, 1)}

    def close(self) -> None:
        for process in self.processes:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
        for pid_file in self.root.glob("*/postmaster.pid"):
            with contextlib.suppress(OSError, ValueError, IndexError):
                os.kill(int(pid_file.read_text().split()[0]), signal.SIGKILL)
        time.sleep(0.5)  # the killed postmasters' children exit
        shutil.rmtree(self.root, ignore_errors=True)


def wait(condition: object, timeout: float) -> None:
    until = time.monotonic() + timeout
    while time.monotonic() < until:
        if condition():  # type: ignore[operator]
            return
        time.sleep(0.5)
    raise RuntimeError(f"not ready after {timeout:.0f} s")


def auto_failover(tuned: bool) -> None:
    with Switch(4) as switch:
        began = time.monotonic()
        cluster = AutoFailover(switch, tuned)
        try:
            cluster.build()
            print(f"built in {time.monotonic() - began:.1f} s; weight {cluster.weight()}")
            primary = next(
                cluster.nodes[int(name[4:])] for name, role, _ in cluster.states()
                if role == "primary"
            )  # fmt: skip
            switch.partition(primary)
            cut = time.monotonic()
            print(
                f"partition of the primary: first write {first_write(cluster.service_url(), 120)}"
            )
            time.sleep(max(0.0, cut + PARTITION_SECONDS - time.monotonic()))
            switch.heal(primary)
            healed = time.monotonic()
            wait(lambda: cluster.settled(3), 240)
            print(f"{cluster.states()}; all back {time.monotonic() - healed:.1f} s after healing")
        finally:
            cluster.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("engine", choices=("patroni", "pg_auto_failover"))
    parser.add_argument("--tuned", action="store_true", help="pg_auto_failover's short timeouts")
    args = parser.parse_args()
    if args.engine == "patroni":
        patroni()
    else:
        auto_failover(args.tuned)


if __name__ == "__main__":
    main()
