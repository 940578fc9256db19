"""A Patroni cluster as an operator runs it (Debian's ``patroni`` and ``etcd-server``): on each
host of a bench/ha_net.py switch, an etcd member and a Patroni member that runs PostgreSQL 15
under it. Patroni holds the leader key in etcd; the leader's PostgreSQL takes the writes; the
others stream from it, one of them synchronous (``synchronous_mode``). When the leader's key
expires (its host died or was cut off), a synchronous standby is promoted; a leader that cannot
renew its key demotes itself (fencing); an old leader that comes back is rewound (``pg_rewind``)
or cloned again and follows the new one. No step is ours: we only start the daemons.

The service reaches the leader with a libpq multi-host URL over the three hosts and
``target_session_attrs=read-write``: only the leader accepts a read-write session. As the README
and docs/scaling.md tell an operator: every connection authenticates with a password (SCRAM),
replication as ``replicator``, ``pg_rewind`` as ``rewinder``; the migrations run as the owner,
the service as ``cardroom_app`` (:meth:`PatroniCluster.app_url`).

Everything lives in one temporary folder; ``close`` stops every process it started.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import psycopg
from psycopg import sql

from bench.ha_net import NetHost, Switch
from bench.patroni_config import (
    API_PORT,
    ETCD_CLIENT,
    PG_BIN,
    PG_PORT,
    PRIORITY,
    REPLICATOR,
    REWINDER,
    SUPERUSER,
    Passwords,
    etcd_command,
    patroni_config,
)
from bench.pg_cluster import server_user

DATABASE = "cardroom"
DEBIAN_PACKAGES = ("patroni", "etcd-server", "etcd-client", "postgresql-15")


def available() -> str | None:
    """Why this cannot run here, or None."""
    for tool in ("/usr/bin/patroni", "/usr/bin/etcd", str(PG_BIN / "postgres")):
        if not Path(tool).exists():
            return f"{tool} is missing: apt-get install {' '.join(DEBIAN_PACKAGES)}"
    return None


@dataclass
class Member:
    index: int
    host: NetHost
    folder: Path
    password: str  # the superuser's
    etcd: subprocess.Popen[bytes] | None = None
    patroni: subprocess.Popen[bytes] | None = None

    @property
    def name(self) -> str:
        return f"pg{self.index}"

    @property
    def data(self) -> Path:
        return self.folder / "data"

    def api(self, path: str, method: str = "GET", body: Any = None, timeout: float = 2) -> Any:
        """Patroni's REST API on this host: (status, parsed body)."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            f"http://{self.host.address}:{API_PORT}{path}", data=data, method=method
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                text = response.read().decode()
                status = response.status
        except urllib.error.HTTPError as error:
            text, status = error.read().decode(), error.code
        with contextlib.suppress(ValueError):
            return status, json.loads(text)
        return status, text

    def postmaster(self) -> psutil.Process | None:
        try:
            pid = int((self.data / "postmaster.pid").read_text().split()[0])
            return psutil.Process(pid)
        except (OSError, ValueError, IndexError, psutil.NoSuchProcess):
            return None

    def url(self, database: str = DATABASE) -> str:
        """The superuser's URL to this member alone (the drill's own checks and faults)."""
        return f"postgresql://{SUPERUSER}:{self.password}@{self.host.address}:{PG_PORT}/{database}"

    def socket_connect(self, **kwargs: Any) -> psycopg.Connection[Any]:
        """A superuser session over this member's Unix socket (works while its host is cut off)."""
        return psycopg.connect(
            host=str(self.folder), port=PG_PORT, user=SUPERUSER, password=self.password, **kwargs
        )


