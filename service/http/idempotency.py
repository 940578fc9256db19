"""``Idempotency-Key`` on every POST: a retry gets the first response, and has no second effect.

Installed once for the whole app (:func:`register`), so every POST route, including routes added
later, gets it without its author doing anything. A POST that sends the header:

1. ``before_request``: the key is checked (400 ``invalid_idempotency_key``); the client's scope is
   the SHA-256 of its bearer token, or ``anonymous``; then a PostgreSQL advisory lock on
   (scope, key) is taken on a connection held until the request ends, so copies of one request
   sent at once run one at a time. Under the lock: a stored response is replayed with
   ``Idempotent-Replayed: true`` (or 422 ``idempotency_key_reused`` if that key came with another
   method, path or body); without one the request runs as usual.
2. ``after_request``: the response is stored if :func:`storable` says it is the request's outcome.
3. ``teardown_request``: unlock, after the row is committed, so a waiting copy finds it.

No secret is stored in clear: a join's response holds the seat's bearer token, and the service
otherwise keeps only tokens' hashes. The table keeps the key's SHA-256, a fingerprint keyed by
the key, and the body encrypted with AES-GCM under a key derived from the key and scope: only a
client that sends the key again can read the response back. (Each row is written once, so a
keystream is never reused.)
"""

from __future__ import annotations

import atexit
import hashlib
import hmac
import logging
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import psycopg
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from flask import Flask, Response, g, request
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

from service import metrics
from service.http.problems import Problem
from service.store.events import StoreUnavailable, db

log = logging.getLogger(__name__)

HEADER = "Idempotency-Key"
REPLAYED = "Idempotent-Replayed"
MAX_KEY_LENGTH = 255
LOCK_TIMEOUT_SECONDS = 10.0  # app.config["IDEMPOTENCY_LOCK_TIMEOUT"] overrides it
# Not replayed: they describe one transfer, not the outcome (the server sets them anew).
_UNSTORED_HEADERS = {
    "content-length",
    "date",
    "server",
    "connection",
    "keep-alive",
    "transfer-encoding",
    "set-cookie",
}
# Statuses that mean "try again later": the request did not get its outcome yet.
_TRANSIENT = {408, 425, 429}
_CONTEXT = "cardroom_idempotency"  # the attribute of flask.g for the request's Keyed


def storable(status: int, headers: Mapping[str, str]) -> bool:
    """Whether a response is its request's outcome, to be replayed to every retry with its key.

    Yes: 2xx, and 4xx that report the request or the state it met (400, 401, 403, 404, 409
    ``already_picked``/``game_full``, 422): sending it again would not change them, and a client
    who wants another try after fixing the cause sends a new key. No: 5xx (the service failed;
    after an outage a retry must be able to succeed), and whatever asks to be retried (a
    ``Retry-After`` header, as 503 and 409 ``too_many_conflicts`` carry; 408, 425, 429).
    """
    return 200 <= status < 500 and status not in _TRANSIENT and "Retry-After" not in headers


def parse_key(value: str) -> str:
    """The key of an ``Idempotency-Key`` header value: 1 to 255 printable ASCII characters."""
    key = value.strip(" \t")
    if not 0 < len(key) <= MAX_KEY_LENGTH or not all(" " <= c <= "~" for c in key):
        raise Problem(
            400,
            "invalid_idempotency_key",
            f"the {HEADER} header must be 1 to {MAX_KEY_LENGTH} printable ASCII characters;"
            " use a new random value (a UUID v4) for each request, and the same one to retry it",
        )
    return key


def scope_of(authorization: str | None) -> str:
    """Who sent the request: SHA-256 hex of its bearer token, or ``anonymous`` without one.

    An Authorization header that is not ``Bearer <token>`` is hashed whole: its own scope, not
    ``anonymous``, and no 401 here (routes without security ignore the header)."""
    if authorization is None:
        return "anonymous"
    scheme, _, token = authorization.partition(" ")
    credential = token.strip() if scheme.lower() == "bearer" and token.strip() else authorization
    return hashlib.sha256(credential.encode("utf-8", "surrogateescape")).hexdigest()


