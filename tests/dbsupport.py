"""Finding a PostgreSQL server for the test run, and one fresh database on it.

Order: ``TEST_DATABASE_URL`` (an admin URL: the run creates its own database next to it), else a
throwaway testcontainers PostgreSQL when a Docker engine answers, else the embedded pgserver in a
temporary directory.
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

from service.store import db


@dataclass
class TestServer:
    __test__ = False  # not a test class, despite the name

    admin_url: str
    kind: str
    close: Callable[[], None] = field(default=lambda: None)


def _docker_reachable() -> bool:
    # Cheap check first: importing docker and pinging costs time on machines without Docker.
    if not os.environ.get("DOCKER_HOST") and not Path("/var/run/docker.sock").exists():
        return False
    try:
        import docker

        docker.from_env(timeout=3).ping()
    except Exception:
        return False
    return True


def _container_server() -> TestServer:
    try:
        from testcontainers.community.postgres import PostgresContainer
    except ImportError:  # testcontainers < 4.14
        from testcontainers.postgres import PostgresContainer

    container = PostgresContainer("postgres:16-alpine", driver=None).start()
    return TestServer(container.get_connection_url(), "testcontainers", container.stop)


def _embedded_server() -> TestServer:
    directory = Path(tempfile.mkdtemp(prefix="cardroom-test-pg-"))
    server = db.start_embedded(directory / "pgdata", cleanup_mode="delete")

    def close() -> None:
        server.cleanup()
        shutil.rmtree(directory, ignore_errors=True)

    return TestServer(server.get_uri(), "embedded", close)


def start_test_server() -> TestServer:
    url = os.environ.get("TEST_DATABASE_URL")
    if url:
        return TestServer(url, "TEST_DATABASE_URL")
    if _docker_reachable():
        return _container_server()
    return _embedded_server()


def new_database_name() -> str:
    return f"cardroom_test_{secrets.token_hex(4)}"


def create_migrated_database(admin_url: str, name: str) -> str:
    """Create database ``name`` next to ``admin_url``, migrate it, return its URL."""
    url = db.ensure_database(admin_url, name)
    db.migrate(url)
    return url


@contextmanager
def own_database(admin_url: str) -> Iterator[str]:
    """A fresh migrated database next to ``admin_url``'s, dropped at the end: the home of games
    no honest service holds (of made-up kinds, or rows changed as the owner). In the run's
    shared database every other test's lobby listing (``GET /games`` folds each game it lists)
    would meet them, and log a traceback for each."""
    name = new_database_name()
    url = create_migrated_database(admin_url, name)
    try:
        yield url
    finally:
        db.drop_database(admin_url, name)


def terminate_sessions(admin: psycopg.Connection[Any], application_name: str) -> list[Any]:
    """Cut the server's sessions named ``application_name`` as a dropped connection would; one
    row per session, ``(True,)`` for each one ended."""
    return admin.execute(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s",
        (application_name,),
    ).fetchall()
