"""bench/webhook_signatures.py at a small count, so that CI keeps it working: every delivery
passes v1 (standardwebhooks) and v1a (the published keys alone), no changed one passes."""

from __future__ import annotations

from bench.webhook_signatures import main, run


def test_the_webhook_signatures_bench_runs_at_a_small_count() -> None:
    report = run(60, seed=3)
    assert (report.v1_pass, report.v1a_pass) == (60, 60)
    assert (report.changed_v1_pass, report.changed_v1a_pass) == (0, 0)
    assert report.ok and report.v1a_verify_us > 0 and "ok" in report.text()
    assert main(["--count", "5", "--json"]) == 0