@dataclass
class Keyed:
    """One POST with an ``Idempotency-Key``, holding its lock on ``conn``."""

    scope: str
    key_hash: str  # stored in place of the key
    secret: bytes  # derived from the key, never stored: keys the fingerprint and the body
    method: str
    path: str
    fingerprint: bytes
    lock_id: int
    conn: psycopg.Connection[Any] | None = None
    fresh: bool = False  # no stored response: this request runs, and its response is stored

    @classmethod
    def of(cls, scope: str, key: str, method: str, path: str, body: bytes) -> Keyed:
        key_hash = hashlib.sha256(key.encode()).hexdigest()
        secret = hmac.digest(key.encode(), b"cardroom-idempotency-v1\0" + scope.encode(), "sha256")
        # The path's length first: no (path, body) pair can pass for another.
        head = f"{method}\0{len(path)}\0{path}\0".encode("utf-8", "surrogateescape")
        fingerprint = hmac.digest(secret, head + body, "sha256")
        lock = hashlib.sha256(f"{scope}\0{key_hash}".encode()).digest()
        lock_id = int.from_bytes(lock[:8], "big", signed=True)
        return cls(scope, key_hash, secret, method, path, fingerprint, lock_id)

    def seal(self, body: bytes) -> bytes:
        """``body`` encrypted (AES-GCM, key derived from the idempotency key): a stored response
        can only be read back by a client that sends the key again."""
        nonce = os.urandom(12)
        return nonce + AESGCM(self.secret).encrypt(nonce, body, None)

    def unseal(self, stored: bytes) -> bytes:
        return AESGCM(self.secret).decrypt(stored[:12], stored[12:], None)


class Locks:
    """Advisory locks on connections of a pool of their own, opened on first use.

    Why not the store's pool: a request that holds a lock still needs the store's connections;
    were the locks held on those, enough concurrent keyed requests would take every connection
    and then wait for one more until the pool timed out."""

    def __init__(self, source: Any, lock_timeout: float) -> None:
        self._source = source  # the store's pool: where to connect, and how many at most
        self._lock_timeout_ms = max(1, int(lock_timeout * 1000))
        self._pool: ConnectionPool | None = None
        self._guard = threading.Lock()

    def pool(self) -> ConnectionPool:
        with self._guard:
            if self._pool is None:
                source: ConnectionPool = self._source
                kwargs = source.kwargs
                if isinstance(kwargs, dict):  # else a callable (psycopg_pool 3.3): as it is
                    kwargs = {**kwargs, "application_name": "cardroom-idempotency"}
                self._pool = ConnectionPool(
                    source.conninfo,
                    kwargs=kwargs,
                    min_size=0,
                    max_size=source.max_size,
                    timeout=source.timeout,
                    configure=self._configure,
                    name="cardroom-idempotency",
                    open=True,
                )
                atexit.register(self._pool.close)
            return self._pool

    def _configure(self, conn: psycopg.Connection[Any]) -> None:
        conn.autocommit = True
        # A copy waits this long for the first to finish, then gets 409 idempotency_key_in_use.
        conn.execute(
            "SELECT set_config('lock_timeout', %s, false)", (f"{self._lock_timeout_ms}ms",)
        )

    def acquire(self, lock_id: int) -> psycopg.Connection[Any]:
        pool = self.pool()
        try:
            # Short while the database is known to be down: a 503 at once, not after a wait.
            conn = pool.getconn(timeout=db.connection_timeout(self._source))
        except psycopg.OperationalError as exc:  # PoolTimeout, PoolClosed
            raise StoreUnavailable(str(exc)) from exc
        try:
            conn.execute("SELECT pg_advisory_lock(%s)", (lock_id,))
        except psycopg.errors.LockNotAvailable:
            pool.putconn(conn)
            raise Problem(
                409,
                "idempotency_key_in_use",
                f"a request with this {HEADER} is still being processed; send it again after"
                " Retry-After seconds to get its response",
                headers={"Retry-After": "1"},
            ) from None
        except psycopg.Error as exc:
            pool.putconn(conn)
            db.note_unreachable(self._source, exc)
            raise StoreUnavailable(str(exc)) from exc
        return conn

    def release(self, conn: psycopg.Connection[Any], lock_id: int) -> None:
        try:
            conn.execute("SELECT pg_advisory_unlock(%s)", (lock_id,))
        except psycopg.Error:
            # A lock must never go back to the pool with its connection: ending the session
            # releases it (the pool discards a closed connection).
            conn.close()
        finally:
            self.pool().putconn(conn)


