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
checked (400 ``invalid_idempotency_key`` unless a random UUID v4 or a random token of at least
128 bits without runs or repeats: a stored join holds a bearer token, so a key must be
unguessable); the client's scope is the SHA-256 of its bearer token, or ``anonymous``; a
PostgreSQL advisory lock on (scope, key) is taken on a connection held until the request ends,
so copies sent at once run one at a time; under it the record is looked up (422
``idempotency_key_reused`` if it was for another method, path or body, or if its answer holds a
secret and this request comes from another client: :func:`client_binding`).

Receipts expire (``CARDROOM_IDEMPOTENCY_TTL`` seconds, default 24 h): the service deletes expired
rows itself, a batch at most every minute per process, and an expired key starts afresh. No
secret is stored in clear: the table keeps the key's SHA-256, a fingerprint of the request keyed
by the key, a join's token encrypted (AES-GCM) under a key derived from the key, the scope and
the client's binding, and that binding only as an HMAC keyed by the key.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import hashlib
import hmac
import logging
import operator
import os
import re
import threading
import time
from dataclasses import dataclass
from typing import Any

import psycopg
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from flask import Flask, Response, current_app, g, request
from psycopg import sql
from psycopg_pool import ConnectionPool

from service import faults, metrics
from service.http.problems import Problem
from service.settings import settings
from service.store import budget, db, idempotency_records, request_records
from service.store.events import StoreUnavailable
from service.store.failures import unavailable
from service.store.idempotency_records import IdempotencyRecord, Stored
from service.store.request_records import Answer, StoredAnswer

log = logging.getLogger(__name__)

HEADER = "Idempotency-Key"
SECRET_HEADER = "Idempotency-Secret"
ANONYMOUS = "anonymous"  # the scope of requests without a bearer token
REPLAYED = "Idempotent-Replayed"
MAX_KEY_LENGTH = 255
LOCK_TIMEOUT_SECONDS = 10.0  # app.config["IDEMPOTENCY_LOCK_TIMEOUT"] overrides it
PURGE_INTERVAL_SECONDS = 60.0  # app.config["IDEMPOTENCY_PURGE_INTERVAL"] overrides it
_CONTEXT = "cardroom_idempotency"  # the attribute of flask.g for the request's Keyed
_EXTENSION = "cardroom_idempotency"

_UUID4 = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", re.I)
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)
_HEX = re.compile(r"[0-9a-fA-F]{32,255}")
_BASE64URL = re.compile(r"[A-Za-z0-9_-]{22,255}")
_HEX_ORDER = "0123456789abcdef"
_BASE64URL_ORDER = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
LONGEST_RUN = 8  # of one character, or of consecutive ones (0123…, fedc…): 9+ is refused
HOW_TO_MAKE_ONE = (
    "a new random UUID v4 (Python: uuid.uuid4(); JavaScript: crypto.randomUUID(); shell:"
    " python3 -c 'import uuid; print(uuid.uuid4())'), or at least 128 random bits as 32+ hex"
    " digits or 22+ base64url characters (Python: secrets.token_urlsafe(16))"
)


def random_enough(key: str) -> bool:
    """Whether ``key`` has the form of an unguessable value: a random UUID (version 4, with its
    variant bits), 32+ hex digits, or 22+ base64url characters (128+ bits; of 10+ distinct
    characters from at least two of the classes upper case, lower case, digits, ``-``/``_``);
    and passes a simple entropy check (:func:`_patterned`: no run of 9+ equal or consecutive
    characters, no short block repeated). The service cannot measure randomness; it refuses
    what plainly has none (``pick-1-2``, a counter, a time-based UUID v1, ``0000…0001``): a
    random value passes with near certainty (a UUID v4 fails about once in 10^8)."""
    if _UUID.fullmatch(key):
        digits = key.replace("-", "").lower()
        return (
            bool(_UUID4.fullmatch(key))
            and len(set(digits)) >= 6
            and not _patterned(digits, _HEX_ORDER)
        )
    if _HEX.fullmatch(key):
        digits = key.lower()
        return len(set(digits)) >= 8 and not _patterned(digits, _HEX_ORDER)
    if _BASE64URL.fullmatch(key):
        classes = {_class_of(c) for c in key}
        return len(classes) >= 2 and len(set(key)) >= 10 and not _patterned(key, _BASE64URL_ORDER)
    return False


