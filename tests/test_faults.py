"""Faults during play (bench/load.py): the server killed with SIGKILL, and the database stopped,
in the middle of a load; nothing acknowledged is lost, no turn is half-applied, play goes on."""

from __future__ import annotations

import tempfile
from pathlib import Path

from bench.load import Database, Options, run_load


def test_a_killed_server_loses_no_acknowledged_pick(database_url: str, tmp_path: Path) -> None:
    options = Options(clients=24, games=6, workers=2, threads=16, deadline=90, crash=True)
    result = run_load(database_url, options, log=tmp_path / "server.log")
    print(result.summary())
    fault = result.fault
    assert fault is not None and fault.at and fault.back_at, result.summary()
    # ok: every game over and audited, every acknowledged pick (those before the kill among
    # them) in the log exactly once, each turn_revealed after exactly one pick per seat.
    assert result.ok, result.summary()
    assert fault.acked_before > 0 and result.acked_found == len(result.stats.acked)
    assert fault.first_pick_after is not None  # play went on after the restart


def test_a_database_outage_gets_quick_503s_and_recovers(tmp_path: Path) -> None:
    # A private PostgreSQL (never the machine's): it is stopped and started again.
    with tempfile.TemporaryDirectory(prefix="cardroom-outage-") as directory:
        database = Database(Path(directory))
        try:
            options = Options(
                clients=16, games=4, workers=2, threads=16, deadline=90, db_outage=True
            )
            result = run_load(database.url, options, database, log=tmp_path / "server.log")
        finally:
            database.close()
    print(result.summary())
    fault = result.fault
    assert fault is not None and fault.down_latencies, result.summary()
    assert set(fault.down_statuses) == {503}, fault.down_statuses
    assert max(fault.down_latencies) < 3.0, fault.down_latencies  # no hang (pool timeout: 5 s)
    assert fault.first_ok_after is not None and fault.first_ok_after < 5.0
    assert result.ok, result.summary()
