"""A throwaway PostgreSQL server of a test's own (initdb on a free port, in a temporary folder):
for faults the machine's server must never see (a missing synchronous standby, a restart onto
an older copy of its files). Built from bench/pg_cluster.py's ``Node``."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bench.pg_cluster import DATABASE, Node, free_port, pg_bin, server_user
from service.store import db


@contextmanager
def solo_postgres() -> Iterator[Node]:
    """A started server with the database ``cardroom``, migrated; stopped and deleted after."""
    user = server_user()
    root = Path(tempfile.mkdtemp(prefix="cardroom-solo-"))
    if user is not None:
        shutil.chown(root, user)
    node = Node("solo", root / "data", free_port(), "127.0.0.1", user)
    try:
        node.run(
            pg_bin() / "initdb", "-D", node.directory, "-U", "postgres", "--auth=trust",
            "-E", "UTF8", "--locale=C.UTF-8", "--no-sync",
        )  # fmt: skip
        with (node.directory / "postgresql.conf").open("a") as conf:
            conf.write(
                f"\nport = {node.port}\nlisten_addresses = '127.0.0.1'\n"
                f"unix_socket_directories = '{root}'\nfsync = off\nmax_connections = 100\n"
            )
        node.start()
        node.execute(f"CREATE DATABASE {DATABASE}")
        db.migrate(node.url())
        yield node
    finally:
        node.stop()
        node.kill()
        shutil.rmtree(root, ignore_errors=True)
