"""Live updates: every append notifies listeners on channel ``cardroom_events``.

One notification per game and statement, payload ``"<game_id> <last version>"``, delivered at
commit to every server process that LISTENs (several gunicorn workers, several hosts).

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22
"""

from __future__ import annotations

from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

CHANNEL = "cardroom_events"


def upgrade() -> None:
    op.execute(
        f"""
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
"""
    )


def downgrade() -> None:
    op.execute("DROP TRIGGER events_notify ON events; DROP FUNCTION notify_appends();")
