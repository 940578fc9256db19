"""``Idempotency-Key``: a POST takes effect once, however often it is sent, and every retry gets
its first answer.

Exactly once, across crashes. A keyed request that changes a game hands an *idempotency record*
to the store, which writes it in the same statement (or transaction) as the request's events
(service/store/idempotency_records.py): the row exists exactly when the request took effect,
whatever happens afterwards (a crash before the answer, a reset connection, a 503 after the commit).
A retry that finds it gets the answer rebuilt from the game at the version the request left it at
(the route's own view of that state, so byte for byte the first answer), marked
``Idempotent-Replayed: true``; a retry that finds none runs for the first time. Requests that
change nothing (400, 401, 404, 409, 422…) write no record: a retry meets the same refusal, or
whatever the game says now.

Per request, called by the route once it has authenticated the client (:func:`begin`): the key is
checked (400 ``invalid_idempotency_key`` unless a UUID or a random token of at least 128 bits:
a stored join holds a bearer token, so a key must be unguessable); the client's scope is the
SHA-256 of its bearer token, or ``anonymous``; a PostgreSQL advisory lock on (scope, key) is
taken on a connection held until the request ends, so copies sent at once run one at a time;
under it the record is looked up (422 ``idempotency_key_reused`` if it was for another method,
path or body).

Receipts expire (``CARDROOM_IDEMPOTENCY_TTL`` seconds, default 24 h): the service deletes expired
rows itself, a batch at most every minute per process, and an expired key starts afresh. No
secret is stored in clear: the table keeps the key's SHA-256, a fingerprint of the request keyed
by the key, and a join's token encrypted (AES-GCM) under a key derived from the key and scope.
"""

from __future__ import annotations

import atexit
import hashlib
import hmac
import logging
import os
import re
import threading
import time
from dataclasses import dataclass
from typing import Any

import psycopg
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from flask import Flask, Response, current_app, g, request
from psycopg_pool import ConnectionPool

from service import faults, metrics
from service.http.problems import Problem
from service.settings import settings
from service.store import budget, db, idempotency_records
from service.store.events import StoreUnavailable
from service.store.failures import unavailable
from service.store.idempotency_records import IdempotencyRecord, Stored

log = logging.getLogger(__name__)

HEADER = "Idempotency-Key"
REPLAYED = "Idempotent-Replayed"
MAX_KEY_LENGTH = 255
LOCK_TIMEOUT_SECONDS = 10.0  # app.config["IDEMPOTENCY_LOCK_TIMEOUT"] overrides it
PURGE_INTERVAL_SECONDS = 60.0  # app.config["IDEMPOTENCY_PURGE_INTERVAL"] overrides it
_CONTEXT = "cardroom_idempotency"  # the attribute of flask.g for the request's Keyed
_EXTENSION = "cardroom_idempotency"

_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_HEX = re.compile(r"[0-9a-fA-F]{32,255}")
_BASE64URL = re.compile(r"[A-Za-z0-9_-]{22,255}")


def random_enough(key: str) -> bool:
    """Whether ``key`` has the form of an unguessable value: a UUID (not the nil or max one), 32+
    hex digits, or 22+ base64url characters (128+ bits) of 12+ distinct characters from at
    least two of the classes upper case, lower case, digits, ``-``/``_``. The service cannot
    measure randomness; it refuses what plainly has none (``pick-1-2``, ``my-bot-join-key-1``):
    a random token passes with near certainty. (Both cases were once required: one
    ``token_urlsafe(16)`` in about 50,000 has no lower-case letter, and was refused.)"""
    if _UUID.fullmatch(key):
        return len(set(key.replace("-", "").lower())) > 1
    if _HEX.fullmatch(key):
        return len(set(key.lower())) >= 8
    if _BASE64URL.fullmatch(key):
        classes = {_class_of(c) for c in key}
        return len(classes) >= 2 and len(set(key)) >= 12
    return False


def _class_of(character: str) -> str:
    if character.isupper():
        return "upper"
    if character.islower():
        return "lower"
    return "digit" if character.isdigit() else "mark"


