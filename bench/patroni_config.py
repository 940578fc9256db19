"""How the drill's etcd and Patroni members are configured (bench/patroni.py starts them): the
same settings docs/scaling.md ("Set-up") gives an operator, password authentication included.

It imports nothing of bench/patroni.py (which imports it): a member is anything with the
attributes of :class:`MemberLike`.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from bench.ha_net import NetHost

PG_BIN = Path("/usr/lib/postgresql/15/bin")
PG_PORT, API_PORT, ETCD_CLIENT, ETCD_PEER = 5432, 8008, 2379, 2380  # each host has its own
# Timing (Patroni's dynamic settings): a leader renews its key every LOOP_WAIT seconds, keeps it
# TTL seconds, and demotes itself when it cannot renew for RETRY_TIMEOUT (fencing happens before
# the key expires: LOOP_WAIT + 2 x RETRY_TIMEOUT <= TTL, Patroni's rule). These are the least
# Patroni 3.0 with etcd v3 works with: all three are whole seconds, and a member takes the leader
# key only with 1 s of RETRY_TIMEOUT left after renewing its lease (retry_timeout 1 never wins a
# leader race: tried, no failover at all). A failover waits for the key to expire (up to TTL
# after the cut), then 2 s for the cut-off member's REST API (the candidate's check, fixed in
# Patroni), then the promotion.
TTL, LOOP_WAIT, RETRY_TIMEOUT = 5, 1, 2
# etcd's election timeout (ms; a new etcd leader also extends every lease by that much) and its
# heartbeat: half of etcd's defaults, still 10 heartbeats per election timeout.
ETCD_HEARTBEAT_MS, ETCD_ELECTION_MS = 50, 500
# The control plane (etcd, Patroni) runs before the load on a busy machine, as an operator gives
# it priority: a starved etcd misses heartbeats and elects again and again. (PostgreSQL started
# by Patroni inherits it: the whole member is favoured over the drill's clients and hosts.)
PRIORITY = ("nice", "-n", "-10")
# The roles as docs/scaling.md names them: Patroni creates the replication and rewind roles at
# bootstrap (with these passwords); migrations create the app role (the drill sets its password).
SUPERUSER, REPLICATOR, REWINDER = "postgres", "replicator", "rewinder"


def _password() -> str:
    return secrets.token_hex(16)  # hex: nothing to escape in a URL or a pgpass line


@dataclass(frozen=True)
class Passwords:
    """One cluster's passwords, new for each drill (never written into the checkout)."""

    superuser: str = field(default_factory=_password)
    replication: str = field(default_factory=_password)
    rewind: str = field(default_factory=_password)
    app: str = field(default_factory=_password)


class MemberLike(Protocol):
    """What the configuration needs of a member (bench/patroni.py's ``Member``)."""

    index: int
    host: NetHost
    folder: Path

    @property
    def name(self) -> str: ...

    @property
    def data(self) -> Path: ...


# Every connection authenticates with a password (SCRAM), over TCP and the Unix socket alike;
# replication only as the replication role.
PG_HBA = [
    "local all all scram-sha-256",
    f"local replication {REPLICATOR} scram-sha-256",
    "host all all 0.0.0.0/0 scram-sha-256",
    f"host replication {REPLICATOR} 0.0.0.0/0 scram-sha-256",
]


def etcd_command(member: MemberLike, members: list[Any], token: str) -> list[str]:
    """How one etcd member is started (on its host, with the control plane's priority)."""
    a = member.host.address
    peers = ",".join(f"e{m.index}=http://{m.host.address}:{ETCD_PEER}" for m in members)
    return [
        *member.host.prefix, *PRIORITY, "etcd", "--name", f"e{member.index}",
        "--data-dir", str(member.folder / "etcd"),
        "--listen-client-urls", f"http://{a}:{ETCD_CLIENT},http://127.0.0.1:{ETCD_CLIENT}",
        "--advertise-client-urls", f"http://{a}:{ETCD_CLIENT}",
        "--listen-peer-urls", f"http://{a}:{ETCD_PEER}",
        "--initial-advertise-peer-urls", f"http://{a}:{ETCD_PEER}",
        "--initial-cluster", peers, "--initial-cluster-state", "new",
        "--initial-cluster-token", token,
        # An election after 0.5 s of silence. A new etcd leader extends every lease by that
        # much (Patroni's leader key included): a longer timeout delays the failover when the
        # host cut off held both leaders.
        "--heartbeat-interval", str(ETCD_HEARTBEAT_MS),
        "--election-timeout", str(ETCD_ELECTION_MS),
        "--logger", "zap", "--log-level", "warn",
    ]  # fmt: skip


