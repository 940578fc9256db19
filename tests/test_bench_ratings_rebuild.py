"""bench/ratings_rebuild.py at a small count, so that CI keeps it working: the exports it makes
are the same whatever the number of processes making them, ``cardroom audit --keys`` verifies
every one, and ``cardroom ratings rebuild`` of them gives the service's ratings bit for bit."""

from __future__ import annotations

from pathlib import Path

from bench.account_history import ensure_keys
from bench.ratings_rebuild import generate, measure


def test_the_rebuild_bench_runs_at_a_small_count(tmp_path: Path) -> None:
    ensure_keys()
    (tmp_path / "one").mkdir()
    result = measure(tmp_path / "one", games=12, accounts=8, jobs=1, chunk=5)
    assert result["rebuild_code"] == 0
    assert result["failed_chunks"] == 0  # 3 audit processes, every export verified
    assert result["ratings"] >= 5 and result["equal"] == result["ratings"]
    assert result["rebuild_s"] > 0 and result["audit_s"] > 0
    (tmp_path / "two").mkdir()
    again = generate(tmp_path / "two", 12, accounts=8, jobs=2, seed=37)
    assert len(again.ratings) == result["ratings"]
    made = sorted((tmp_path / "one").glob("*.jsonl"))
    assert len(made) == 12
    for path in made:
        assert (tmp_path / "two" / path.name).read_bytes() == path.read_bytes()
