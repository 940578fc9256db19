"""A pytest plugin (conftest.py registers it): each test leaves logging as it found it.

``cardroom``'s ``main()`` sets up logging for its process (``service.logs.configure``: its own
handler on the root logger in place of any other, the root at INFO, the access log on). Tests
call it in-process (``cardroom audit``, ``keys``, ``replay``...); left as it was, that set-up
outlived the test: every later line of the worker, from any thread (each request's
``cardroom.access`` line, the hub's warnings), went to whatever ``sys.stderr`` was at the time,
the terminal whenever pytest's capture was suspended (between tests, after the run), and pytest's
own log handlers were gone until its next phase. Restored after each test, later lines go to
pytest's log capture alone: shown for a failing test, nowhere else.
"""

from __future__ import annotations

import logging
from collections.abc import Generator
from dataclasses import dataclass

import pytest

from service import logs

# The loggers whose level ``logs.configure`` sets, besides the root.
CONFIGURED = (logs.ACCESS, *logs.QUIET)


@dataclass(frozen=True)
class LoggingState:
    handlers: list[logging.Handler]
    level: int
    levels: dict[str, int]

    @classmethod
    def now(cls) -> LoggingState:
        root = logging.getLogger()
        levels = {name: logging.getLogger(name).level for name in CONFIGURED}
        return cls(root.handlers[:], root.level, levels)

    def restore(self) -> None:
        root = logging.getLogger()
        root.handlers[:] = self.handlers
        root.setLevel(self.level)
        for name, level in self.levels.items():
            logging.getLogger(name).setLevel(level)


class LoggingGuard:
    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, object, object]:
        # Around the whole test (set-up, call, tear-down): pytest's per-phase handlers are
        # not in the state saved here, nor left in it.
        before = LoggingState.now()
        try:
            return (yield)
        finally:
            before.restore()