class PatroniCluster:
    def __init__(self, switch: Switch, root: Path | None = None, *, fsync: bool = True) -> None:
        self.switch, self.fsync = switch, fsync
        self.user = server_user() or "postgres"
        self.root = root or Path(tempfile.mkdtemp(prefix="cardroom-ha-"))
        shutil.chown(self.root, self.user)
        self.passwords = Passwords()
        self.members = [
            Member(i, host, self.root / f"pg{i}", self.passwords.superuser)
            for i, host in enumerate(switch.hosts)
        ]

    # --- configuration ------------------------------------------------------------------------

    @property
    def archive(self) -> Path:
        """The WAL archive every member's archive_command copies to (a shared folder here;
        a bucket or a backup host in production)."""
        return self.root / "wal-archive"

    # --- running ----------------------------------------------------------------------------

    def _popen(self, member: Member, argv: list[str], log: str) -> subprocess.Popen[bytes]:
        with (member.folder / log).open("ab") as out:
            return subprocess.Popen(argv, stdout=out, stderr=out, start_new_session=True)

    def start(self, timeout: float = 90) -> PatroniCluster:
        """etcd on every host, then Patroni on every host; until a leader takes writes and a
        synchronous standby streams from it; then the database is created and migrated."""
        self.archive.mkdir()
        shutil.chown(self.archive, self.user)
        for member in self.members:
            member.folder.mkdir()
            shutil.chown(member.folder, self.user)
            command = etcd_command(member, self.members, self.root.name)
            member.etcd = self._popen(member, command, "etcd.log")
        for member in self.members:
            self.start_patroni(member)
        leader = self.wait_leader(timeout)
        with psycopg.connect(leader.url("postgres"), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {DATABASE}")
        from service.store import db

        db.migrate(leader.url())  # as the owner; the service runs as the app role (app_url)
        with psycopg.connect(leader.url(), autocommit=True) as conn:
            password = sql.SQL("ALTER ROLE {} PASSWORD {}").format(
                sql.Identifier(db.APP_ROLE), sql.Literal(self.passwords.app)
            )
            conn.execute(password)
        self.wait_sync(timeout)
        return self

    def start_patroni(self, member: Member, bootstrap: dict[str, Any] | None = None) -> None:
        """Patroni on ``member``'s host; ``bootstrap``: more of its ``bootstrap`` section (a
        custom method: bench/pitr_patroni.py), used if this member initializes the cluster."""
        config = member.folder / "patroni.json"  # YAML is a superset of JSON
        settings = patroni_config(member, self.members, self.archive, self.fsync, self.passwords)
        settings["bootstrap"].update(bootstrap or {})
        config.write_text(json.dumps(settings))
        shutil.chown(config, self.user)
        argv = [*member.host.prefix, *PRIORITY, "runuser", "-u", self.user, "--", "patroni"]
        argv.append(str(config))
        member.patroni = self._popen(member, argv, "patroni.out")

    def dcs(self) -> dict[str, Any]:
        """The cluster's keys in etcd (the truth Patroni acts on), read through the first etcd
        member that answers with a quorum behind it: key (after the scope's prefix) -> value.
        (A member's own REST API may answer from a stale cache while it is cut off.)"""
        prefix = b"/service/cardroom/"
        body = {
            "key": base64.b64encode(prefix).decode(),
            "range_end": base64.b64encode(prefix[:-1] + b"0").decode(),  # "/" + 1
        }
        for member in self.members:
            request = urllib.request.Request(
                f"http://{member.host.address}:{ETCD_CLIENT}/v3/kv/range",
                data=json.dumps(body).encode(),
                method="POST",
            )
            try:
                with urllib.request.urlopen(request, timeout=1) as response:
                    kvs = json.loads(response.read()).get("kvs", [])
            except (OSError, ValueError):
                continue
            found = {}
            for kv in kvs:
                key = base64.b64decode(kv["key"])[len(prefix) :].decode()
                value = base64.b64decode(kv.get("value", "")).decode()
                with contextlib.suppress(ValueError):
                    value = json.loads(value)
                found[key] = value
            return found
        return {}

    def etcd_leader(self) -> Member | None:
        """The member whose etcd member leads etcd now (etcd's maintenance status)."""
        ids, leader = {}, None
        for member in self.members:
            request = urllib.request.Request(
                f"http://{member.host.address}:{ETCD_CLIENT}/v3/maintenance/status",
                data=b"{}",
                method="POST",
            )
            try:
                with urllib.request.urlopen(request, timeout=1) as response:
                    status = json.loads(response.read())
            except (OSError, ValueError):
                continue
            ids[str(status.get("header", {}).get("member_id"))] = member
            leader = str(status.get("leader")) if status.get("leader") else leader
        return ids.get(leader) if leader else None

    def roles(self) -> dict[str, tuple[str, str]]:
        """name -> (role, state) as the members last wrote them in etcd."""
        keys = self.dcs()
        return {
            name.removeprefix("members/"): (value.get("role", ""), value.get("state", ""))
            for name, value in keys.items()
            if name.startswith("members/") and isinstance(value, dict)
        }

    def leader(self) -> Member | None:
        """The member holding the leader key, if its PostgreSQL runs."""
        keys = self.dcs()
        name = keys.get("leader")
        state = keys.get(f"members/{name}", {})
        if isinstance(name, str) and isinstance(state, dict) and state.get("state") == "running":
            return self.member(name)
        return None

    def member(self, name: str) -> Member:
        return next(m for m in self.members if m.name == name)

    def sync_standby(self) -> Member | None:
        """The standby Patroni made synchronous, if it runs."""
        keys = self.dcs()
        sync = keys.get("sync", {})
        name = sync.get("sync_standby") if isinstance(sync, dict) else None
        state = keys.get(f"members/{name}", {})
        if isinstance(name, str) and isinstance(state, dict) and state.get("state") == "running":
            return self.member(name)
        return None

    def wait_leader(self, timeout: float, not_: Member | None = None) -> Member:
        until = time.monotonic() + timeout
        while time.monotonic() < until:
            leader = self.leader()
            if leader is not None and leader is not not_ and self.writable(leader):
                return leader
            time.sleep(0.2)
        raise RuntimeError(f"no leader after {timeout:.0f} s: {self.roles()}")

    def wait_sync(self, timeout: float) -> Member:
        until = time.monotonic() + timeout
        while time.monotonic() < until:
            sync = self.sync_standby()
            if sync is not None:
                return sync
            time.sleep(0.2)
        raise RuntimeError(f"no synchronous standby after {timeout:.0f} s: {self.roles()}")

    def whole(self) -> bool:
        """Every other member streams from the leader, one of them synchronously (the leader's
        own ``pg_stat_replication``), and Patroni names that one."""
        leader, sync = self.leader(), self.sync_standby()
        if leader is None or sync is None:
            return False
        rows = self.replication()
        streaming = {name for name, state, _ in rows if state == "streaming"}
        synchronous = {name for name, _, sync_state in rows if sync_state == "sync"}
        others = {m.name for m in self.members if m is not leader}
        return streaming == others and synchronous == {sync.name}

    def wait_members(self, timeout: float) -> None:
        """Until the cluster is whole again (a rejoined old leader included)."""
        until = time.monotonic() + timeout
        while time.monotonic() < until:
            if self.whole():
                return
            time.sleep(0.25)
        raise RuntimeError(
            f"not every member is back after {timeout:.0f} s: {self.dcs()}; the leader's"
            f" standbys: {self.replication()}"
        )

    def replication(self) -> list[tuple[Any, ...]]:
        """The leader's pg_stat_replication (name, state, sync_state), for diagnostics."""
        leader = self.leader()
        if leader is None:
            return []
        query = "SELECT application_name, state, sync_state FROM pg_stat_replication"
        try:
            with psycopg.connect(leader.url("postgres"), connect_timeout=2) as conn:
                return conn.execute(query).fetchall()
        except psycopg.Error:
            return []

    def deployment(self) -> dict[str, Any]:
        """How the service and the members authenticate, as the leader sees it: the users of
        the service's sessions, the roles of docs/scaling.md, pg_hba's methods, and whether
        the app role gets in without its password."""
        from service.store import db

        leader = self.leader()
        if leader is None:
            return {}
        with psycopg.connect(leader.url(), connect_timeout=2) as conn:
            sessions = conn.execute(
                "SELECT usename, count(*) FROM pg_stat_activity"
                " WHERE application_name LIKE 'cardroom%' GROUP BY usename ORDER BY usename"
            ).fetchall()
            roles = conn.execute(
                "SELECT rolname FROM pg_roles WHERE rolname IN (%s, %s, %s) ORDER BY rolname",
                (REPLICATOR, REWINDER, db.APP_ROLE),
            ).fetchall()
            methods = conn.execute(
                "SELECT DISTINCT auth_method FROM pg_hba_file_rules ORDER BY 1"
            ).fetchall()
        nowhere = self.root / "no-pgpass"  # libpq reads no password file: none is there
        try:
            bare = f"postgresql://{db.APP_ROLE}@{leader.host.address}:{PG_PORT}/{DATABASE}"
            psycopg.connect(bare, connect_timeout=2, passfile=str(nowhere)).close()
            without_password = "accepted"
        except psycopg.OperationalError:
            without_password = "refused"
        return {
            "service sessions by user": dict(sessions),
            "roles": [name for (name,) in roles],
            "pg_hba methods": [method for (method,) in methods],
            "app role without password": without_password,
        }

    @staticmethod
    def writable(member: Member) -> bool:
        try:
            with psycopg.connect(member.url("postgres"), connect_timeout=2) as conn:
                row = conn.execute("SELECT pg_is_in_recovery()").fetchone()
                return row is not None and not row[0]
        except psycopg.Error:
            return False

    def service_url(self, user: str = SUPERUSER, password: str | None = None) -> str:
        """The three hosts, the one taking writes, as ``user`` (default: the owner, who
        migrates)."""
        hosts = ",".join(f"{m.host.address}:{PG_PORT}" for m in self.members)
        secret = self.passwords.superuser if password is None else password
        return f"postgresql://{user}:{secret}@{hosts}/{DATABASE}?target_session_attrs=read-write"

    def app_url(self) -> str:
        """What every host's DATABASE_URL is (docs/scaling.md): the app role, with its
        password; ``cardroom serve`` then neither migrates nor holds the owner's secret."""
        from service.store import db

        return self.service_url(db.APP_ROLE, self.passwords.app)

    # --- faults -------------------------------------------------------------------------------

    def kill_postmaster(self, member: Member) -> None:
        """``kill -9`` of the postmaster only (its backends then exit, as PostgreSQL's do)."""
        postmaster = member.postmaster()
        if postmaster is not None:
            postmaster.send_signal(signal.SIGKILL)

    def kill_postgres(self, member: Member) -> None:
        """``kill -9`` of the postmaster and every process of it, at once."""
        postmaster = member.postmaster()
        if postmaster is None:
            return
        victims = [postmaster, *postmaster.children(recursive=True)]
        for process in victims:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.send_signal(signal.SIGKILL)

    def stop_member(self, member: Member) -> None:
        """The whole member dies: Patroni and its PostgreSQL, kill -9 (etcd stays)."""
        if member.patroni is not None:
            with contextlib.suppress(ProcessLookupError):
                os_killpg(member.patroni.pid)
            member.patroni.wait(timeout=30)
            member.patroni = None
        self.kill_postgres(member)

    def stop_patroni(self, member: Member, timeout: float = 60) -> None:
        """Patroni stopped as ``systemctl stop patroni`` stops it (SIGTERM): it shuts its
        PostgreSQL down cleanly and, on the leader, gives the leader key up. Killed if it has
        not ended within ``timeout``."""
        if member.patroni is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(member.patroni.pid, signal.SIGTERM)
        try:
            member.patroni.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.stop_member(member)
        member.patroni = None
        self.kill_postgres(member)  # nothing, unless Patroni left it running

    def switchover(self, to: Member | None = None) -> None:
        leader = self.leader()
        if leader is None:
            raise RuntimeError("no leader to switch over from")
        body = {"leader": leader.name, **({"candidate": to.name} if to else {})}
        status, answer = leader.api("/switchover", "POST", body, timeout=60)
        if status != 200:
            raise RuntimeError(f"switchover refused: {status} {answer}")

    # --- weight -------------------------------------------------------------------------------

    def weight(self) -> dict[str, Any]:
        """Processes and resident memory (MB) of etcd, Patroni and PostgreSQL, summed over hosts."""
        sums: dict[str, list[float]] = {"etcd": [0, 0], "patroni": [0, 0], "postgres": [0, 0]}
        for member in self.members:
            roots: dict[str, psutil.Process | None] = {
                "etcd": psutil.Process(member.etcd.pid) if member.etcd else None,
                "patroni": psutil.Process(member.patroni.pid) if member.patroni else None,
                "postgres": member.postmaster(),  # detached from Patroni (its own session)
            }
            for name, root in roots.items():
                if root is None:
                    continue
                with contextlib.suppress(psutil.NoSuchProcess):
                    for process in [root, *root.children(recursive=True)]:
                        sums[name][0] += 1
                        sums[name][1] += process.memory_info().rss / 2**20
        return {k: {"processes": int(v[0]), "rss_mb": round(v[1], 1)} for k, v in sums.items()}

    def close(self) -> None:
        for member in self.members:
            self.stop_member(member)
            if member.etcd is not None:
                with contextlib.suppress(ProcessLookupError):
                    os_killpg(member.etcd.pid)
                member.etcd.wait(timeout=30)
                member.etcd = None
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> PatroniCluster:
        try:
            return self.start()
        except BaseException:
            self.close()
            raise

    def __exit__(self, *exc: object) -> None:
        self.close()


def os_killpg(pid: int) -> None:
    """SIGKILL to a process group we started (``start_new_session``)."""
    os.killpg(pid, signal.SIGKILL)
