"""Idempotency records (``Idempotency-Key``): what a keyed request did, written with its events.

A record names the game a request changed and that game's version after the request's append
(and, for a join, the seat's token sealed under the key). The store inserts it in the same
statement or transaction as the events (``EventStore.append``/``create_game``), so whatever
happens to the process or the connection afterwards, the row exists exactly when the request took
effect: a retry finds it and gets its answer rebuilt from the game at that version, or finds none
and runs for the first time. Requests that change nothing write no record (migration 0007).

Copies of a request sent at the same time meet on the key's unique index (migration 0024): the
second insert of a key waits for the first one's transaction, then fails (:data:`CONSTRAINTS`:
the store raises ``KeyTaken``) if it committed, or goes on if it rolled back.

Rows expire after a time to live (a cache, not facts) and are deleted by the service itself
(:func:`purge`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID

import psycopg

DEFAULT_TTL_SECONDS = 24 * 3600
# The unique indexes a second record of a key fails on: (scope, key) (migration 0024), and the
# primary key (game_id, scope, key) (0015), whichever the insert meets first.
CONSTRAINTS = frozenset({"idempotency_keys_scope_key", "idempotency_keys_pkey"})
PURGE_BATCH = 1000  # rows per purge: a purge is one short statement, however much expired

_COLUMNS = "scope, key, request_hash, game_id, version, secret, binding, expires_at"
_VALUES = "%s, %s, %s, %s, %s, %s, %s, now() + %s * interval '1 second'"
# A CTE of the append's statement: the record goes in with the events, or not at all.
ROW = f"idempotency_record AS (INSERT INTO idempotency_keys ({_COLUMNS}) VALUES ({_VALUES}))"
INSERT = f"INSERT INTO idempotency_keys ({_COLUMNS}) VALUES ({_VALUES})"


@dataclass(frozen=True)
class IdempotencyRecord:
    """A keyed request about to append: who (``scope``), which key (its SHA-256), which request
    (its fingerprint), a ``secret`` to keep for its retries (sealed; a join's token) and what
    binds it to its client (migration 0014: a secret is replayed to that client only)."""

    scope: str
    key_hash: str
    request_hash: bytes
    secret: bytes | None
    ttl_seconds: float
    binding: bytes | None = None

    def params(self, game_id: UUID, version: int) -> list[Any]:
        """The values of :data:`ROW` or :data:`INSERT` for the game's version after the append."""
        return [
            self.scope,
            self.key_hash,
            self.request_hash,
            game_id,
            version,
            self.secret,
            self.binding,
            self.ttl_seconds,
        ]


@dataclass(frozen=True)
class Stored:
    """A record as found: the request took effect, leaving ``game_id`` at ``version``."""

    request_hash: bytes
    game_id: UUID
    version: int
    secret: bytes | None
    expired: bool
    binding: bytes | None = None  # None: written before migration 0014


# The record of (scope, key), if any: request_hash, game_id, version, secret, expired, binding.
FIND = (
    "SELECT request_hash, game_id, version, secret, expires_at <= now(), binding"
    " FROM idempotency_keys WHERE scope = %s AND key = %s"
)


def find(conn: psycopg.Connection[Any], scope: str, key_hash: str) -> Stored | None:
    return stored(conn.execute(FIND, (scope, key_hash)).fetchone())


def stored(row: Any) -> Stored | None:
    """The record of a row of :data:`FIND`, or None without one."""
    if row is None:
        return None
    request_hash, game_id, version, secret, expired, binding = row
    return Stored(
        bytes(request_hash),
        game_id,
        int(version),
        None if secret is None else bytes(secret),
        expired,
        None if binding is None else bytes(binding),
    )


def forget(conn: psycopg.Connection[Any], scope: str, key_hash: str) -> None:
    """Delete an expired receipt, so that its key starts afresh."""
    conn.execute(
        "DELETE FROM idempotency_keys WHERE scope = %s AND key = %s AND expires_at <= now()",
        (scope, key_hash),
    )


def purge(conn: psycopg.Connection[Any], limit: int = PURGE_BATCH) -> int:
    """Delete up to ``limit`` expired receipts; how many were deleted."""
    cursor = conn.execute(
        "DELETE FROM idempotency_keys WHERE ctid IN (SELECT ctid FROM idempotency_keys"
        " WHERE expires_at <= now() LIMIT %s)",
        (limit,),
    )
    return cursor.rowcount
