"""The several-hosts drill, reduced (bench/cluster.py): one primary, one synchronous hot standby,
two ``cardroom serve`` hosts in their own network namespaces (or on loopback addresses), a few
4-player games played through them with reads on the standby, and in the middle of play a
``kill -9`` of the primary and a promotion of the standby. The hosts find the new primary by
themselves (libpq multi-host with ``target_session_attrs=read-write``): every game finishes,
every acknowledged pick is in the log exactly once, every audit passes."""

from __future__ import annotations

import subprocess
from pathlib import Path

from bench.cluster import DrillOptions, drill


def namespaces() -> set[str]:
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False)
    return {line.split()[0] for line in listed.stdout.splitlines() if line.strip()}


def test_failover_loses_no_acknowledged_pick(tmp_path: Path) -> None:
    options = DrillOptions(
        hosts=2, games=3, workers=1, threads=8, readers=2, compare=False, deadline=45, fsync=False
    )
    result = drill(options, log=tmp_path / "servers.log")
    print(result.summary())
    assert result.ok, result.summary()
    (phase,) = result.phases
    assert phase.finished == phase.audited == 3
    # 3 games x 4 seats x 3 rounds x 8 cards, the last of each hand picked automatically (S5).
    assert phase.picks_logged == 3 * 4 * 3 * 8
    # The 7 chosen picks of each hand are acknowledged, but for a few whose answer was lost in
    # the failover (in the log all the same: the client's resend then meets 409 already_picked).
    chosen = 3 * 4 * 3 * 7
    assert chosen - 5 <= phase.picks <= chosen
    assert phase.acked_lost == 0
    assert phase.acked_before_kill and 0 < phase.acked_before_kill < phase.picks
    assert phase.promote_seconds is not None and phase.serving_again_seconds is not None
    assert phase.reads > 0 and phase.lag_p50_ms is not None
    # Nothing left behind: its namespaces (if the machine allows them) and its folder.
    assert result.made and not Path(result.made[-1]).exists()
    assert not set(result.made[:-1]) & namespaces()
