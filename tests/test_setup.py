"""The set-up a newcomer runs: the Makefile's Python check and the lockfiles it installs from."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]


def _make_python(python: str) -> subprocess.CompletedProcess[str]:
    command = ["make", "-s", "--no-print-directory", "python", f"PYTHON={python}"]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True)


def test_make_accepts_python_3_11_or_newer_under_any_name() -> None:
    assert _make_python(sys.executable).returncode == 0


def test_make_refuses_an_older_python_with_a_clear_message(tmp_path: Path) -> None:
    old = tmp_path / "python3"
    old.write_text('#!/bin/sh\n[ "$1" = --version ] && echo "Python 3.10.12" && exit 0\nexit 1\n')
    old.chmod(0o755)
    run = _make_python(str(old))
    assert run.returncode != 0
    assert "cardroom needs Python 3.11 or newer; " in run.stderr
    assert "Python 3.10.12" in run.stderr


def _pins(lockfile: str) -> dict[str, list[str]]:
    pins: dict[str, list[str]] = {}
    for line in (ROOT / "requirements" / lockfile).read_text().splitlines():
        if match := re.match(r"^([A-Za-z0-9._-]+)(?:\[[^\]]*\])?==([^\s;]+)", line):
            pins.setdefault(canonicalize_name(match[1]), []).append(match[2])
    return pins


def _requirements(*extras: str) -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    listed = list(project["dependencies"])
    for extra in extras:
        listed += project["optional-dependencies"][extra]
    # cardroom-rules is installed from the checkout (./domain; `make lock` leaves it out): its
    # own dependencies are what the lockfiles must pin
    rules = tomllib.loads((ROOT / "domain" / "pyproject.toml").read_text())["project"]
    listed += rules["dependencies"]
    mine = {"cardroom", "cardroom-rules"}
    return [r for r in map(Requirement, listed) if canonicalize_name(r.name) not in mine]


def test_the_lockfiles_pin_every_dependency_within_its_range() -> None:
    """`make lock` after changing pyproject.toml: a dependency missing from a lockfile, or pinned
    outside its range, fails here."""
    lockfiles = [("service.txt", []), ("run.txt", ["embedded"])]
    for lockfile, extras in [*lockfiles, ("dev.txt", ["embedded", "test", "dev"])]:
        pins = _pins(lockfile)
        for requirement in _requirements(*extras):
            versions = pins.get(canonicalize_name(requirement.name))
            assert versions, f"{requirement.name} is not in requirements/{lockfile}"
            for version in versions:
                assert requirement.specifier.contains(version), (lockfile, requirement, version)


def test_the_service_lockfile_holds_no_test_tool() -> None:
    pins = _pins("run.txt")
    for tool in ["pytest", "playwright", "schemathesis", "pyyaml", "ruff"]:
        assert tool not in pins, f"{tool} would be installed by `make run`"
