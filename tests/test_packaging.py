"""The wheel is a whole service: installed without the checkout (not editable), with the rules'
wheel it depends on (cardroom-rules, domain/), ``cardroom migrate`` brings a fresh database up to
date and ``cardroom serve`` answers, contract included.

Why no download: the temporary venv sees this venv's site-packages (the dependencies) through a
.pth line, which adds them to ``sys.path`` but runs none of their .pth files, so the editable
install of the checkout stays out; the test checks that ``service`` comes from the wheel.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest
import requests
from patience import ANSWER

from service.store import db

ROOT = Path(__file__).resolve().parents[1]
SKIP = shutil.ignore_patterns(
    ".git", ".venv", "data", "test-output", "build", "*.egg-info", "__pycache__", ".*_cache"
)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv with the wheel installed; returns its bin/ folder."""
    work = tmp_path_factory.mktemp("wheel")
    shutil.copytree(ROOT, work / "src", ignore=SKIP)  # never build in the checkout itself
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    build = [*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(work / "dist")]
    # the service and the rules it depends on (domain/, cardroom-rules: issue 38)
    subprocess.run([*build, str(work / "src"), str(work / "src" / "domain")], check=True)
    (wheel,) = (work / "dist").glob("cardroom-*.whl")
    (rules,) = (work / "dist").glob("cardroom_rules-*.whl")
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    (Path(site) / "deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    install = [*pip, "--python", str(python), "install", "--no-deps", str(wheel), str(rules)]
    subprocess.run(install, check=True)
    return venv / "bin"


def _run(bin_dir: Path, *args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(bin_dir / "cardroom"), *args], env=env, cwd=cwd, capture_output=True, text=True
    )


def test_the_wheel_migrates_and_serves(installed: Path, database_url: str, tmp_path: Path) -> None:
    where = subprocess.run(
        [str(installed / "python"), "-c", "import service; print(service.__file__)"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert where.startswith(str(installed.parent)), where  # the wheel, not the checkout
    rules = subprocess.run(
        [str(installed / "python"), "-c", "import domain; print(domain.__file__)"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert rules.startswith(str(installed.parent)), rules  # cardroom-rules' wheel

    name = f"cardroom_wheel_{time.monotonic_ns() % 10**9}"
    url = db.ensure_database(database_url, name)
    env = {"PATH": "/usr/bin:/bin", "DATABASE_URL": url, "CARDROOM_CLOCK_INTERVAL": "0"}
    try:
        migrated = _run(installed, "migrate", env=env, cwd=tmp_path)
        assert migrated.returncode == 0, migrated.stderr
        assert "database is up to date" in migrated.stdout

        port = _free_port()
        command = [str(installed / "cardroom"), "serve", "--port", str(port), "--workers", "1"]
        server = subprocess.Popen(
            command, env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        try:
            base = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 30
            while True:
                assert server.poll() is None, server.stderr.read() if server.stderr else ""
                try:
                    if requests.get(f"{base}/healthz", timeout=ANSWER).status_code == 200:
                        break
                except requests.ConnectionError:
                    pass
                assert time.monotonic() < deadline, "the installed server never answered"
                time.sleep(0.1)
            contract = requests.get(f"{base}/openapi.yaml", timeout=ANSWER)
            assert contract.status_code == 200
            assert contract.text == (ROOT / "openapi.yaml").read_text()
            created = requests.post(
                f"{base}/games", json={"game": "sushi-go", "players": 2}, timeout=ANSWER
            )
            assert created.status_code == 201, created.text
        finally:
            server.terminate()
            server.wait(30)
    finally:
        db.drop_database(database_url, name)
