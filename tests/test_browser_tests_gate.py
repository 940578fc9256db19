"""`make test` without Chromium runs everything else and says why the browser tests did not run;
under CI (CI=true) the same missing Chromium fails the run (tests/conftest.py)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _pytest_without_chromium(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k not in {"CI", "CARDROOM_CHROMIUM"}}
    environment.update(PATH=str(tmp_path), CARDROOM_TEST_OUTPUT=str(tmp_path), **env)
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "0", "-x"]
    command += ["tests/test_web_page.py", "tests/test_shuffle_reimplementation.py"]
    return subprocess.run(command, cwd=ROOT, env=environment, capture_output=True, text=True)


def test_without_chromium_the_browser_tests_are_skipped_with_a_note(tmp_path: Path) -> None:
    run = _pytest_without_chromium(tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "browser tests did not run: the browser tests need Chromium" in run.stdout
    assert "apt-get install chromium" in run.stdout
    assert re.search(r"\d+ passed, \d+ skipped", run.stdout), run.stdout  # the others ran


def test_under_ci_a_missing_chromium_fails_the_run(tmp_path: Path) -> None:
    run = _pytest_without_chromium(tmp_path, CI="true")
    assert run.returncode != 0, run.stdout
    assert "no Chromium" in run.stdout
