"""The readiness probe's table: ``GET /readyz`` commits a write here (service/store/events.py).

A rolled-back INSERT cannot see a full disk: PostgreSQL allocates space when a relation grows,
and an update of a row in place (an upsert) reuses its page, so neither fails while the disk is
full. The probe therefore empties this table and writes one row in the same transaction, and
commits: TRUNCATE gives the table a new, empty file, so the row needs a new page on disk every
time; on a full disk that fails with ``53100 disk_full``. The row says which process probed last.

The app role gets SELECT, INSERT and TRUNCATE on this table only (TRUNCATE: nothing here is a
fact; the events and the other tables stay read-and-append).

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-23
"""

from __future__ import annotations

from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

ROLE = "cardroom_app"


def upgrade() -> None:
    op.execute(
        f"""
CREATE TABLE readiness_probe (
    process text NOT NULL,
    probed_at timestamptz NOT NULL DEFAULT now()
);
GRANT SELECT, INSERT, TRUNCATE ON readiness_probe TO {ROLE};
"""
    )


def downgrade() -> None:
    op.execute("DROP TABLE readiness_probe")
