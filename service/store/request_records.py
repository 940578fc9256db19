"""The answers of keyed requests that change no game (migration 0021): an account created, a
token minted, a challenge offered or answered, a quick match's new game. Written by the store
in the transaction that makes the change (:func:`insert`, with the cursor of that transaction),
found by the ``Idempotency-Key`` lookup (service/http/idempotency.py) and replayed whole.

``idempotency_keys`` (0007) keeps what a game's answer is rebuilt from (the game at a version);
these answers have no game to rebuild from, so the answer is kept, sealed: it may hold a token
shown once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import errors

from service.store.failures import KeyTaken

INSERT = (
    "INSERT INTO request_records"
    " (scope, key, request_hash, status, location, body, binding, expires_at)"
    " VALUES (%s, %s, %s, %s, %s, %s, %s, now() + %s * interval '1 second')"
)
FIND = (
    "SELECT request_hash, status, location, body, binding, expires_at <= now()"
    " FROM request_records WHERE scope = %s AND key = %s"
)
PURGE_BATCH = 1000
CONSTRAINT = "request_records_pkey"  # (scope, key): a copy waits on it, then fails (KeyTaken)


@dataclass(frozen=True)
class Answer:
    """An answer to write: the request's row values but the status, location and body."""

    scope: str
    key_hash: str
    request_hash: bytes
    binding: bytes | None
    ttl_seconds: float


@dataclass(frozen=True)
class StoredAnswer:
    request_hash: bytes
    status: int
    location: str | None
    body: bytes  # sealed
    binding: bytes | None
    expired: bool


def insert(cur: Any, answer: Answer, status: int, location: str | None, sealed: bytes) -> None:
    """Write the sealed answer in ``cur``'s transaction (the change's); :class:`KeyTaken` if
    the key has an answer already (another send of the request committed first: the change's
    transaction then rolls back)."""
    values = (
        answer.scope,
        answer.key_hash,
        answer.request_hash,
        status,
        location,
        sealed,
        answer.binding,
        answer.ttl_seconds,
    )
    try:
        cur.execute(INSERT, values)
    except errors.UniqueViolation as exc:
        if exc.diag.constraint_name == CONSTRAINT:
            raise KeyTaken(str(exc)) from exc
        raise


def find(conn: psycopg.Connection[Any], scope: str, key_hash: str) -> StoredAnswer | None:
    row = conn.execute(FIND, (scope, key_hash)).fetchone()
    return None if row is None else StoredAnswer(*row)


def forget(conn: psycopg.Connection[Any], scope: str, key_hash: str) -> None:
    """Delete an expired answer, so that its key starts afresh."""
    conn.execute(
        "DELETE FROM request_records WHERE scope = %s AND key = %s AND expires_at <= now()",
        (scope, key_hash),
    )


def purge(conn: psycopg.Connection[Any], limit: int = PURGE_BATCH) -> int:
    """Delete up to ``limit`` expired answers; how many were deleted."""
    cursor = conn.execute(
        "DELETE FROM request_records WHERE ctid IN (SELECT ctid FROM request_records"
        " WHERE expires_at <= now() LIMIT %s)",
        (limit,),
    )
    return cursor.rowcount
