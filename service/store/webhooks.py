"""Webhook endpoints and their delivery log (issue 36, migration 0023).

An endpoint is a checkpoint on the log, not a queue: a per-game endpoint keeps how far into its
game's events it has delivered (``done_version``, ``done_count``, ``rematch_done``), an
account's endpoint its place in ``account_feed`` (``feed_tx``, ``feed_id``). A deliverer claims
due endpoints (``FOR UPDATE SKIP LOCKED`` in one short statement that writes a lease), posts
outside any transaction, and moves the checkpoint in the transaction that records the attempt,
only while its lease is still the endpoint's (:func:`record`). A deliverer that dies between the
attempt and the record leaves the checkpoint where it was: once the lease runs out, another
claims the endpoint and posts the same message again (the same ``webhook-id``).

Account rows are read only below the oldest transaction still running (as
service/store/account_feed.py explains): a row that commits late never falls behind a cursor.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

import psycopg
from psycopg.rows import dict_row

from service.store import account_feed

PER_GAME = 5  # endpoints per game, whoever registered them
PER_ACCOUNT = 20  # endpoints per account
PURGE_BATCH = 1000
KEPT_DAYS = 3  # the delivery log's rows are purged after this long

COLUMNS = (
    "id, game_id, seat, account_id, url, events, secret, status, disabled_reason, created_at,"
    " updated_at, done_version, done_count, rematch_done, feed_tx::text AS feed_tx, feed_id,"
    " attempts, next_attempt_at, failing_since, last_success_at, lease, lease_until"
)


@dataclass(frozen=True)
class Endpoint:
    id: UUID
    game_id: UUID | None
    seat: int | None  # a per-game endpoint's seat; None: the private game's creator
    account_id: str | None
    url: str
    events: list[str]
    secret: str
    status: str
    disabled_reason: str | None
    created_at: datetime
    updated_at: datetime
    done_version: int
    done_count: int
    rematch_done: bool
    feed_tx: str | None
    feed_id: int | None
    attempts: int
    next_attempt_at: datetime
    failing_since: datetime | None
    last_success_at: datetime | None
    lease: UUID | None
    lease_until: datetime | None


@dataclass(frozen=True)
class Owner:
    """Who an endpoint answers to: a game's seat or creator (``seat`` None), or an account."""

    game_id: UUID | None = None
    seat: int | None = None
    account_id: str | None = None

    def where(self) -> tuple[str, list[Any]]:
        if self.account_id is not None:
            return "account_id = %s", [self.account_id]
        return "game_id = %s AND seat IS NOT DISTINCT FROM %s", [self.game_id, self.seat]


class TooMany(Exception):
    """The game or account has as many endpoints as it may."""


def _endpoint(row: dict[str, Any]) -> Endpoint:
    return Endpoint(**row)


def create(
    conn: psycopg.Connection[Any],
    endpoint_id: UUID,
    owner: Owner,
    url: str,
    events: Sequence[str],
    secret: str,
    along: Any = None,
) -> Endpoint:
    """A new active endpoint starting at the head of its game or account feed (it tells what
    happens from now on). :class:`TooMany` past the limit, counted under a lock of the game or
    account so that registrations at once on any hosts cannot pass it. ``along(cur, endpoint)``
    runs in the same transaction (the idempotent answer)."""
    column, scope, limit = _scope(owner)
    with conn.transaction(), conn.cursor(row_factory=dict_row) as cur:
        cur.execute("SELECT pg_advisory_xact_lock(hashtext('webhooks:' || %s))", (scope,))
        cur.execute(f"SELECT count(*) AS n FROM webhook_endpoints WHERE {column} = %s", (scope,))
        row = cur.fetchone()
        if row is not None and row["n"] >= limit:
            raise TooMany(limit)
        head = account_feed.head(conn) if owner.account_id is not None else None
        if head is not None:
            start = "%(tx)s::xid8, %(row)s"
            rematch = "false"
            version = "0"
        else:
            start = "NULL, NULL"
            rematch = "EXISTS (SELECT 1 FROM rematches WHERE game_id = %(game)s)"
            version = "(SELECT coalesce(max(version), 0) FROM events WHERE game_id = %(game)s)"
        cur.execute(
            f"INSERT INTO webhook_endpoints (id, game_id, seat, account_id, url, events, secret,"
            f" done_version, rematch_done, feed_tx, feed_id)"
            f" VALUES (%(id)s, %(game)s, %(seat)s, %(account)s, %(url)s, %(events)s, %(secret)s,"
            f" {version}, {rematch}, {start}) RETURNING {COLUMNS}",
            {
                "id": endpoint_id,
                "game": owner.game_id,
                "seat": owner.seat,
                "account": owner.account_id,
                "url": url,
                "events": list(events),
                "secret": secret,
                "tx": None if head is None else str(head.tx),
                "row": None if head is None else head.id,
            },
        )
        created = _endpoint(cur.fetchone() or {})
        if along is not None:
            along(cur, created)
    return created


