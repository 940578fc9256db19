"""``GET /readyz`` turns 503 while the database's disk is full, and 200 again once it has room.

The fault is real: the readiness probe's table (migration 0011) is moved to a tablespace on a
tmpfs of 1 MiB, which the test then fills. PostgreSQL fails the probe's write with ``53100
disk_full`` ("could not extend file"), as it fails appends on a full disk. This needs root (to
mount the tmpfs) and a PostgreSQL server on this machine (to see the mount). Outside CI a machine
without them skips the test and says why; in CI (``CI=true``) it must run.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from service.http.app import create_app
from service.store import db
from service.store.events import EventStore, StoreUnavailable

CHUNK = b"\0" * 65536


def _cannot_run_here(admin_url: str) -> str | None:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return "mounting a tmpfs needs root"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        data = conn.execute("SHOW data_directory").fetchone()[0]
    if not Path(data).is_dir():
        return f"the PostgreSQL server runs elsewhere (its {data} is not on this machine)"
    return None


@pytest.fixture
def tiny_disk(database_url: str) -> Iterator[tuple[str, Path]]:
    """A scratch database whose readiness_probe table lives on a 1 MiB tmpfs: (url, mount)."""
    why = _cannot_run_here(database_url)
    if why is not None:
        if os.environ.get("CI", "").lower() in {"true", "1", "yes"}:
            pytest.fail(f"the disk-full test must run in CI: {why}")
        pytest.skip(f"the disk-full test needs root and a local PostgreSQL: {why}")
    with psycopg.connect(database_url, autocommit=True) as conn:
        data = Path(conn.execute("SHOW data_directory").fetchone()[0])
    owner = data.stat()
    # not under pytest's tmp_path: its parents are private to root, the server's user must reach
    # the mount point
    mount = Path(tempfile.mkdtemp(prefix="cardroom-tiny-"))
    mount.chmod(0o755)
    options = f"size=1m,mode=0700,uid={owner.st_uid},gid={owner.st_gid}"
    subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(mount)], check=True)
    space = f"cardroom_tiny_{uuid.uuid4().hex[:8]}"
    name = f"cardroom_disk_{uuid.uuid4().hex[:8]}"
    url = None
    try:
        with psycopg.connect(database_url, autocommit=True) as conn:
            conn.execute(
                sql.SQL("CREATE TABLESPACE {} LOCATION {}").format(
                    sql.Identifier(space), sql.Literal(str(mount))
                )
            )
        url = db.ensure_database(database_url, name)
        db.migrate(url)
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(
                sql.SQL("ALTER TABLE readiness_probe SET TABLESPACE {}").format(
                    sql.Identifier(space)
                )
            )
        yield url, mount
    finally:
        if url is not None:
            db.drop_database(database_url, name)
        with psycopg.connect(database_url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP TABLESPACE IF EXISTS {}").format(sql.Identifier(space)))
        subprocess.run(["umount", str(mount)], check=True)
        mount.rmdir()


def fill(mount: Path) -> Path:
    """Write to ``mount`` until it is full (unbuffered: nothing is left to write on close); the
    file that filled it."""
    filler = mount / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while True:
            os.write(fd, CHUNK)
    except OSError as exc:
        assert exc.errno == errno.ENOSPC, exc
    finally:
        os.close(fd)
    return filler


def test_readyz_is_false_while_the_disk_is_full(tiny_disk: tuple[str, Path]) -> None:
    url, mount = tiny_disk
    with db.make_pool(url, max_size=2) as pool:
        client = create_app(pool=pool).test_client()
        assert client.get("/readyz").status_code == 200
        filler = fill(mount)
        assert shutil.disk_usage(mount).free < 8192  # not even one page of PostgreSQL's
        ready = client.get("/readyz")
        assert ready.status_code == 503, ready.json
        assert ready.json["code"] == "not_ready"
        assert ready.json["checks"]["database_commits"].startswith("disk_full: "), ready.json
        with pytest.raises(StoreUnavailable, match="No space left on device"):  # the cause
            EventStore(pool).check_writable()
        assert ready.headers["Retry-After"]
        assert client.get("/healthz").status_code == 200  # reads still work
        assert client.get("/livez").status_code == 200  # no reason to restart the process
        filler.unlink()
        assert client.get("/readyz").status_code == 200  # room again: ready again
