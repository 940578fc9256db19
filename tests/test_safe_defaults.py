"""Safe by default (issue 27, point 6), over real processes: a misspelt or bad setting stops the
start with one line (never a traceback, never a secret echoed); secrets come from files; the
workers run as the app role whatever user the URL names, and a service given only the app
role's URL serves a database migrated by a one-shot step; the worker count follows the CPU
quota; the connection budget is checked against the server's max_connections."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import dbsupport
import psycopg
import pytest
import requests
from patience import ANSWER
from serve_support import ROOT, cardroom_serve

from service.cli import capacity
from service.store import db

TEST_PASSWORD = "cardroom-test"  # only where the test server wants passwords


def cardroom(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "service.cli.main", *args],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def one_line_refusal(args: list[str], env: dict[str, str]) -> str:
    run = cardroom(args, env)
    assert run.returncode != 0, run.stderr
    assert run.stderr.count("\n") == 1 and "Traceback" not in run.stderr, run.stderr
    return run.stderr.strip()


SERVE = ["serve", "--port", "0", "--workers", "1"]


@pytest.mark.parametrize("command", [SERVE, ["migrate"], ["keys"]])
def test_an_unknown_setting_stops_the_start_naming_the_nearest(command: list[str]) -> None:
    line = one_line_refusal(command, {"CARDROOM_POOL_MAXX": "4", "cardroom_log_formt": "json"})
    assert line == (
        "cardroom: unknown setting CARDROOM_LOG_FORMT (did you mean CARDROOM_LOG_FORMAT?),"
        " CARDROOM_POOL_MAXX (did you mean CARDROOM_POOL_MAX?): the README's settings table"
        " lists them all"
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("{not json", "the keys in CARDROOM_KEYS are not JSON"),
        ('{"keys": {}}', "are not a JWK Set"),
        ('{"keys": []}', "need an Ed25519 signing key"),
        ('{"keys": [{"kty": "oct", "use": "enc", "kid": "s", "k": "c2hvcnQ"}]}', "32 bytes"),
    ],
)
def test_bad_keys_are_one_line_that_never_shows_them(
    value: str, expected: str, database_url: str
) -> None:
    line = one_line_refusal(SERVE, {"CARDROOM_KEYS": value, "DATABASE_URL": database_url})
    assert line.startswith("cardroom: ") and expected in line, line
    assert value not in line and "c2hvcnQ" not in line


@pytest.mark.parametrize(
    "url", ["mysql://someone:s3cret@db/cardroom", "sqlite:///cardroom.db", "cardroom"]
)
def test_a_database_url_not_of_postgresql_is_one_line_without_its_password(url: str) -> None:
    line = one_line_refusal(SERVE, {"DATABASE_URL": url})
    assert line.startswith("cardroom: invalid setting DATABASE_URL=<hidden>: must be a PostgreSQL")
    assert "s3cret" not in line


def test_the_database_url_comes_from_a_file(tmp_path: Path, database_url: str) -> None:
    secret = tmp_path / "database_url"
    secret.write_text(database_url + "\n")
    run = cardroom(["migrate"], {"DATABASE_URL_FILE": str(secret), "DATABASE_URL": ""})
    assert run.returncode == 0 and "up to date" in run.stdout, run.stderr
    line = one_line_refusal(
        ["migrate"], {"DATABASE_URL_FILE": str(tmp_path / "missing"), "DATABASE_URL": ""}
    )
    assert line.startswith("cardroom: DATABASE_URL_FILE=") and "cannot read it" in line
    both = {"DATABASE_URL_FILE": str(secret), "DATABASE_URL": database_url}
    assert one_line_refusal(["migrate"], both) == (
        "cardroom: set DATABASE_URL or DATABASE_URL_FILE, not both"
    )


# --- least privilege -----------------------------------------------------------------------------


def app_role_password(owner_url: str) -> str | None:
    """The app role's password where the server wants one (set here), else None."""
    try:
        psycopg.connect(db.with_user(owner_url, db.APP_ROLE), connect_timeout=5).close()
        return None
    except psycopg.OperationalError as exc:
        if "password" not in str(exc):
            raise
    with psycopg.connect(owner_url, autocommit=True) as owner:
        owner.execute(f"ALTER ROLE {db.APP_ROLE} PASSWORD '{TEST_PASSWORD}'")
    return TEST_PASSWORD


