"""Backups (docs/scaling.md, "Backups"): a base backup plus the WAL archive restore the database
to a chosen moment (bench/backup.py): every event recorded before it, none recorded after it,
and every restored game's hash chain whole."""

from __future__ import annotations

from bench.backup import drill


def test_a_base_backup_and_the_wal_archive_restore_to_a_point_in_time() -> None:
    result = drill(games_before=1, games_after=1)
    print(result)
    assert result.before > 0 and result.after > 0
    assert result.missing == 0 and result.extra == 0
    assert result.restored == result.before
    assert result.games == result.audits_ok == 1  # the game played before the moment only