def patroni_config(
    member: MemberLike, members: list[Any], archive: Path, fsync: bool, passwords: Passwords
) -> dict[str, Any]:
    """One Patroni member's configuration (its YAML file, as JSON)."""
    a = member.host.address
    parameters = {
        "max_connections": 200,
        "shared_buffers": "64MB",
        "fsync": "on" if fsync else "off",
        "password_encryption": "scram-sha-256",
        "wal_level": "replica",
        "hot_standby": "on",
        "wal_log_hints": "on",  # pg_rewind
        "wal_receiver_status_interval": "1s",
        # A cut-off peer is given up in seconds: a demoting leader's shutdown does not wait
        # a minute for its walsenders, and standbys turn to the new leader sooner.
        "wal_sender_timeout": "5s",
        "wal_receiver_timeout": "5s",
        "hot_standby_feedback": "on",
        "archive_mode": "on",
        "archive_command": f"test ! -f {archive}/%f && cp %p {archive}/%f",
    }
    return {
        "scope": "cardroom",
        "name": member.name,
        "log": {"level": "INFO", "dir": str(member.folder), "file_num": 1},
        "restapi": {"listen": f"{a}:{API_PORT}", "connect_address": f"{a}:{API_PORT}"},
        # No watchdog: the hosts are namespaces of one kernel, and one /dev/watchdog would
        # reboot the machine; Patroni's default (automatic) logged "not supported" on every
        # loop (docs/scaling.md, "Fencing", says how to set one up in production).
        "watchdog": {"mode": "off"},
        "etcd3": {"hosts": [f"{m.host.address}:{ETCD_CLIENT}" for m in members]},
        "bootstrap": {
            "dcs": {
                "ttl": TTL,
                "loop_wait": LOOP_WAIT,
                "retry_timeout": RETRY_TIMEOUT,
                "maximum_lag_on_failover": 1048576,
                # A leader whose PostgreSQL crashed fails over at once to the synchronous
                # standby (nothing acknowledged is lost) rather than recovering in place.
                "primary_start_timeout": 0,
                "synchronous_mode": True,
                "synchronous_mode_strict": False,
                "postgresql": {
                    "use_pg_rewind": True,
                    "remove_data_directory_on_rewind_failure": True,
                    "remove_data_directory_on_diverged_timelines": True,
                    "parameters": parameters,
                },
            },
            "initdb": [{"encoding": "UTF8"}, {"locale": "C.UTF-8"}, "data-checksums"],
            "pg_hba": PG_HBA,
        },
        "postgresql": {
            "listen": f"{a},127.0.0.1:{PG_PORT}",
            "connect_address": f"{a}:{PG_PORT}",
            "data_dir": str(member.data),
            "bin_dir": str(PG_BIN),
            "pgpass": str(member.folder / "pgpass"),
            # A new standby's clone starts at once (not after a spread checkpoint).
            "basebackup": [{"checkpoint": "fast"}],
            "authentication": {
                "superuser": {"username": SUPERUSER, "password": passwords.superuser},
                "replication": {"username": REPLICATOR, "password": passwords.replication},
                "rewind": {"username": REWINDER, "password": passwords.rewind},
            },
            "parameters": {"unix_socket_directories": str(member.folder)},
            "pg_hba": PG_HBA,
        },
        "tags": {"nofailover": False, "noloadbalance": False},
    }