@pytest.fixture
def own_database(database_url: str) -> Iterator[str]:
    with dbsupport.own_database(database_url) as url:
        yield url


def worker_users(url: str, database: str) -> set[str]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT DISTINCT usename FROM pg_stat_activity"
            " WHERE datname = %s AND application_name = 'cardroom'",
            (database,),
        ).fetchall()
    return {user for (user,) in rows}


def test_the_workers_run_as_the_app_role_when_given_the_owners_url(own_database: str) -> None:
    assert db.url_user(own_database) != db.APP_ROLE  # the owner's URL, naming its user
    password = app_role_password(own_database)
    env = {"PGPASSWORD": password} if password else {}
    with cardroom_serve(own_database, env=env) as served:
        assert requests.get(f"{served.url}/readyz", timeout=ANSWER).status_code == 200
        name = psycopg.conninfo.conninfo_to_dict(own_database)["dbname"]
        assert worker_users(own_database, str(name)) == {db.APP_ROLE}


def test_a_service_given_only_the_app_roles_url_serves_a_migrated_database(
    own_database: str, database_url: str
) -> None:
    """Compose: a one-shot step migrated as the owner; the service cannot, and does not try."""
    password = app_role_password(own_database)
    app_url = db.with_user(own_database, db.APP_ROLE)
    if password:
        app_url = psycopg.conninfo.make_conninfo(app_url, password=password)
    with cardroom_serve(app_url) as served:
        assert not any("Running upgrade" in line for line in served.log)
        assert requests.get(f"{served.url}/readyz", timeout=ANSWER).status_code == 200
    name = dbsupport.new_database_name()
    url = db.ensure_database(database_url, name)  # never migrated
    try:
        bare = db.with_user(url, db.APP_ROLE)
        bare = psycopg.conninfo.make_conninfo(bare, password=password) if password else bare
        line = one_line_refusal(SERVE, {"DATABASE_URL": bare})
        assert "is not migrated to this version: run `cardroom migrate`" in line, line
    finally:
        db.drop_database(database_url, name)


# --- workers and connections ---------------------------------------------------------------------


def cgroup(tmp_path: Path, limits: dict[str, str]) -> tuple[Path, Path]:
    """A cgroup v2 tree whose ``cpu.max`` files say ``limits`` (folder: content), and a
    /proc/self/cgroup that places this process in ``a/b``."""
    root = tmp_path / "cgroup"
    for folder, content in limits.items():
        (root / folder).mkdir(parents=True, exist_ok=True)
        (root / folder / "cpu.max").write_text(content + "\n")
    membership = tmp_path / "self-cgroup"
    membership.write_text("0::/a/b\n")
    return root, membership


@pytest.mark.parametrize(
    ("limits", "cpus"),
    [
        ({"a/b": "max 100000"}, math.inf),
        ({"a/b": "150000 100000"}, 1.5),
        ({"a/b": "200000 100000", "a": "50000 100000"}, 0.5),  # a parent's quota binds too
    ],
)
def test_the_cpu_quota_is_read_from_cgroup_v2(
    tmp_path: Path, limits: dict[str, str], cpus: float
) -> None:
    root, membership = cgroup(tmp_path, limits)
    assert capacity.cgroup_quota(root, membership) == cpus


def test_the_worker_count_follows_the_cpu_quota(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(capacity, "cgroup_quota", lambda: 1.5)
    assert capacity.default_workers() == 3  # two CPUs' worth (rounded up), plus one
    monkeypatch.setattr(capacity, "cgroup_quota", lambda: 0.5)
    assert capacity.default_workers() == 2
    monkeypatch.setattr(capacity, "cgroup_quota", lambda: math.inf)
    assert capacity.default_workers() == len(os.sched_getaffinity(0)) + 1


def test_a_connection_budget_past_max_connections_stops_the_start(database_url: str) -> None:
    with psycopg.connect(database_url) as conn:
        maximum = int(conn.execute("SHOW max_connections").fetchone()[0])
    hosts = maximum // 12 + 1  # one worker of 12 connections on each: one host too many
    line = one_line_refusal(SERVE, {"DATABASE_URL": database_url, "CARDROOM_HOSTS": str(hosts)})
    assert line.startswith(
        f"cardroom: the connection budget {hosts} host(s) x 1 worker(s) x 12 connections"
        f" (CARDROOM_POOL_MAX 10 + 2) = {hosts * 12} exceeds the database's"
    ), line
