"""Load: 24 clients play 6 whole 4-player games against ``cardroom serve`` (2 workers), with
random delays, resends after lost answers and duplicate sends; nothing is lost (bench/load.py)."""

from __future__ import annotations

from pathlib import Path

from bench.load import Options, run_load


def test_under_load_every_acknowledged_pick_is_in_the_log_once(
    database_url: str, tmp_path: Path
) -> None:
    options = Options(clients=24, games=6, workers=2, threads=16, deadline=90)
    result = run_load(database_url, options, log=tmp_path / "server.log")
    print(result.summary())
    assert result.ok, result.summary()
    assert result.complete == result.audits_passed == 6
    assert result.stats.acked and result.acked_found == len(result.stats.acked)
    assert not result.stats.server_errors
    assert result.stats.retries > 0 and result.stats.duplicates > 0
