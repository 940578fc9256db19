"""How long a test may wait for work here and now (issue 39, item 14).

A wait is a guard against something that never happens, not a speed test: it ends as soon as
the awaited thing is there, so a passing test is no slower for a longer bound; only a failing
one takes longer to say so. But work slows with the machine's load (the run's own workers, or
other work on a shared machine: load average 5-10 on 2 cores timed out a lobby of 100 games,
and 25 a server's start), so every bound is its idle figure times the load per core, from 1
up to ``MOST_SCALE``."""

from __future__ import annotations

import os

MOST_SCALE = 6.0


def scale() -> float:
    """The load per core now (the larger of the 1- and 5-minute averages), from 1 to 6."""
    one, five, _ = os.getloadavg()
    return min(MOST_SCALE, max(1.0, max(one, five) / (os.cpu_count() or 1)))


def scaled(seconds: float) -> float:
    """``seconds`` on an idle machine, as long as this machine's load needs now."""
    return seconds * scale()


# The most one HTTP answer of the service under test may take, in seconds: the ``timeout=`` of
# every requests or httpx call in tests/ (tests/test_patient_waits.py holds them to it). The
# service's request budget is 5 s and a stream's heartbeat comes every 15 s: 30 on an idle
# machine, scaled by the load when a test module is imported (like the modules' own WAITs).
ANSWER = scaled(30.0)
