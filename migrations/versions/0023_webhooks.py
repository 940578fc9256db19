"""Webhooks (issue 36): endpoints that are checkpoints on the log, and their delivery log.

- ``webhook_endpoints``: a URL subscribed to one game (``game_id``, with the ``seat`` whose token
  registered it, or NULL for the private game's creator) or to every game of an account
  (``account_id``). No copy of a message is queued anywhere: each endpoint keeps the place in
  the log it has delivered up to (``done_version`` and ``done_count`` in its game's events, and
  ``rematch_done``; or ``feed_tx``/``feed_id`` in ``account_feed``), and a deliverer moves it
  in the transaction that records the attempt (service/webhooks/deliver.py). A retry is "the
  place did not move" (``attempts``, ``next_attempt_at``); ``lease``/``lease_until`` say which
  deliverer holds the endpoint (claimed with ``FOR UPDATE SKIP LOCKED``, held for one attempt's
  time at most, so that a deliverer killed mid-attempt delays the endpoint, never loses it).
  ``secret`` is the HMAC key of the ``v1`` signature: it must be read to sign, so it is kept as
  it is (as the events' seeds are kept by the database); the answer that creates the endpoint
  is the only one that shows it.
- ``webhook_deliveries``: one row per attempt (status, duration, the first 1 KiB of the answer,
  the body sent, for ``redeliver``), purged after 3 days like the idempotency records.

The app role updates only the columns that move; it deletes endpoints (``DELETE``) and purges
attempts.

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-01
"""

from __future__ import annotations

from alembic import op

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None

ROLE = "cardroom_app"

UPGRADE = f"""
CREATE TABLE webhook_endpoints (
    id               uuid PRIMARY KEY,
    game_id          uuid REFERENCES games (id),
    seat             int CHECK (seat >= 0),
    account_id       text REFERENCES accounts (id),
    url              text NOT NULL CHECK (length(url) BETWEEN 1 AND 2048),
    events           text[] NOT NULL,
    secret           text NOT NULL,
    status           text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
    disabled_reason  text,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    done_version     int NOT NULL DEFAULT 0,
    done_count       int NOT NULL DEFAULT 0,
    rematch_done     boolean NOT NULL DEFAULT false,
    feed_tx          xid8,
    feed_id          bigint,
    attempts         int NOT NULL DEFAULT 0,
    next_attempt_at  timestamptz NOT NULL DEFAULT now(),
    failing_since    timestamptz,
    last_success_at  timestamptz,
    lease            uuid,
    lease_until      timestamptz,
    CHECK ((game_id IS NULL) <> (account_id IS NULL)),
    CHECK (seat IS NULL OR game_id IS NOT NULL),
    CHECK ((account_id IS NULL) = (feed_tx IS NULL))
);
CREATE INDEX webhook_endpoints_game ON webhook_endpoints (game_id, created_at)
    WHERE game_id IS NOT NULL;
CREATE INDEX webhook_endpoints_account ON webhook_endpoints (account_id, created_at)
    WHERE account_id IS NOT NULL;
CREATE INDEX webhook_endpoints_due ON webhook_endpoints (next_attempt_at)
    WHERE status = 'active';
CREATE TABLE webhook_deliveries (
    id           uuid PRIMARY KEY,
    endpoint_id  uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    msg_id       text NOT NULL,
    type         text NOT NULL,
    game_id      uuid,
    version      int,
    payload      bytea NOT NULL,
    attempt      int NOT NULL CHECK (attempt >= 1),
    outcome      text NOT NULL,
    status       int,
    duration_ms  int NOT NULL,
    response     text NOT NULL,
    error        text,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, created_at, id);
CREATE INDEX webhook_deliveries_created_at ON webhook_deliveries (created_at);
GRANT SELECT, INSERT, DELETE ON webhook_endpoints, webhook_deliveries TO {ROLE};
GRANT UPDATE (url, events, status, disabled_reason, updated_at, done_version, done_count,
              rematch_done, feed_tx, feed_id, attempts, next_attempt_at, failing_since,
              last_success_at, lease, lease_until)
    ON webhook_endpoints TO {ROLE};
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute("DROP TABLE webhook_deliveries, webhook_endpoints")