def _scope(owner: Owner) -> tuple[str, str, int]:
    """The column, value and limit an owner's endpoints are counted by."""
    if owner.account_id is not None:
        return "account_id", owner.account_id, PER_ACCOUNT
    return "game_id", str(owner.game_id), PER_GAME


def full(conn: psycopg.Connection[Any], owner: Owner) -> bool:
    """Whether the owner's game or account has as many endpoints as it may."""
    column, value, limit = _scope(owner)
    row = conn.execute(f"SELECT count(*) FROM webhook_endpoints WHERE {column} = %s", (value,))
    found = row.fetchone()
    return found is not None and found[0] >= limit


def listed(conn: psycopg.Connection[Any], owner: Owner) -> list[Endpoint]:
    where, params = owner.where()
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            f"SELECT {COLUMNS} FROM webhook_endpoints WHERE {where} ORDER BY created_at, id",
            params,
        )
        return [_endpoint(row) for row in cur.fetchall()]


def get(conn: psycopg.Connection[Any], owner: Owner, endpoint_id: UUID) -> Endpoint | None:
    where, params = owner.where()
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            f"SELECT {COLUMNS} FROM webhook_endpoints WHERE id = %s AND {where}",
            [endpoint_id, *params],
        )
        row = cur.fetchone()
    return None if row is None else _endpoint(row)


def update(
    conn: psycopg.Connection[Any],
    owner: Owner,
    endpoint_id: UUID,
    url: str | None,
    events: Sequence[str] | None,
    enabled: bool | None,
) -> Endpoint | None:
    """Change what is given; enabling a disabled endpoint starts its retries afresh (its
    checkpoint stays: what happened meanwhile is delivered), disabling says the owner did."""
    where, params = owner.where()
    sets = ["updated_at = now()"]
    values: list[Any] = []
    if url is not None:
        sets.append("url = %s")
        values.append(url)
    if events is not None:
        sets.append("events = %s")
        values.append(list(events))
    if enabled is True:
        sets += [
            "status = 'active'",
            "disabled_reason = NULL",
            "attempts = CASE WHEN status = 'active' THEN attempts ELSE 0 END",
            "next_attempt_at = CASE WHEN status = 'active' THEN next_attempt_at ELSE now() END",
            "failing_since = CASE WHEN status = 'active' THEN failing_since ELSE NULL END",
        ]
    elif enabled is False:
        sets += [
            "disabled_reason = CASE WHEN status = 'active' THEN 'disabled by its owner'"
            " ELSE disabled_reason END",
            "status = 'disabled'",
        ]
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            f"UPDATE webhook_endpoints SET {', '.join(sets)} WHERE id = %s AND {where}"
            f" RETURNING {COLUMNS}",
            [*values, endpoint_id, *params],
        )
        row = cur.fetchone()
    return None if row is None else _endpoint(row)


def delete(conn: psycopg.Connection[Any], owner: Owner, endpoint_id: UUID) -> bool:
    where, params = owner.where()
    cur = conn.execute(
        f"DELETE FROM webhook_endpoints WHERE id = %s AND {where}", [endpoint_id, *params]
    )
    return cur.rowcount > 0


# --- delivery --------------------------------------------------------------------------------

