"""The rules as their own distribution (issue 38, item 1): ``domain/`` is ``cardroom-rules``
(domain/pyproject.toml), pure, declaring what it imports; the service's wheel depends on it and
no longer carries it; and a bot author's fresh virtualenv, with the rules and
``cardroom-client[env]`` installed from their wheels, plays PettingZoo's ``api_test`` and audits
an export offline, with none of the service's dependencies installed.

Why the dependencies come from the machine's pip configuration (its indexes and cache) and are
constrained to requirements/dev.txt: the fresh virtualenv gets what a user's would, at the
versions CI tested; the three wheels themselves are built here, from a copy of the checkout.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from importlib.metadata import packages_distributions
from pathlib import Path
from typing import Any

import pytest
from export_support import finished_export, to_jsonl

from domain.audit import audit_export

ROOT = Path(__file__).resolve().parents[1]
SKIP = shutil.ignore_patterns(
    ".git", ".venv", "data", "test-output", "build", "*.egg-info", "__pycache__", ".*_cache"
)
SERVICE_ONLY = {"flask", "psycopg", "gevent", "gunicorn"}  # what a bot author must not get


def _name(requirement: str) -> str:
    """A requirement's distribution name, normalised (PEP 503)."""
    name = re.split(r"[\s\[<>=!~;@]", requirement, maxsplit=1)[0]
    return re.sub(r"[-_.]+", "-", name).lower()


def _project(path: Path) -> dict[str, Any]:
    project: dict[str, Any] = tomllib.loads(path.read_text())["project"]
    return project


def _third_party_imports() -> set[str]:
    """The top-level modules domain/ imports that are neither the standard library nor itself."""
    found: set[str] = set()
    for source in (ROOT / "domain").rglob("*.py"):
        for node in ast.walk(ast.parse(source.read_text(), str(source))):
            if isinstance(node, ast.Import):
                found.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return {m for m in found if m not in sys.stdlib_module_names and m not in {"domain"}}


def test_the_rules_declare_what_they_import_and_nothing_of_the_service() -> None:
    declared = {_name(r) for r in _project(ROOT / "domain" / "pyproject.toml")["dependencies"]}
    distributions = packages_distributions()
    imported = {_name(distributions[m][0]) for m in _third_party_imports()}
    assert imported == declared, (imported, declared)
    assert not declared & SERVICE_ONLY
    service = {_name(r) for r in _project(ROOT / "pyproject.toml")["dependencies"]}
    assert "cardroom-rules" in service  # one source of the rules
    client = _project(ROOT / "clients" / "python" / "pyproject.toml")
    assert "cardroom-rules" in {_name(r) for r in client["optional-dependencies"]["env"]}
    # the lockfiles leave the rules out (`make lock`): every install takes them from ./domain
    assert "-e ./domain" in (ROOT / "Makefile").read_text()
    assert "pip install --no-cache-dir --no-deps ./domain ." in (ROOT / "Dockerfile").read_text()


# Run in the fresh virtualenv, outside the checkout: PettingZoo's api_test on both games, and an
# export audited offline (honest, then with one event changed) by the client kit.
PROGRAM = """
import json, sys, warnings
from pettingzoo.test import api_test
from cardroom_client import audit_export
from cardroom_client.env import sequence_env, sushi_go_env
warnings.simplefilter("ignore")
api_test(sushi_go_env(4), num_cycles=100)
api_test(sequence_env(2), num_cycles=100)
honest = audit_export(sys.argv[1])
tampered = audit_export(open(sys.argv[1]).read().replace('"seat": 1', '"seat": 0', 1))
print(json.dumps({"honest": honest, "tampered_ok": tampered["ok"]}))
"""


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The three wheels (service, rules, client), built from a copy of the checkout."""
    work = tmp_path_factory.mktemp("wheels")
    shutil.copytree(ROOT, work / "src", ignore=SKIP)  # never build in the checkout itself
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    build = [*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(work / "dist")]
    src = work / "src"
    subprocess.run([*build, str(src), str(src / "domain"), str(src / "clients/python")], check=True)
    found = {w.name.split("-")[0]: w for w in (work / "dist").glob("*.whl")}
    assert set(found) == {"cardroom", "cardroom_rules", "cardroom_client"}, found
    return found


def _metadata(wheel: Path) -> tuple[list[str], str]:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (meta,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        return names, archive.read(meta).decode()


def test_the_service_wheel_depends_on_the_rules_and_carries_none(wheels: dict[str, Path]) -> None:
    names, meta = _metadata(wheels["cardroom"])
    assert not [n for n in names if n.startswith("domain/")]
    assert "Requires-Dist: cardroom-rules==0.1.0" in meta
    rules, _ = _metadata(wheels["cardroom_rules"])
    assert "domain/sequence/board.json" in rules and "domain/sushigo/game.py" in rules
    assert not [n for n in rules if n.startswith(("service/", "domain/build/"))]


def test_a_fresh_virtualenv_plays_and_audits_offline_without_the_service(
    wheels: dict[str, Path], tmp_path: Path
) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    # This venv's pip installs into the fresh one (--python): no pip of its own to set up;
    # --no-compile: the programs below compile what they import.
    install = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    install += ["--python", str(python), "install", "--no-compile"]
    install += ["-c", str(ROOT / "requirements" / "dev.txt")]
    client = f"{wheels['cardroom_client']}[env]"
    subprocess.run([*install, str(wheels["cardroom_rules"]), client], check=True)

    listed = subprocess.run(
        [
            str(python),
            "-c",
            "import importlib.metadata as m; print([d.name for d in m.distributions()])",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    installed = {_name(n) for n in ast.literal_eval(listed)}
    service = {_name(r) for r in _project(ROOT / "pyproject.toml")["dependencies"]}
    kit = {"cardroom-rules", "cardroom-client", "cryptography"}  # what the service shares
    assert not installed & (service - kit), installed & service
    assert not installed & SERVICE_ONLY
    assert {"cardroom-rules", "cardroom-client", "pettingzoo"} <= installed

    export = tmp_path / "game.jsonl"
    export.write_text(to_jsonl(finished_export("gamewright-3", 1)))
    run = subprocess.run(
        [str(python), "-c", PROGRAM, str(export)],
        cwd=tmp_path,  # not the checkout: domain must come from the installed rules
        env={"PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout.splitlines()[-1])  # after api_test's own lines
    assert result["honest"] == audit_export(export.read_text(), None, [])  # the service's verdict
    assert result["honest"]["ok"] is True
    assert result["tampered_ok"] is False