def _patterned(text: str, order: str) -> bool:
    """Runs of 9+ equal characters or of 9+ consecutive ones in ``order`` (either way), or a
    block of up to 8 characters repeated over more than half the text. (Searched for in C:
    substrings and ``map``; a loop over the characters cost a keyed request 20 us.)"""
    if _EQUAL_RUN.search(text) or any(run in text for run in _sequences(order)):
        return True
    for period in range(2, 9):
        same = sum(map(operator.eq, text, text[period:]))
        if same * 2 > len(text) - period:
            return True
    return False


_EQUAL_RUN = re.compile(r"(.)\1{" + str(LONGEST_RUN) + "}", re.DOTALL)


@functools.cache
def _sequences(order: str) -> tuple[str, ...]:
    """Every run of ``LONGEST_RUN + 1`` consecutive characters of ``order``, up and down."""
    n = LONGEST_RUN + 1
    return tuple(o[i : i + n] for o in (order, order[::-1]) for i in range(len(order) - n + 1))


def _class_of(character: str) -> str:
    if character.isupper():
        return "upper"
    if character.islower():
        return "lower"
    return "digit" if character.isdigit() else "mark"


def parse_key(value: str, header: str = HEADER) -> str:
    """The key of an ``Idempotency-Key`` header value (or of ``header``, another header held
    to the same rule); 400 unless it is unguessable."""
    key = value.strip(" \t")
    if len(key) > MAX_KEY_LENGTH or not random_enough(key):
        usage = "a new one for each request, the same one to retry it"
        if header != HEADER:
            usage = "the same one with a request and each of its retries"
        raise Problem(
            400,
            "invalid_idempotency_key",
            f"the {header} header must be unguessable: {HOW_TO_MAKE_ONE}, up to"
            f" {MAX_KEY_LENGTH} characters; other UUID versions, and values with runs,"
            f" sequences or repeats (0000…, 1234…, abab…) are refused; {usage}",
        )
    return key


def check_headers() -> None:
    """400 ``invalid_idempotency_key`` if the request's ``Idempotency-Key`` or
    ``Idempotency-Secret`` (sent with a key or without) is not unguessable; for a POST that
    keeps no record (:func:`begin` checks them where one is kept)."""
    for header in (HEADER, SECRET_HEADER):
        value = request.headers.get(header)
        if value is not None:
            parse_key(value, header)


