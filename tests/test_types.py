"""mypy over domain/ (strict) and service/, as configured in pyproject.toml: 0 errors. Its cache
(.mypy_cache) keeps a run after small changes to a few seconds."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_mypy_finds_no_errors() -> None:
    mypy = shutil.which("mypy", path=str(Path(sys.executable).parent))
    assert mypy, "mypy is a test dependency (pyproject.toml)"
    result = subprocess.run(
        [mypy], cwd=ROOT, capture_output=True, text=True, timeout=280
    )  # files and flags: [tool.mypy] in pyproject.toml
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Success: no issues found" in result.stdout
