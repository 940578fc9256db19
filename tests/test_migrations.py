"""The schema comes from alembic, and migrating is safe to run from several processes at once."""

from __future__ import annotations

import subprocess
import sys
import uuid

import psycopg

from service.db import ROOT, drop_database, ensure_database


def test_concurrent_migrations_apply_once(database_url: str) -> None:
    name = f"cardroom_migrate_{uuid.uuid4().hex[:8]}"
    url = ensure_database(database_url, name)  # any database of the server can create another
    # Processes, not threads: alembic keeps its migration context in module globals.
    code = "import sys; from service.db import migrate; migrate(sys.argv[1])"
    try:
        runs = [
            subprocess.Popen([sys.executable, "-c", code, url], cwd=ROOT, stderr=subprocess.PIPE)
            for _ in range(3)
        ]
        for run in runs:
            _, stderr = run.communicate(timeout=60)
            assert run.returncode == 0, stderr.decode()
        with psycopg.connect(url) as conn:
            versions = conn.execute("SELECT version_num FROM alembic_version").fetchall()
            tables = conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1"
            ).fetchall()
        assert versions == [("0001",)]
        assert [t for (t,) in tables] == [
            "alembic_version",
            "events",
            "game_secrets",
            "games",
            "seats",
        ]
    finally:
        drop_database(database_url, name)