def parse_key(value: str) -> str:
    """The key of an ``Idempotency-Key`` header value; 400 unless it is unguessable."""
    key = value.strip(" \t")
    if len(key) > MAX_KEY_LENGTH or not random_enough(key):
        raise Problem(
            400,
            "invalid_idempotency_key",
            f"the {HEADER} header must be unguessable: a new random UUID (e.g. uuid4) or at least"
            " 128 random bits as 32+ hex digits or 22+ base64url characters, up to"
            f" {MAX_KEY_LENGTH} characters; a new one for each request, the same one to retry it",
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
    secret: bytes  # derived from the key, never stored: keys the fingerprint and the sealing
    fingerprint: bytes
    lock_id: int
    ttl_seconds: float = idempotency_records.DEFAULT_TTL_SECONDS
    conn: psycopg.Connection[Any] | None = None
    stored: Stored | None = None  # the record of an earlier send: replay its answer

    @classmethod
    def of(cls, scope: str, key: str, method: str, path: str, body: bytes) -> Keyed:
        key_hash = hashlib.sha256(key.encode()).hexdigest()
        secret = hmac.digest(key.encode(), b"cardroom-idempotency-v1\0" + scope.encode(), "sha256")
        # The path's length first: no (path, body) pair can pass for another.
        head = f"{method}\0{len(path)}\0{path}\0".encode("utf-8", "surrogateescape")
        fingerprint = hmac.digest(secret, head + body, "sha256")
        lock = hashlib.sha256(f"{scope}\0{key_hash}".encode()).digest()
        lock_id = int.from_bytes(lock[:8], "big", signed=True)
        return cls(scope, key_hash, secret, fingerprint, lock_id)

    def seal(self, body: bytes) -> bytes:
        """``body`` encrypted (AES-GCM, key derived from the idempotency key): only a client that
        sends the key again can read it back."""
        nonce = os.urandom(12)
        return nonce + AESGCM(self.secret).encrypt(nonce, body, None)

    def unseal(self, stored: bytes) -> bytes:
        return AESGCM(self.secret).decrypt(stored[:12], stored[12:], None)

    def record(self, secret: str | None = None) -> IdempotencyRecord:
        """The record the store writes with this request's events; ``secret`` (a join's token)
        is kept sealed for the retries."""
        sealed = None if secret is None else self.seal(secret.encode())
        return IdempotencyRecord(
            self.scope, self.key_hash, self.fingerprint, sealed, self.ttl_seconds
        )

    def stored_secret(self) -> str | None:
        if self.stored is None or self.stored.secret is None:
            return None
        return self.unseal(self.stored.secret).decode()


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
        # A copy waits this long for the first to finish, then gets 409 idempotency_key_in_use
        # (the statement may wait a second longer than the lock: the lock's timeout speaks).
        conn.execute(
            "SELECT set_config('lock_timeout', %s, false),"
            " set_config('statement_timeout', %s, false)",
            (f"{self._lock_timeout_ms}ms", f"{self._lock_timeout_ms + 1000}ms"),
        )

    def acquire(self, lock_id: int) -> psycopg.Connection[Any]:
        pool = self.pool()
        try:
            # Short while the database is known to be down: a 503 at once, not after a wait.
            conn = pool.getconn(timeout=budget.connection_wait(self._source))
        except psycopg.OperationalError as exc:  # PoolTimeout, PoolClosed
            raise unavailable(exc) from exc
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
            raise unavailable(exc) from exc
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


class Purger:
    """Deletes expired idempotency records, at most once per ``interval`` seconds here."""

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self._next = 0.0
        self._guard = threading.Lock()

    def due(self) -> bool:
        now = time.monotonic()
        with self._guard:
            if now < self._next:
                return False
            self._next = now + self.interval
            return True

    def run(self, conn: psycopg.Connection[Any]) -> None:
        try:
            purged = idempotency_records.purge(conn)
        except psycopg.Error:
            log.warning("could not purge expired idempotency keys", exc_info=True)
            return
        if purged:
            log.info("purged %d expired idempotency keys", purged)


def ttl_seconds(app: Flask) -> float:
    configured = app.config.get("IDEMPOTENCY_TTL_SECONDS")
    if configured is None:
        configured = settings().idempotency_ttl
    return float(configured)


def begin() -> Keyed | None:
    """The request's key, locked, with the record of an earlier send if there is one; None
    without the header. Call it after authenticating the client: a key is checked only for a
    request that may run."""
    value = request.headers.get(HEADER)
    if value is None:
        return None
    locks, purger = current_app.extensions[_EXTENSION]
    key = parse_key(value)
    body = request.get_data()  # cached for the view; 413 past the size limit
    path = request.path + (f"?{request.query_string.decode()}" if request.query_string else "")
    keyed = Keyed.of(scope_of(request.headers.get("Authorization")), key, "POST", path, body)
    keyed.ttl_seconds = ttl_seconds(current_app)
    keyed.conn = locks.acquire(keyed.lock_id)
    setattr(g, _CONTEXT, keyed)  # from here on, teardown unlocks whatever happens
    try:
        if purger.due():
            purger.run(keyed.conn)
        stored = idempotency_records.find(keyed.conn, keyed.scope, keyed.key_hash)
        if stored is not None and stored.expired:
            idempotency_records.forget(keyed.conn, keyed.scope, keyed.key_hash)
            stored = None
    except psycopg.Error as exc:
        raise StoreUnavailable(str(exc)) from exc
    if stored is not None and not hmac.compare_digest(stored.request_hash, keyed.fingerprint):
        raise Problem(
            422,
            "idempotency_key_reused",
            f"this {HEADER} was already used for another request (a different method, path"
            " or body); a key stands for one request: to retry, send exactly the same"
            " request; for a new request, send a new key",
        )
    keyed.stored = stored
    return keyed


def replayed(response: Response) -> Response:
    """Mark ``response`` as the answer of an earlier send, rebuilt from its record."""
    response.headers[REPLAYED] = "true"
    metrics.IDEMPOTENT_REPLAYS.inc()
    return response


def register(app: Flask, pool: Any) -> None:
    """Set up the locks (on connections to ``pool``'s database) and the purge; release each
    request's lock when it ends."""
    locks = Locks(pool, float(app.config.get("IDEMPOTENCY_LOCK_TIMEOUT", LOCK_TIMEOUT_SECONDS)))
    interval = float(app.config.get("IDEMPOTENCY_PURGE_INTERVAL", PURGE_INTERVAL_SECONDS))
    app.extensions[_EXTENSION] = (locks, Purger(interval))

    @app.after_request
    def answered(response: Response) -> Response:
        faults.point("answered")  # test-only: a crash or a drop before the answer is sent
        return response

    @app.teardown_request
    def end(_: BaseException | None) -> None:
        keyed: Keyed | None = g.pop(_CONTEXT, None)
        if keyed is not None and keyed.conn is not None:
            locks.release(keyed.conn, keyed.lock_id)
