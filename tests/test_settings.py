"""Settings live in one validated place (service/settings.py), listed in the README's table; the
command line answers a bad setting or an unreachable database with one line, not a traceback."""

from __future__ import annotations

import contextlib
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from service.cli.main import main
from service.settings import Settings, SettingsError, env_name, settings

ROOT = Path(__file__).resolve().parents[1]


def test_version() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "service.cli.main", "--version"], capture_output=True, text=True
    )
    assert run.returncode == 0
    assert re.fullmatch(r"cardroom \d+\.\d+\.\d+\S*\n", run.stdout), run.stdout


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("CARDROOM_POOL_MAX", "abc"),
        ("CARDROOM_POOL_MAX", "0"),
        ("CARDROOM_LOG_FORMAT", "xml"),
        ("CARDROOM_RATE_LIMIT_JOIN", "lots"),
        ("WEB_CONCURRENCY", "many"),
    ],
)
def test_a_bad_setting_is_one_line(
    variable: str, value: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(variable, value)
    assert main(["migrate"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith(f"cardroom: invalid setting {variable}={value!r}: "), err


def test_an_unreachable_database_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket_closed() as port:
        monkeypatch.setenv("DATABASE_URL", f"postgresql://someone:secret@127.0.0.1:{port}/x")
        assert main(["migrate"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith("cardroom: cannot reach the database: "), err
    assert "secret" not in err


@contextlib.contextmanager
def socket_closed() -> Iterator[int]:
    """A port nothing listens on (bound, never listening, for the test's duration)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


def test_settings_follow_the_environment_from_call_to_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """They are built once per state of the environment (issue 14: building them on every
    request took a fifth of a busy worker), never kept past a change of it."""
    monkeypatch.setenv("CARDROOM_POOL_MAX", "7")
    assert settings().pool_max == 7
    assert settings() is settings()  # not built again while nothing changed
    monkeypatch.setenv("CARDROOM_POOL_MAX", "9")
    assert settings().pool_max == 9
    monkeypatch.setenv("cardroom_fault_injection", "1")  # any case, as pydantic-settings reads
    assert settings().fault_injection
    monkeypatch.delenv("cardroom_fault_injection")
    monkeypatch.setenv("CARDROOM_POOL_MAX", "0")
    with pytest.raises(SettingsError):
        settings()
    monkeypatch.delenv("CARDROOM_POOL_MAX")
    assert settings().pool_max == Settings.model_fields["pool_max"].default
    assert not settings().fault_injection


def test_the_readme_lists_every_setting() -> None:
    readme = (ROOT / "README.md").read_text()
    table = readme.split("<!-- settings:start -->")[1].split("<!-- settings:end -->")[0]
    listed = set(re.findall(r"^\| `([A-Z_]+)` \|", table, re.M))
    assert listed == {env_name(field) for field in Settings.model_fields}


def test_no_setting_is_read_elsewhere() -> None:
    """Only service/settings.py reads the service's settings from the environment."""
    readers = []
    for path in (ROOT / "service").rglob("*.py"):
        text = path.read_text()
        if path.name != "settings.py" and re.search(r"environ(\.get)?[\[(]\"CARDROOM_", text):
            readers.append(str(path.relative_to(ROOT)))
    assert readers == []


def test_settings_follow_a_change_of_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """settings() keeps what it built only while the variables it reads stay the same."""
    monkeypatch.setenv("CARDROOM_POOL_MAX", "7")
    assert settings().pool_max == 7
    assert settings() is settings()  # built once for one environment
    monkeypatch.setenv("CARDROOM_POOL_MAX", "9")
    assert settings().pool_max == 9
    monkeypatch.setenv("CARDROOM_POOL_MAX", "zero")
    with pytest.raises(SettingsError, match="CARDROOM_POOL_MAX"):
        settings()


@pytest.mark.parametrize(
    ("role", "says"),
    [
        ("x;drop table events", "invalid setting CARDROOM_APP_ROLE='x;drop table events': "),
        ("no_such_role_3f9c2a", "CARDROOM_APP_ROLE='no_such_role_3f9c2a': the workers cannot"),
    ],
)
def test_serve_refuses_an_app_role_that_cannot_connect_in_one_line(
    role: str, says: str, database_url: str, tmp_path: Path
) -> None:
    """Issue 39 item 3: a role that is no identifier, or that does not exist, stops `cardroom
    serve` before its workers start (they would fail every request), with one line."""
    import os

    import dbsupport

    from service.store import db

    name = dbsupport.new_database_name()
    url = db.ensure_database(database_url, name)  # a new database: serve migrates it
    environment = {
        **os.environ,
        "DATABASE_URL": url,
        "CARDROOM_APP_ROLE": role,
        "CARDROOM_KEYS": "",
        "CARDROOM_KEYS_FILE": str(tmp_path / "keys.json"),
    }
    try:
        run = subprocess.run(
            [sys.executable, "-m", "service.cli.main", "serve", "--port", "0", "--workers", "1"],
            cwd=ROOT,
            env=environment,
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        db.drop_database(database_url, name)
    assert run.returncode == 2, run.stderr
    # Alembic's and the key registry's log lines come first (the new database migrated).
    lines = [line for line in run.stderr.splitlines() if line.startswith("cardroom:")]
    assert len(lines) == 1 and "Traceback" not in run.stderr, run.stderr
    assert run.stderr.splitlines()[-1] == lines[0], run.stderr
    assert lines[0].startswith(f"cardroom: {says}"), lines[0]