# Due: active, its time come, no live lease, and something past its checkpoint (a game's event
# or its rematch; an account's feed row below the oldest transaction still running).
CLAIM = f"""
WITH due AS (
    SELECT e.id FROM webhook_endpoints e
    WHERE e.status = 'active' AND e.next_attempt_at <= now()
      AND (e.lease_until IS NULL OR e.lease_until < now())
      AND (%(only)s::uuid[] IS NULL OR e.id = ANY (%(only)s::uuid[]))
      AND CASE WHEN e.game_id IS NOT NULL THEN
            EXISTS (SELECT 1 FROM events v
                    WHERE v.game_id = e.game_id AND v.version > e.done_version)
            OR (NOT e.rematch_done
                AND EXISTS (SELECT 1 FROM rematches r WHERE r.game_id = e.game_id))
          ELSE
            EXISTS (SELECT 1 FROM account_feed f
                    WHERE f.account_id = e.account_id AND (f.tx, f.id) > (e.feed_tx, e.feed_id)
                      AND f.tx < pg_snapshot_xmin(pg_current_snapshot()))
          END
    ORDER BY e.next_attempt_at
    LIMIT %(limit)s
    FOR UPDATE SKIP LOCKED
)
UPDATE webhook_endpoints e
SET lease = %(lease)s, lease_until = now() + make_interval(secs => %(seconds)s)
FROM due WHERE e.id = due.id
RETURNING {", ".join("e." + c.strip() for c in COLUMNS.split(","))}
"""


def claim(
    conn: psycopg.Connection[Any],
    lease: UUID,
    seconds: float,
    limit: int,
    only: Sequence[UUID] | None = None,
) -> list[Endpoint]:
    """Up to ``limit`` due endpoints no one else holds, leased to ``lease`` for ``seconds``
    (``only``: among these)."""
    params = {
        "lease": lease,
        "seconds": seconds,
        "limit": limit,
        "only": None if only is None else list(only),
    }
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(CLAIM, params)
        return [_endpoint(row) for row in cur.fetchall()]


def release(conn: psycopg.Connection[Any], endpoint_id: UUID, lease: UUID) -> None:
    conn.execute(
        "UPDATE webhook_endpoints SET lease = NULL, lease_until = NULL"
        " WHERE id = %s AND lease = %s",
        (endpoint_id, lease),
    )


@dataclass(frozen=True)
class Checkpoint:
    """Where an endpoint has delivered up to (game or account fields, as the endpoint has)."""

    done_version: int = 0
    done_count: int = 0
    rematch_done: bool = False
    feed_tx: str | None = None
    feed_id: int | None = None


@dataclass(frozen=True)
class Attempted:
    """One attempt as the delivery log keeps it."""

    msg_id: str
    type: str
    game_id: UUID | None
    version: int | None
    payload: bytes
    attempt: int
    outcome: str  # delivered, failed (retried later), given_up, gone (410), redelivered
    status: int | None
    duration_ms: int
    response: str
    error: str | None


@dataclass(frozen=True)
class Outcome:
    """How an attempt leaves the endpoint: its checkpoint, its retry state, and whether it is
    disabled (``disable``: the reason)."""

    checkpoint: Checkpoint
    attempts: int
    retry_in: float  # seconds until the next attempt may start
    succeeded: bool
    failed: bool
    disable: str | None = None


RECORD = """
UPDATE webhook_endpoints SET
    done_version = %(done_version)s, done_count = %(done_count)s,
    rematch_done = %(rematch_done)s,
    feed_tx = coalesce(%(feed_tx)s::xid8, feed_tx), feed_id = coalesce(%(feed_id)s, feed_id),
    attempts = %(attempts)s,
    next_attempt_at = now() + make_interval(secs => %(retry_in)s),
    last_success_at = CASE WHEN %(succeeded)s THEN now() ELSE last_success_at END,
    failing_since = CASE WHEN %(succeeded)s THEN NULL
                         WHEN %(failed)s THEN coalesce(failing_since, now())
                         ELSE failing_since END,
    status = CASE WHEN %(disable)s::text IS NOT NULL
                    OR (%(failed)s AND failing_since < now() - make_interval(secs => %(days)s))
                  THEN 'disabled' ELSE status END,
    disabled_reason = CASE
        WHEN %(disable)s::text IS NOT NULL THEN %(disable)s::text
        WHEN %(failed)s AND failing_since < now() - make_interval(secs => %(days)s)
        THEN 'every attempt failed since ' || to_char(failing_since AT TIME ZONE 'UTC',
             'YYYY-MM-DD"T"HH24:MI:SS"Z"') || ', for longer than '
             || (%(days)s / 86400)::numeric(10, 2) || ' days: fix the endpoint, then enable it'
             || ' again (PATCH with enabled: true)'
        ELSE disabled_reason END,
    lease = CASE WHEN %(release)s THEN NULL ELSE lease END,
    lease_until = CASE WHEN %(release)s THEN NULL
                       ELSE now() + make_interval(secs => %(lease_seconds)s) END
WHERE id = %(id)s AND lease = %(lease)s
RETURNING status
"""