def scope_of(authorization: str | None) -> str:
    """Who sent the request: SHA-256 hex of its bearer token, or ``anonymous`` without one.

    An Authorization header that is not ``Bearer <token>`` is hashed whole: its own scope, not
    ``anonymous``, and no 401 here (routes without security ignore the header)."""
    if authorization is None:
        return ANONYMOUS
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
    binding: bytes = b""  # what binds the request to its client, keyed by ``secret``
    ttl_seconds: float = idempotency_records.DEFAULT_TTL_SECONDS
    conn: psycopg.Connection[Any] | None = None
    stored: Stored | None = None  # the record of an earlier send: replay its answer
    answer: StoredAnswer | None = None  # ... or the answer kept whole (request_records)

    @classmethod
    def of(
        cls, scope: str, key: str, method: str, path: str, body: bytes, client: str = ""
    ) -> Keyed:
        """``client``: what only the sending client has (see :func:`client_binding`)."""
        key_hash = hashlib.sha256(key.encode()).hexdigest()
        secret = hmac.digest(key.encode(), b"cardroom-idempotency-v1\0" + scope.encode(), "sha256")
        # The path's length first: no (path, body) pair can pass for another.
        head = f"{method}\0{len(path)}\0{path}\0".encode("utf-8", "surrogateescape")
        fingerprint = hmac.digest(secret, head + body, "sha256")
        lock = hashlib.sha256(f"{scope}\0{key_hash}".encode()).digest()
        lock_id = int.from_bytes(lock[:8], "big", signed=True)
        bound = b"cardroom-idempotency-binding-v1\0" + client.encode("utf-8", "surrogateescape")
        binding = hmac.digest(secret, bound, "sha256")
        return cls(scope, key_hash, secret, fingerprint, lock_id, binding)

    def _sealing_key(self, bound: bool = True) -> bytes:
        """The key a secret is sealed under: derived from the idempotency key, the scope and the
        client's binding (records written before migration 0014: the key and scope only)."""
        if not bound:
            return self.secret
        return hmac.digest(self.secret, b"cardroom-idempotency-seal-v2\0" + self.binding, "sha256")

    def seal(self, body: bytes) -> bytes:
        """``body`` encrypted (AES-GCM, key derived from the idempotency key and the client's
        binding): only the client that sent the key, sending it again, can read it back."""
        nonce = os.urandom(12)
        return nonce + AESGCM(self._sealing_key()).encrypt(nonce, body, None)

    def unseal(self, stored: bytes, bound: bool = True) -> bytes:
        return AESGCM(self._sealing_key(bound)).decrypt(stored[:12], stored[12:], None)

    def record(self, secret: str | None = None) -> IdempotencyRecord:
        """The record the store writes with this request's events; ``secret`` (a join's token)
        is kept sealed for the retries of this client only."""
        sealed = None if secret is None else self.seal(secret.encode())
        return IdempotencyRecord(
            self.scope, self.key_hash, self.fingerprint, sealed, self.ttl_seconds, self.binding
        )

    def answer_row(self) -> Answer:
        """The row of this request's answer, for a change that is not a game's (the store
        writes it with the change: :func:`record_answer`)."""
        return Answer(self.scope, self.key_hash, self.fingerprint, self.binding, self.ttl_seconds)

    def owns(self, stored: Stored) -> bool:
        """Whether this request may have the secret ``stored`` keeps: it comes from the client
        that made the first request (same binding). A record written before bindings existed
        is trusted to a bearer token's scope only: anonymous clients could not be told apart."""
        if stored.secret is None:
            return True  # nothing secret in the answer: any retry of the request gets it
        if stored.binding is None:
            return self.scope != ANONYMOUS
        return hmac.compare_digest(stored.binding, self.binding)

    def stored_secret(self) -> str | None:
        if self.stored is None or self.stored.secret is None:
            return None
        bound = self.stored.binding is not None
        return self.unseal(self.stored.secret, bound).decode()


