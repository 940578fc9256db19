"""bench/notify_ceiling.py's `make bench` row (issue 40) at a small size, so that CI keeps it
working: the row is the reader shape's commits over the plain table's, every appended row is
heard by every follower, and the scratch table is gone afterwards."""

from __future__ import annotations

import re

import psycopg
import pytest

from bench import notify_ceiling


def test_the_appends_row_compares_the_reader_with_plain_inserts_and_hears_every_row(
    database_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = notify_ceiling.bench(database_url, pairs=1, followers=2, seconds=1)
    printed = capsys.readouterr().out
    ((what, measured, goal, met),) = rows
    assert what == "append, 16 conns / plain INSERT" and goal == ">= 0.7x"
    pair = re.search(r"^  ([\d,]+) / ([\d,]+) commits/s$", printed, re.M)
    assert pair is not None, printed
    reader, plain = (float(n.replace(",", "")) for n in pair.groups())
    assert reader > 0 and plain > 0
    assert measured == f"{reader / plain:.2f}x"  # one pair: the ratio of its two rates
    assert met == (reader / plain >= 0.7)
    assert "every follower heard of every row: yes" in printed
    with psycopg.connect(database_url) as conn:
        left = conn.execute(
            "SELECT count(*) FROM pg_class WHERE relname LIKE 'notify_bench_%'"
        ).fetchone()
    assert left == (0,)