INSERT_ATTEMPT = """
INSERT INTO webhook_deliveries (id, endpoint_id, msg_id, type, game_id, version, payload,
    attempt, outcome, status, duration_ms, response, error)
VALUES (gen_random_uuid(), %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
"""


def record(
    conn: psycopg.Connection[Any],
    endpoint: Endpoint,
    lease: UUID,
    outcome: Outcome,
    attempted: Attempted | None,
    *,
    disable_after: float,
    lease_seconds: float,
    release: bool = False,
) -> str | None:
    """Move the endpoint to ``outcome`` and log ``attempted`` (if any), in one transaction, if
    ``lease`` still holds it; its status then (None: the lease was lost, nothing written).
    ``release``: the claim ends with this record, and the lease is given up in it (one
    transaction a message fewer than a :func:`release` after it)."""
    point = outcome.checkpoint
    params = {
        "id": endpoint.id,
        "lease": lease,
        "done_version": point.done_version,
        "done_count": point.done_count,
        "rematch_done": point.rematch_done,
        "feed_tx": point.feed_tx,
        "feed_id": point.feed_id,
        "attempts": outcome.attempts,
        "retry_in": outcome.retry_in,
        "succeeded": outcome.succeeded,
        "failed": outcome.failed,
        "disable": outcome.disable,
        "days": disable_after,
        "lease_seconds": lease_seconds,
        "release": release,
    }
    with conn.transaction():
        row = conn.execute(RECORD, params).fetchone()
        if row is None:
            return None
        if attempted is not None:
            log_attempt(conn, endpoint.id, attempted)
    return str(row[0])


def log_attempt(conn: psycopg.Connection[Any], endpoint_id: UUID, attempted: Attempted) -> None:
    a = attempted
    conn.execute(
        INSERT_ATTEMPT,
        (
            endpoint_id,
            a.msg_id,
            a.type,
            a.game_id,
            a.version,
            a.payload,
            a.attempt,
            a.outcome,
            a.status,
            a.duration_ms,
            a.response,
            a.error,
        ),
    )


@dataclass(frozen=True)
class Delivery:
    id: UUID
    msg_id: str
    type: str
    game_id: UUID | None
    version: int | None
    payload: bytes
    attempt: int
    outcome: str
    status: int | None
    duration_ms: int
    response: str
    error: str | None
    created_at: datetime


DELIVERY_COLUMNS = (
    "id, msg_id, type, game_id, version, payload, attempt, outcome, status, duration_ms,"
    " response, error, created_at"
)


def deliveries(
    conn: psycopg.Connection[Any], endpoint_id: UUID, limit: int, before: datetime | None = None
) -> list[Delivery]:
    """The endpoint's attempts, newest first (kept ``KEPT_DAYS``)."""
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            f"SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries WHERE endpoint_id = %s"
            " AND (%s::timestamptz IS NULL OR created_at < %s)"
            " ORDER BY created_at DESC, id DESC LIMIT %s",
            (endpoint_id, before, before, limit),
        )
        return [_delivery(row) for row in cur.fetchall()]


def delivery(
    conn: psycopg.Connection[Any], endpoint_id: UUID, delivery_id: UUID
) -> Delivery | None:
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            f"SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries WHERE endpoint_id = %s AND id = %s",
            (endpoint_id, delivery_id),
        )
        row = cur.fetchone()
    return None if row is None else _delivery(row)


def _delivery(row: dict[str, Any]) -> Delivery:
    return Delivery(**{**row, "payload": bytes(row["payload"])})


def purge(conn: psycopg.Connection[Any], limit: int = PURGE_BATCH) -> int:
    """Delete up to ``limit`` attempts older than ``KEPT_DAYS``; how many were."""
    cursor = conn.execute(
        "DELETE FROM webhook_deliveries WHERE ctid IN (SELECT ctid FROM webhook_deliveries"
        " WHERE created_at < now() - make_interval(days => %s) LIMIT %s)",
        (KEPT_DAYS, limit),
    )
    return cursor.rowcount
