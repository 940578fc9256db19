"""A backup and a point-in-time restore, the way docs/scaling.md ("Backups") tells an operator to
do them: a PostgreSQL with its WAL archived (``archive_mode``, ``archive_command``), a base
backup (``pg_basebackup``), games played before and after a chosen moment, then the base backup
restored into a new data directory and replayed from the archive up to that moment
(``restore_command``, ``recovery_target_time``). The restored database must hold exactly the
events recorded before the moment, and every game in it must pass its audit.

    python -m bench.backup

Everything lives in one temporary folder with its own port; it is removed at the end.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from uuid import UUID

import psycopg
from psycopg.rows import dict_row

from bench.pg_cluster import DATABASE, Node, free_port, pg_bin, server_user

SETTINGS = {
    "wal_level": "replica",
    "archive_mode": "on",
    "archive_timeout": "60",
}


@dataclass
class Restored:
    before: int  # events recorded before the moment
    after: int  # events recorded after it (on the original)
    restored: int  # events in the restored database
    missing: int  # of those before, not restored
    extra: int  # restored, though recorded after the moment
    audits_ok: int  # games of the restored database whose audit passes
    games: int


def _configure(node: Node, archive: Path, root: Path, extra: dict[str, str]) -> None:
    settings = {
        **SETTINGS,
        "port": str(node.port),
        "listen_addresses": "'127.0.0.1'",
        "unix_socket_directories": f"'{root}'",
        "archive_command": f"'test ! -f {archive}/%f && cp %p {archive}/%f'",
        **extra,
    }
    with (node.directory / "postgresql.conf").open("a") as conf:
        conf.writelines(f"{key} = {value}\n" for key, value in settings.items())


def play(url: str, games: int, log: Path) -> None:
    """Whole games played through ``cardroom serve`` by bench/load.py's clients (each checked
    and audited there)."""
    from bench.load import PLAYERS, Options, run_load

    options = Options(clients=games * PLAYERS, games=games, workers=1, deadline=180)
    result = run_load(url, options, log=log)
    if not result.ok:
        raise RuntimeError(f"the games before the backup's moment failed: {result.problems}")


def count_events(url: str) -> dict[UUID, int]:
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT game_id, count(*) FROM events GROUP BY game_id").fetchall()
    return {game: int(n) for game, n in rows}


def drill(games_before: int = 2, games_after: int = 2) -> Restored:
    from service.store import db

    user = server_user()
    root = Path(tempfile.mkdtemp(prefix="cardroom-backup-"))
    archive = root / "archive"
    archive.mkdir()
    if user is not None:
        shutil.chown(root, user)
        shutil.chown(archive, user)
    primary = Node("primary", root / "primary", free_port(), "127.0.0.1", user)
    restored = Node("restored", root / "restored", free_port(), "127.0.0.1", user)
    try:
        primary.run(pg_bin() / "initdb", "-D", primary.directory, "-U", "postgres",
                    "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync")  # fmt: skip
        _configure(primary, archive, root, {})
        primary.start()
        primary.execute(f"CREATE DATABASE {DATABASE}")
        url = primary.url()
        db.migrate(url)
        primary.run(pg_bin() / "pg_basebackup", "-D", restored.directory, "-h", root,
                    "-p", str(primary.port), "-U", "postgres", "-X", "none", "--checkpoint=fast",
                    "--no-sync")  # fmt: skip
        play(url, games_before, root / "serve.log")
        before = count_events(url)
        time.sleep(0.05)
        moment = primary.execute("SELECT now()::text")[0][0]
        time.sleep(0.05)
        play(url, games_after, root / "serve.log")
        after = count_events(url)
        archive_current(primary.url(database="postgres"))
        primary.stop()
        # The restore: the base backup, the archive, a target time; promoted at the target.
        _configure(restored, archive, root, {
            "restore_command": f"'cp {archive}/%f %p'",
            "recovery_target_time": f"'{moment}'",
            "recovery_target_action": "'promote'",
        })  # fmt: skip
        (restored.directory / "recovery.signal").touch()
        if user is not None:
            shutil.chown(restored.directory / "recovery.signal", user)
        restored.start()
        _wait_promoted(restored)
        got = count_events(restored.url())
        return compare(before, after, got, audits(restored.url(), list(got)))
    finally:
        for node in (restored, primary):
            node.stop()
            node.kill()
        shutil.rmtree(root, ignore_errors=True)


def compare(
    before: dict[UUID, int], after: dict[UUID, int], got: dict[UUID, int], audits_ok: int
) -> Restored:
    """What a restore kept of the events per game counted ``before`` the moment and ``after``
    it (on the original), ``got`` being the restored database's."""
    return Restored(
        before=sum(before.values()),
        after=sum(after.values()) - sum(before.values()),
        restored=sum(got.values()),
        missing=sum(max(0, n - got.get(g, 0)) for g, n in before.items()),
        extra=sum(n - before.get(g, 0) for g, n in got.items() if n > before.get(g, 0)),
        audits_ok=audits_ok,
        games=len(got),
    )


def archive_current(url: str, timeout: float = 30) -> None:
    """The segment being written on the server at ``url`` (a primary) is closed and archived:
    the one holding the last writes, which a restore replays last."""
    with psycopg.connect(url, autocommit=True, connect_timeout=5) as conn:
        (last,) = conn.execute("SELECT pg_walfile_name(pg_current_wal_lsn())").fetchall()[0]
        conn.execute("SELECT pg_switch_wal()")
    wait_archived(url, str(last), timeout)


def wait_archived(url: str, segment: str, timeout: float = 30) -> None:
    """Until ``segment`` (a WAL file name) is archived by the server at ``url``. Why not "an
    older segment than the current one is": any earlier segment passes that at once, and the
    primary, stopped in immediate mode right after, then never archived the last one: the
    restore ended before its target and did not start (an intermittent failure of
    tests/test_backup_restore.py)."""
    until = time.monotonic() + timeout
    while time.monotonic() < until:
        with psycopg.connect(url, autocommit=True, connect_timeout=5) as conn:
            row = conn.execute("SELECT last_archived_wal FROM pg_stat_archiver").fetchone()
        archived = row[0] if row else None
        if archived is not None and str(archived) >= segment:
            return
        time.sleep(0.1)
    raise RuntimeError(f"the WAL segment {segment} was not archived")


def _wait_promoted(node: Node, timeout: float = 60) -> None:
    until = time.monotonic() + timeout
    while time.monotonic() < until:
        try:
            if node.execute("SELECT pg_is_in_recovery()")[0][0] is False:
                return
        except psycopg.Error:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"the restore did not finish:\n{node.log.read_text()[-2000:]}")


def audits(url: str, games: list[UUID]) -> int:
    """How many of ``games`` have a whole hash chain in the database at ``url``."""
    from domain.chain import first_break

    passed = 0
    with psycopg.connect(url) as conn:
        for game in games:
            cursor = conn.cursor(row_factory=dict_row)
            rows = cursor.execute(
                "SELECT game_id::text, version, type, schema_version, data, hash FROM events"
                " WHERE game_id = %s ORDER BY version",
                (game,),
            ).fetchall()
            passed += first_break(rows) is None
    return passed


def main() -> None:
    result = drill()
    print(result)


if __name__ == "__main__":
    main()