class Locks:
    """Advisory locks on connections of a pool of their own, opened on first use.

    Why not the store's pool: a request that holds a lock still needs the store's connections;
    were the locks held on those, enough concurrent keyed requests would take every connection
    and then wait for one more until the pool timed out."""

    def __init__(
        self, source: Any, lock_timeout: float, watchdog: budget.Watchdog | None = None
    ) -> None:
        self._source = source  # the store's pool: where to connect, and how many at most
        # The request's deadline holds on these connections too: a server that stops
        # answering (cut off) must not hold the request past it (service/store/budget.py).
        self.watchdog = watchdog or budget.Watchdog(lambda: str(source.conninfo))
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
                self._pool = db.Pool(
                    source.conninfo,
                    connection_class=source.connection_class,
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

    def acquire(
        self, lock_id: int, scope: str, key_hash: str
    ) -> tuple[psycopg.Connection[Any], Stored | None]:
        """A connection holding the lock ``lock_id``, and the record of (``scope``,
        ``key_hash``) as it is once the lock is granted.

        One round trip: two statements in one query string (in a pipeline psycopg spends more
        CPU than on a round trip), the lookup after the lock, so that its snapshot, taken once
        the lock is granted, sees whatever the lock's previous holder committed."""
        pool = self.pool()
        try:
            # Short while the database is known to be down: a 503 at once, not after a wait.
            conn = pool.getconn(timeout=budget.connection_wait(self._source))
        except psycopg.OperationalError as exc:  # PoolTimeout, PoolClosed
            raise unavailable(exc) from exc
        query = _LOCK_AND_FIND.format(
            sql.Literal(lock_id), sql.Literal(scope), sql.Literal(key_hash)
        )
        try:
            with self.guarded(conn):
                cursor = conn.execute(query, prepare=False)  # a new string each time
                cursor.nextset()  # the lookup's rows
                return conn, idempotency_records.stored(cursor.fetchone())
        except psycopg.Error as exc:
            held = _holds_a_lock(conn)
            if held:  # granted: the lookup failed
                self.release(conn, lock_id)
                raise StoreUnavailable(str(exc)) from exc
            if held is None:
                conn.close()  # whatever it holds goes with the session
            pool.putconn(conn)
            # Its lock_timeout, or the request's deadline, came first: the other copy has it.
            if isinstance(exc, (psycopg.errors.LockNotAvailable, psycopg.errors.QueryCanceled)):
                raise Problem(
                    409,
                    "idempotency_key_in_use",
                    f"a request with this {HEADER} is still being processed; send it again"
                    " after Retry-After seconds to get its response",
                    headers={"Retry-After": "1"},
                ) from None
            db.note_unreachable(self._source, exc)
            raise unavailable(exc) from exc

    def guarded(self, conn: psycopg.Connection[Any]) -> contextlib.AbstractContextManager[Any]:
        """Work on a lock's connection that ends by the request's deadline."""
        return self.watchdog.guard(conn, budget.deadline())

    def release(self, conn: psycopg.Connection[Any], lock_id: int) -> None:
        try:
            if db.known_unreachable(self._source):
                # Ending the session releases the lock, without a round trip to a server
                # that may not answer (the answer waits for this).
                conn.close()
            else:
                with self.watchdog.guard(conn, max(budget.deadline(), time.monotonic() + 0.1)):
                    conn.execute("SELECT pg_advisory_unlock(%s)", (lock_id,))
        except psycopg.Error:
            # A lock must never go back to the pool with its connection: ending the session
            # releases it (the pool discards a closed connection).
            conn.close()
        finally:
            self.pool().putconn(conn)


# Values as literals: several statements go in one query only without parameters.
_LOCK_AND_FIND = sql.SQL(
    "SELECT pg_advisory_lock({}); " + idempotency_records.FIND.replace("%s", "{}")
)


def _holds_a_lock(conn: psycopg.Connection[Any]) -> bool | None:
    """Whether the session holds an advisory lock (a lock connection holds only the one it was
    asked for, or none); None if it cannot say."""
    if conn.broken or conn.closed:  # severed by the watchdog, or lost: nothing to ask
        return None
    try:
        row = conn.execute(
            "SELECT EXISTS (SELECT FROM pg_locks WHERE locktype = 'advisory'"
            " AND pid = pg_backend_pid() AND granted)"
        ).fetchone()
    except psycopg.Error:
        return None
    return bool(row and row[0])


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
            purged = idempotency_records.purge(conn) + request_records.purge(conn)
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


def begin(answers: bool = False) -> Keyed | None:
    """The request's key, locked, with the record of an earlier send if there is one; None
    without the header. Call it after authenticating the client: a key is checked only for a
    request that may run. ``answers``: the route keeps its answers whole (request_records:
    a change that is not a game's); the lookup then looks there too."""
    value = request.headers.get(HEADER)
    if value is None:
        check_headers()  # an Idempotency-Secret alone is held to its rule all the same
        return None
    locks, purger = current_app.extensions[_EXTENSION]
    key = parse_key(value)
    body = request.get_data()  # cached for the view; 413 past the size limit
    path = request.path + (f"?{request.query_string.decode()}" if request.query_string else "")
    scope = scope_of(request.headers.get("Authorization"))
    keyed = Keyed.of(scope, key, "POST", path, body, client_binding(scope))
    keyed.ttl_seconds = ttl_seconds(current_app)
    keyed.conn, stored = locks.acquire(keyed.lock_id, keyed.scope, keyed.key_hash)
    setattr(g, _CONTEXT, keyed)  # from here on, teardown unlocks whatever happens
    try:
        with locks.guarded(keyed.conn):
            if stored is not None and stored.expired:
                idempotency_records.forget(keyed.conn, keyed.scope, keyed.key_hash)
                stored = None
            if answers and stored is None:
                keyed.answer = _answer(keyed)
            if purger.due():  # after the lookup, not before: an expired record is forgotten above
                purger.run(keyed.conn)
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
    if stored is not None and not keyed.owns(stored):
        raise Problem(
            422,
            "idempotency_key_reused",
            f"this {HEADER} was already used by another client, and its answer holds a secret"
            " (a seat's token, an invitation) that only that client gets. To retry your own"
            f" request, send the same {SECRET_HEADER} header as with its first send (without"
            " one, a client is known by its address); for a new request, send a new key",
        )
    keyed.stored = stored
    if keyed.answer is not None:
        _check_answer(keyed, keyed.answer)
    return keyed


def _answer(keyed: Keyed) -> StoredAnswer | None:
    assert keyed.conn is not None
    answer = request_records.find(keyed.conn, keyed.scope, keyed.key_hash)
    if answer is not None and answer.expired:
        request_records.forget(keyed.conn, keyed.scope, keyed.key_hash)
        return None
    return answer


def _check_answer(keyed: Keyed, answer: StoredAnswer) -> None:
    """An answer kept whole goes to the same request from the same client only (it may hold a
    token shown once)."""
    if not hmac.compare_digest(answer.request_hash, keyed.fingerprint):
        raise Problem(
            422,
            "idempotency_key_reused",
            f"this {HEADER} was already used for another request (a different method, path"
            " or body); a key stands for one request: to retry, send exactly the same"
            " request; for a new request, send a new key",
        )
    if not hmac.compare_digest(answer.binding or b"", keyed.binding):
        raise Problem(
            422,
            "idempotency_key_reused",
            f"this {HEADER} was already used by another client, and its answer may hold a"
            f" secret that only that client gets. To retry your own request, send the same"
            f" {SECRET_HEADER} header as with its first send (without one, a client is known by"
            " its address); for a new request, send a new key",
        )


def record_answer(
    cur: Any, keyed: Keyed | None, status: int, body: bytes, location: str | None = None
) -> None:
    """Keep this keyed request's answer (sealed) in ``cur``'s transaction: the change's."""
    if keyed is not None:
        request_records.insert(cur, keyed.answer_row(), status, location, keyed.seal(body))


def replayed_answer(keyed: Keyed) -> Response:
    """The answer kept for an earlier send of this request, as it was sent."""
    answer = keyed.answer
    assert answer is not None
    body = keyed.unseal(answer.body)
    response = Response(body, answer.status, mimetype="application/json")
    if answer.location is not None:
        response.headers["Location"] = answer.location
    return replayed(response)


def client_binding(scope: str) -> str:
    """What binds a keyed request to the client that sent it, so that a replayed secret goes to
    that client only: its ``Idempotency-Secret`` header (a random value it sends with the
    request and each retry, shown in no answer), else, without a bearer token, its address.
    With a token and no header, nothing more: the token is what a guesser lacks.

    Why a value the client keeps rather than its address alone: a phone that moves from Wi-Fi
    to a mobile network between a request and its retry changes address, and a secret bound to
    the address would be lost to it (the seat taken, its token never delivered)."""
    value = request.headers.get(SECRET_HEADER)
    if value is not None:
        return "secret\0" + parse_key(value, SECRET_HEADER)
    if scope == ANONYMOUS:
        return "address\0" + (request.remote_addr or "")
    return ""


def replayed(response: Response) -> Response:
    """Mark ``response`` as the answer of an earlier send, rebuilt from its record."""
    response.headers[REPLAYED] = "true"
    metrics.IDEMPOTENT_REPLAYS.inc()
    return response


def register(app: Flask, pool: Any, watchdog: budget.Watchdog | None = None) -> None:
    """Set up the locks (on connections to ``pool``'s database, their statements watched by
    ``watchdog``) and the purge; release each request's lock when it ends."""
    timeout = float(app.config.get("IDEMPOTENCY_LOCK_TIMEOUT", LOCK_TIMEOUT_SECONDS))
    locks = Locks(pool, timeout, watchdog)
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