_SELECT = (
    "SELECT request_hash, status, headers, body FROM idempotency_keys WHERE scope = %s AND key = %s"
)
_INSERT = (
    "INSERT INTO idempotency_keys (scope, key, method, path, request_hash, status, headers, body)"
    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
)


def register(app: Flask, pool: Any) -> None:
    """Install the hooks on ``app``, locking on connections to ``pool``'s database.

    Call it before any other ``after_request`` is registered: hooks run in reverse order, so
    this one runs last and stores the response exactly as sent."""
    locks = Locks(pool, float(app.config.get("IDEMPOTENCY_LOCK_TIMEOUT", LOCK_TIMEOUT_SECONDS)))

    @app.before_request
    def begin() -> Response | None:
        value = request.headers.get(HEADER)
        # Unmatched paths (404, 405) are not requests of any route: nothing to make idempotent.
        if value is None or request.method != "POST" or request.url_rule is None:
            return None
        key = parse_key(value)
        body = request.get_data()  # cached for the view; 413 past the size limit
        path = request.path + (f"?{request.query_string.decode()}" if request.query_string else "")
        keyed = Keyed.of(scope_of(request.headers.get("Authorization")), key, "POST", path, body)
        keyed.conn = locks.acquire(keyed.lock_id)
        setattr(g, _CONTEXT, keyed)  # from here on, teardown unlocks whatever happens
        try:
            row = keyed.conn.execute(_SELECT, (keyed.scope, keyed.key_hash)).fetchone()
        except psycopg.Error as exc:
            raise StoreUnavailable(str(exc)) from exc
        if row is None:
            keyed.fresh = True
            return None
        request_hash, status, headers, stored = row
        if not hmac.compare_digest(bytes(request_hash), keyed.fingerprint):
            raise Problem(
                422,
                "idempotency_key_reused",
                f"this {HEADER} was already used for another request (a different method, path"
                " or body); a key stands for one request: to retry, send exactly the same"
                " request; for a new request, send a new key",
            )
        replay = Response(keyed.unseal(bytes(stored)), status, headers=[tuple(h) for h in headers])
        replay.headers[REPLAYED] = "true"
        metrics.IDEMPOTENT_REPLAYS.inc()
        return replay

    @app.after_request
    def store(response: Response) -> Response:
        keyed: Keyed | None = getattr(g, _CONTEXT, None)
        if keyed is None or not keyed.fresh or keyed.conn is None:
            return response
        if response.is_streamed or not storable(response.status_code, response.headers):
            return response
        headers = [
            [k, v] for k, v in response.headers.items() if k.lower() not in _UNSTORED_HEADERS
        ]
        row = (
            keyed.scope,
            keyed.key_hash,
            keyed.method,
            keyed.path,
            keyed.fingerprint,
            response.status_code,
            Jsonb(headers),
            keyed.seal(response.get_data()),
        )
        try:
            keyed.conn.execute(_INSERT, row)
        except psycopg.Error:
            # The request has had its effect: its client gets its response all the same; only a
            # retry would run it again.
            log.exception("could not store the response to an %s", HEADER)
        return response

    @app.teardown_request
    def end(_: BaseException | None) -> None:
        keyed: Keyed | None = g.pop(_CONTEXT, None)
        if keyed is not None and keyed.conn is not None:
            locks.release(keyed.conn, keyed.lock_id)
