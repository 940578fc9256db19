"""A point-in-time restore into the Patroni cluster (issue 39, item 7; docs/scaling.md,
"Backups"), reduced (bench/pitr_patroni.py): the high-availability drill's three hosts (network
namespaces, etcd + Patroni + PostgreSQL 15, ``cardroom serve`` with the app role and
``CARDROOM_HOSTS``), a base backup from the synchronous standby, one game played before a
recorded target and one after, the WAL archived; Patroni stopped everywhere, the cluster's keys
removed, and Patroni started again with a custom bootstrap method that restores the base backup
and replays the archive up to the target. The restored leader holds every event of the game
before the target and none of the one after, on a new timeline; both standbys clone it and
stream from it with the same events; every host, left running through the restore, serves the
restored game with an audit that passes (its hash chain and the service's signature) and answers
404 for the later one (nothing it cached of that game survives).

Root, namespaces and Debian's patroni, etcd-server and postgresql-15 (`.ci/run` installs them):
skipped with the reason without them, except under CI (CI=true), where it fails.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from test_ha_drill import namespaces, one_cluster

from bench.pitr_patroni import PitrOptions, drill, pitr_bootstrap, restore_script


def test_a_point_in_time_restore_into_the_patroni_cluster(tmp_path: Path) -> None:
    options = PitrOptions(before=1, after=1, after_restore=0, workers=1, fsync=False)
    with one_cluster():
        result = drill(options, log=tmp_path / "servers.log")
    print(result.summary())
    assert result.ok, result.summary()
    restored = result.restored
    assert restored is not None
    assert restored.before > 0 and restored.after > 0  # events on both sides of the target
    assert restored.missing == restored.extra == 0
    assert restored.restored == restored.before
    assert restored.games == restored.audits_ok == 1  # the game before the target, chain whole
    assert result.timeline >= 2  # promoted at the target: a new timeline
    following = {"events": restored.restored, "timeline": result.timeline}
    assert list(result.standbys.values()) == [following, following]
    assert result.audited == 3 and result.gone == 3  # every host: the audit, the 404
    # Meanwhile a client of one host got the game or a 503 to retry, nothing else, in time.
    assert set(result.during_restore) <= {"200", "503 Retry-After"}, result.during_restore
    assert result.during_restore.get("503 Retry-After", 0) > 0  # the cluster was down
    log = (tmp_path / "servers.log").read_text()
    assert "connections: 3 host(s) x 1 worker(s) x" in log  # CARDROOM_HOSTS in the budget
    assert "Running upgrade" not in log  # the app role migrates nothing
    # Nothing left behind: its namespaces, its bridge, its folders.
    assert not set(result.made) & namespaces()
    assert not any(Path(made).exists() for made in result.made[-2:])


def test_the_restore_command_puts_the_base_backup_where_patroni_says(tmp_path: Path) -> None:
    """Patroni calls the custom bootstrap's command with ``--scope=`` and ``--datadir=``
    (patroni/postgresql/bootstrap.py); the command copies the base backup there, private."""
    base = tmp_path / "base"
    (base / "global").mkdir(parents=True)
    (base / "PG_VERSION").write_text("15\n")
    (base / "global" / "pg_control").write_bytes(b"\x00" * 8)
    user = Path(tmp_path).owner()
    script = restore_script(tmp_path, user, base)
    data = tmp_path / "member" / "data"
    done = subprocess.run(
        [str(script), "--scope=cardroom", f"--datadir={data}"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert (data / "PG_VERSION").read_text() == "15\n"
    assert (data / "global" / "pg_control").read_bytes() == b"\x00" * 8
    assert data.stat().st_mode & 0o777 == 0o700  # PostgreSQL refuses a data directory others read
    method = pitr_bootstrap(script, tmp_path / "archive", "2026-11-28 15:00:00+00")
    recovery = method[method["method"]]["recovery_conf"]
    assert recovery["recovery_target_action"] == "promote"  # "pause" would wait for ever
    assert recovery["restore_command"] == f"cp {tmp_path / 'archive'}/%f %p"
