"""A test that sets up logging as ``cardroom`` does (in-process: ``main()`` calls
``service.logs.configure``) leaves nothing of it to the tests after it (tests/logging_guard.py,
registered by conftest.py): checked in a pytest run of its own, with and without the guard."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent

INNER_TESTS = """
import logging

from service import logs
from service.settings import Settings


def test_sets_up_logging_as_cardroom_does():
    logs.configure(Settings(log_format="text", log_level="INFO"))


def test_after_it_lines_go_to_pytest_alone(capfd, caplog):
    logging.getLogger(logs.ACCESS).info("GET /games 200")
    logging.getLogger("cardroom.test").warning("a warning")
    assert capfd.readouterr().err == ""  # nothing written to stderr, captured or not
    assert [r.getMessage() for r in caplog.records] == ["a warning"]  # shown if a test fails
"""

GUARDED = """
from logging_guard import LoggingGuard


def pytest_configure(config):
    config.pluginmanager.register(LoggingGuard())
"""


@pytest.fixture
def inner(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), str(ROOT / "tests")]))
    pytester.makepyfile(test_inner=INNER_TESTS)
    return pytester


def test_the_guard_undoes_the_set_up_after_the_test(inner: pytest.Pytester) -> None:
    inner.makeconftest(GUARDED)
    inner.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=2)


def test_without_the_guard_the_set_up_outlives_the_test(inner: pytest.Pytester) -> None:
    """What the guard is for: without it, the next test's lines go to stderr."""
    result = inner.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*INFO cardroom.access: GET /games 200*"])
