"""Alembic environment: plain SQL migrations, run over psycopg 3.

The URL comes from ``config.attributes["database_url"]`` (set by ``service.store.db.migrate``)
or the ``DATABASE_URL`` environment variable, never from alembic.ini, so secrets stay out of files.
"""

from __future__ import annotations

import os
from logging.config import fileConfig

import psycopg
from alembic import context
from sqlalchemy import create_engine, pool, text

# Any constant will do; every process that migrates takes the same one (see run_online).
MIGRATION_LOCK_KEY = 0x63617264726F6F6D  # "cardroom"

config = context.config

# Only the alembic CLI has an ini file (with logging config); programmatic runs keep the app's.
if config.config_file_name is not None:
    fileConfig(config.config_file_name, disable_existing_loggers=False)


def database_url() -> str:
    url = config.attributes.get("database_url") or os.environ.get("DATABASE_URL")
    if not url:
        raise RuntimeError("set DATABASE_URL (or run `cardroom migrate`, which resolves it)")
    return url


def run_offline() -> None:
    context.configure(dialect_name="postgresql", literal_binds=True, transactional_ddl=True)
    with context.begin_transaction():
        context.run_migrations()


def run_online() -> None:
    url = database_url()
    # Why a creator: the URL is a libpq URL (possibly with ?host=/socket/dir); psycopg parses it
    # exactly as the app does, instead of SQLAlchemy's own URL parser.
    engine = create_engine(
        "postgresql+psycopg://", creator=lambda: psycopg.connect(url), poolclass=pool.NullPool
    )
    with engine.connect() as connection:
        context.configure(connection=connection, transactional_ddl=True)
        with context.begin_transaction():
            # Why: concurrent `cardroom serve` processes may all migrate at start-up. The lock is
            # taken before alembic reads alembic_version, and held until this transaction
            # commits, so a second process waits and then finds nothing left to do.
            connection.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": MIGRATION_LOCK_KEY})
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    run_offline()
else:
    run_online()
