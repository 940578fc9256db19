"""Least privilege: the role the service runs as, ``cardroom_app``, may only read and append.

Migrations run as the database owner; ``cardroom serve`` then connects its workers as this role
(see service/store/db.py, ``app_url``). It gets SELECT and INSERT on the tables the app reads and
writes, USAGE on the events' identity sequence, and nothing else: no UPDATE, DELETE or TRUNCATE
(the append-only triggers stay as a second line), no DDL, no other table.

Roles are cluster-wide in PostgreSQL: the role is created only if missing (LOGIN, no password;
where the server wants passwords, set one: ``ALTER ROLE cardroom_app PASSWORD '...'``), and the
grants are per database.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-22
"""

from __future__ import annotations

from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

ROLE = "cardroom_app"
TABLES = ("events", "games", "seats", "game_secrets", "idempotency_keys", "turn_deadlines")


def upgrade() -> None:
    op.execute(
        f"""
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{ROLE}') THEN
        BEGIN
            CREATE ROLE {ROLE} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT;
        EXCEPTION WHEN duplicate_object OR unique_violation THEN  -- a concurrent migration won
            NULL;
        END;
    END IF;
    EXECUTE format('GRANT CONNECT ON DATABASE %I TO {ROLE}', current_database());
    EXECUTE format('GRANT USAGE ON SEQUENCE %s TO {ROLE}',
                   pg_get_serial_sequence('events', 'position'));
END
$$;
GRANT USAGE ON SCHEMA public TO {ROLE};
GRANT SELECT, INSERT ON {", ".join(TABLES)} TO {ROLE};
"""
    )


def downgrade() -> None:
    # The role stays: other databases on the server may use it.
    op.execute(
        f"""
REVOKE ALL ON {", ".join(TABLES)} FROM {ROLE};
DO $$
BEGIN
    EXECUTE format('REVOKE ALL ON SEQUENCE %s FROM {ROLE}',
                   pg_get_serial_sequence('events', 'position'));
    EXECUTE format('REVOKE CONNECT ON DATABASE %I FROM {ROLE}', current_database());
END
$$;
REVOKE USAGE ON SCHEMA public FROM {ROLE};
"""
    )
