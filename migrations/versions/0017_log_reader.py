"""One reader of the log per process instead of NOTIFY at commit (issue 40).

A ``NOTIFY`` inside a commit takes PostgreSQL's notification-queue lock before the commit and
holds it through the WAL flush, so notifying commits never share a flush (about 200 appends/s
on a slow disk). The live hub now polls instead (service/live/reader.py), and finds what it has
not seen by the id of the transaction that wrote each row:

- ``events.tx`` and ``rematches.tx``: ``pg_current_xact_id()`` of the inserting transaction.
  The column is added first and given its default after, so old rows keep NULL and the table
  is not rewritten; the tables are append-only, so nothing ever needs a backfill (the reader
  starts at the head: older rows are the store's to read).
- An index on ``(tx, position)`` (``rematches``: ``(tx, game_id)``, its key), partial: old rows
  have no ``tx`` and are never looked up by it.
- The notify triggers of 0003 and 0016 go; downgrade brings them back.

The app role reads both tables already (0006, 0016): the new column is covered.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-28
"""

from __future__ import annotations

from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None

CHANNEL = "cardroom_events"
# Each followed table and the column that orders one transaction's rows (the reader's cursor).
FOLLOWED = {"events": "position", "rematches": "game_id"}

UPGRADE = """
ALTER TABLE {table} ADD COLUMN tx xid8;
ALTER TABLE {table} ALTER COLUMN tx SET DEFAULT pg_current_xact_id();
CREATE INDEX {table}_tx ON {table} (tx, {key}) WHERE tx IS NOT NULL;
"""

# 0003's and 0016's triggers, as they were.
NOTIFY_TRIGGERS = f"""
CREATE FUNCTION notify_appends() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE appended record;
BEGIN
    FOR appended IN SELECT game_id, max(version) AS version FROM new_events GROUP BY game_id LOOP
        PERFORM pg_notify('{CHANNEL}', appended.game_id::text || ' ' || appended.version);
    END LOOP;
    RETURN NULL;
END;
$$;
CREATE TRIGGER events_notify AFTER INSERT ON events
    REFERENCING NEW TABLE AS new_events
    FOR EACH STATEMENT EXECUTE FUNCTION notify_appends();
CREATE FUNCTION notify_rematch() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('{CHANNEL}', NEW.game_id::text || ' rematch');
    RETURN NULL;
END;
$$;
CREATE TRIGGER rematches_notify AFTER INSERT ON rematches
    FOR EACH ROW EXECUTE FUNCTION notify_rematch();
"""


def upgrade() -> None:
    op.execute(
        "DROP TRIGGER events_notify ON events; DROP FUNCTION notify_appends();"
        " DROP TRIGGER rematches_notify ON rematches; DROP FUNCTION notify_rematch();"
    )
    for table, key in FOLLOWED.items():
        op.execute(UPGRADE.format(table=table, key=key))


def downgrade() -> None:
    for table in FOLLOWED:
        op.execute(f"DROP INDEX {table}_tx; ALTER TABLE {table} DROP COLUMN tx;")
    op.execute(NOTIFY_TRIGGERS)
