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
unguessable); the client's scope is the SHA-256 of its bearer token, or ``anonymous``. Then the
request runs (:func:`once`), taking nothing and reading nothing first: a keyed pick is one
round trip, its append with its record. The record's unique index on (scope, key) (migration
0024) is what keeps copies apart: a copy sent at the same time waits in its own insert for the
first one's transaction, then fails on the index (``KeyTaken``) and replays the first answer, or
goes on if the first rolled back. The record is looked up only when the request is refused or
its key is taken (an earlier send committed: the game moved on, the seat has picked): then an
earlier send's answer is replayed, a key used for another method, path or body (or, for an
answer that holds a secret, by another client: :func:`client_binding`) is 422
``idempotency_key_reused``, and with no record the refusal stands. A copy still waiting for the
first send when its lock wait runs out gets 409 ``idempotency_key_in_use`` (``Retry-After``).

Receipts expire (``CARDROOM_IDEMPOTENCY_TTL`` seconds, default 24 h): the service deletes expired
rows itself, a batch at most every minute per process, and an expired key starts afresh. No
secret is stored in clear: the table keeps the key's SHA-256, a fingerprint of the request keyed
by the key, a join's token encrypted (AES-GCM) under a key derived from the key, the scope and
the client's binding, and that binding only as an HMAC keyed by the key.
"""

from __future__ import annotations

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
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import psycopg
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from flask import Flask, Response, current_app, request
from marshmallow import ValidationError
from werkzeug.exceptions import HTTPException

from domain.decider import DomainError
from service import faults, metrics
from service.errors import ServiceError
from service.http.problems import Problem
from service.settings import settings
from service.store import idempotency_records, request_records
from service.store.events import GameNotFound, StoreUnavailable
from service.store.failures import KeyTaken, StoreError, log_failure
from service.store.idempotency_records import IdempotencyRecord, Stored
from service.store.request_records import Answer, StoredAnswer

log = logging.getLogger(__name__)

HEADER = "Idempotency-Key"
SECRET_HEADER = "Idempotency-Secret"
ANONYMOUS = "anonymous"  # the scope of requests without a bearer token
REPLAYED = "Idempotent-Replayed"
MAX_KEY_LENGTH = 255
PURGE_INTERVAL_SECONDS = 60.0  # app.config["IDEMPOTENCY_PURGE_INTERVAL"] overrides it
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
    if not text.isascii():
        return any(_same(text, period) * 2 > len(text) - period for period in _PERIODS)
    # The same count, on integers: the text's bytes as one number, its first n - period bytes
    # XOR its last n - period, whose zero bytes are the characters equal to the one a period
    # on. The loop over map(operator.eq) cost a keyed request 81,000 instructions of its
    # 129,000 for the key (callgrind); this costs about a tenth.
    raw = text.encode("ascii")
    whole = int.from_bytes(raw, "big")
    for period in _PERIODS:
        width = len(raw) - period
        if width <= 0:
            if width < 0:  # no pair at all: 0 matches, more than half of a negative count
                return True
            continue
        first, last = whole >> (8 * period), whole & ((1 << (8 * width)) - 1)
        if (first ^ last).to_bytes(width, "big").count(0) * 2 > width:
            return True
    return False


_PERIODS = range(2, 9)  # the lengths of a repeated block looked for


def _same(text: str, period: int) -> int:
    """How many characters of ``text`` equal the one ``period`` after them."""
    return sum(map(operator.eq, text, text[period:]))


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
    """One POST with an ``Idempotency-Key``: what identifies it, and what an earlier send of it
    left, once looked up (:func:`look_up`)."""

    scope: str
    key_hash: str  # stored in place of the key
    secret: bytes  # derived from the key, never stored: keys the fingerprint and the sealing
    fingerprint: bytes
    binding: bytes = b""  # what binds the request to its client, keyed by ``secret``
    ttl_seconds: float = idempotency_records.DEFAULT_TTL_SECONDS
    answers: bool = False  # the route keeps its answers whole (request_records): look there too
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
        bound = b"cardroom-idempotency-binding-v1\0" + client.encode("utf-8", "surrogateescape")
        binding = hmac.digest(secret, bound, "sha256")
        return cls(scope, key_hash, secret, fingerprint, binding)

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

    def run(self, store: Connections) -> None:
        """One batch of each table, on a connection of the store (once a minute per process:
        its round trip is no request's to speak of). Best effort: the next batch catches up."""
        try:
            with store.connection() as conn:
                purged = idempotency_records.purge(conn) + request_records.purge(conn)
        except (psycopg.Error, StoreError) as exc:
            log_failure(log, "could not purge expired idempotency keys", exc)
            return
        if purged:
            log.info("purged %d expired idempotency keys", purged)


class Connections(Protocol):
    """What the keys need of the event store: its connections, within the request's budget."""

    def connection(self) -> contextlib.AbstractContextManager[psycopg.Connection[Any]]: ...


def ttl_seconds(app: Flask) -> float:
    configured = app.config.get("IDEMPOTENCY_TTL_SECONDS")
    if configured is None:
        configured = settings().idempotency_ttl
    return float(configured)


def begin(answers: bool = False) -> Keyed | None:
    """The request's key (None without the header), checked: nothing is taken and, but for
    ``answers``, nothing is read. Call it after authenticating the client (a key is checked
    only for a request that may run), then run the request through :func:`once`. ``answers``:
    the route keeps its answers whole (request_records: a change that is not a game's); an
    earlier send's is looked up now (``keyed.answer``: replay it), as these changes may not
    refuse a second run (a second token minted, a second challenge offered)."""
    value = request.headers.get(HEADER)
    if value is None:
        check_headers()  # an Idempotency-Secret alone is held to its rule all the same
        return None
    key = parse_key(value)
    body = request.get_data()  # cached for the view; 413 past the size limit
    path = request.path + (f"?{request.query_string.decode()}" if request.query_string else "")
    scope = scope_of(request.headers.get("Authorization"))
    keyed = Keyed.of(scope, key, "POST", path, body, client_binding(scope))
    keyed.ttl_seconds = ttl_seconds(current_app)
    keyed.answers = answers
    store, purger = current_app.extensions[_EXTENSION]
    if purger.due():
        purger.run(store)
    if answers:
        look_up(keyed)
    return keyed


def once(
    keyed: Keyed | None,
    run: Callable[[], Response],
    replay: Callable[[Keyed], Response] | None = None,
) -> Response:
    """The answer of ``run()``, the request's change with its record written in the change's
    transaction (``keyed.record()``, :func:`record_answer`); for a keyed request whose change
    is refused, or whose record cannot be written because its key has one (``KeyTaken``: a copy
    that ran at the same time committed first, its insert having waited for that), the key is
    looked up: an earlier send's answer is replayed (``replay(keyed)`` rebuilds a game's from
    ``keyed.stored``; an answer kept whole is sent as it was), a key used for another request
    is 422, and with none the refusal stands. A record that expired is forgotten and the
    request runs again. Nothing is looked up on the way to a change that is accepted: a keyed
    pick is one round trip."""
    if keyed is None:
        return run()
    if keyed.answer is not None:  # found by begin
        return replayed_answer(keyed)
    for _ in range(RUNS):
        try:
            return run()
        except KeyTaken:
            refusal: Exception | None = None
        except StoreUnavailable as exc:
            if _waited_for_key(exc):
                raise _in_use() from exc
            raise
        except Exception as exc:
            if not _refusal(exc):
                raise
            refusal = exc
        if look_up(keyed):
            if keyed.answer is not None:
                return replayed_answer(keyed)
            if keyed.stored is not None and replay is not None:
                return replayed(replay(keyed))
        if refusal is not None:
            raise refusal
    raise _in_use()  # taken each time, and gone each time it was looked for: expiring at once


RUNS = 3  # a key taken by a record that expired: forgotten, and the request runs again


def _refusal(error: BaseException) -> bool:
    """Whether ``error`` refuses the request (a 4xx answer: nothing was changed), so that an
    earlier send of it may have to be replayed instead."""
    if isinstance(error, Problem):
        return error.status < 500
    if isinstance(error, HTTPException):
        return error.code is not None and error.code < 500
    return isinstance(error, (ServiceError, DomainError, ValidationError, GameNotFound))


def _waited_for_key(error: StoreUnavailable) -> bool:
    """Whether a write ran out of time waiting for another send of the request (its insert
    waited on the key's index for that send's transaction): PostgreSQL names the index."""
    cause = error.__cause__
    context = cause.diag.context if isinstance(cause, psycopg.Error) else None
    return bool(context) and any(f'"{name}"' in str(context) for name in _KEY_INDEXES)


_KEY_INDEXES = (*idempotency_records.CONSTRAINTS, request_records.CONSTRAINT)


def _in_use() -> Problem:
    return Problem(
        409,
        "idempotency_key_in_use",
        f"a request with this {HEADER} is still being processed; send it again after"
        " Retry-After seconds to get its response",
        headers={"Retry-After": "1"},
    )


def look_up(keyed: Keyed) -> bool:
    """Whether an earlier send of this request took effect: its record (``keyed.stored``), or
    for a route that keeps its answers the answer (``keyed.answer``). A record that expired is
    deleted (its key starts afresh). 422 ``idempotency_key_reused`` if the key was used for
    another request, or by another client for an answer that holds a secret."""
    store = current_app.extensions[_EXTENSION][0]
    with store.connection() as conn:
        stored = idempotency_records.find(conn, keyed.scope, keyed.key_hash)
        if stored is not None and stored.expired:
            idempotency_records.forget(conn, keyed.scope, keyed.key_hash)
            stored = None
        answer = None
        if keyed.answers and stored is None:
            answer = request_records.find(conn, keyed.scope, keyed.key_hash)
            if answer is not None and answer.expired:
                request_records.forget(conn, keyed.scope, keyed.key_hash)
                answer = None
    if stored is not None:
        _check_stored(keyed, stored)
    if answer is not None:
        _check_answer(keyed, answer)
    keyed.stored, keyed.answer = stored, answer
    return stored is not None or answer is not None


def _check_stored(keyed: Keyed, stored: Stored) -> None:
    if not hmac.compare_digest(stored.request_hash, keyed.fingerprint):
        raise Problem(
            422,
            "idempotency_key_reused",
            f"this {HEADER} was already used for another request (a different method, path"
            " or body); a key stands for one request: to retry, send exactly the same"
            " request; for a new request, send a new key",
        )
    if not keyed.owns(stored):
        raise Problem(
            422,
            "idempotency_key_reused",
            f"this {HEADER} was already used by another client, and its answer holds a secret"
            " (a seat's token, an invitation) that only that client gets. To retry your own"
            f" request, send the same {SECRET_HEADER} header as with its first send (without"
            " one, a client is known by its address); for a new request, send a new key",
        )


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


def register(app: Flask, store: Connections) -> None:
    """Set up the lookups and the purge (on ``store``'s connections)."""
    interval = float(app.config.get("IDEMPOTENCY_PURGE_INTERVAL", PURGE_INTERVAL_SECONDS))
    app.extensions[_EXTENSION] = (store, Purger(interval))

    @app.after_request
    def answered(response: Response) -> Response:
        faults.point("answered")  # test-only: a crash or a drop before the answer is sent
        return response
