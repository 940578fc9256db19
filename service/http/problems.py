"""Every error the API gives is RFC 9457 ``application/problem+json`` with a stable ``code``.

``Problem`` is raised anywhere in a request; the handlers registered by :func:`register` turn it,
and every other error (werkzeug's HTTP errors, marshmallow validation errors, domain errors, the
service layer's refusals, an unreachable database), into such a response. Nothing escapes as an
HTML page or a bare 500.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from http import HTTPStatus
from typing import Any

from flask import Flask, Response, request
from flask.json.provider import DefaultJSONProvider
from marshmallow import Schema, ValidationError, fields
from werkzeug.exceptions import HTTPException

from domain.decider import DomainError
from service import keys, metrics
from service.errors import ServiceError
from service.store.events import CorruptEvent, StoreUnavailable

log = logging.getLogger(__name__)

PROBLEM_JSON = "application/problem+json"
PROBLEM_TYPE = "urn:cardroom:problem:"  # + code; the codes are listed in docs/errors.md

# How a domain error's kind maps to HTTP (see domain.decider.DomainError).
DOMAIN_STATUS = {"conflict": 409, "rule": 422, "forbidden": 403, "unauthorized": 401}

# Codes for werkzeug's own errors (routing, body size, methods, content type).
HTTP_CODES = {
    400: "malformed_request",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    413: "body_too_large",
    415: "unsupported_media_type",
    429: "too_many_requests",
}

# When the database cannot serve: a failover ends within a second of the new leader being
# writable (the pools ask every 0.25-0.5 s), so clients are told to come back that soon.
RETRY_AFTER_SECONDS = 1

# A problem's title is its code in words (RFC 9457: the same for every occurrence of a type),
# never the wording of an exception or of the HTTP status; these read better spelled out.
TITLES = {
    "malformed_json": "Malformed JSON",
    "http_error": "HTTP error",
    "invalid_idempotency_key": "Invalid Idempotency-Key",
    "idempotency_key_reused": "Idempotency-Key reused",
    "idempotency_key_in_use": "Idempotency-Key in use",
}


def title_of(code: str) -> str:
    """The fixed title of problems with ``code``."""
    return TITLES.get(code) or code.replace("_", " ").capitalize()


class Problem(Exception):
    """An error response: HTTP ``status``, a stable machine-readable ``code`` and a ``detail``
    that tells a client developer what to do about it."""

    def __init__(
        self,
        status: int,
        code: str,
        detail: str,
        *,
        headers: Mapping[str, str] | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.code = code
        self.detail = detail
        self.headers = dict(headers or {})
        self.extra = extra


class ProblemSchema(Schema):
    type = fields.String(required=True)
    title = fields.String(required=True)
    status = fields.Integer(required=True)
    detail = fields.String(required=True)
    instance = fields.String(required=True)
    code = fields.String(required=True)
    errors = fields.Dict(keys=fields.String(), values=fields.Raw())
    # Where the game is, on every refusal about one: a client resynchronises without a GET.
    version = fields.Integer(metadata={"description": "the game's current version"})
    round = fields.Integer(metadata={"description": "the game's current round (Sushi Go!)"})
    turn = fields.Integer(metadata={"description": "the game's current turn"})
    cause = fields.String(
        metadata={
            "description": "why the database could not serve the request (503): `down`,"
            " `pool`, `lock`, `statement`, `standby`, `read_only`, `disk_full`; or why this"
            " server cannot (`keys`)"
        }
    )
    checks = fields.Dict(
        keys=fields.String(),
        values=fields.String(),
        metadata={"description": "GET /readyz: each readiness check's result (`ok` or why not)"},
    )


_problem_schema = ProblemSchema()


def problem_response(problem: Problem) -> Response:
    body = {
        "type": PROBLEM_TYPE + problem.code,
        "title": title_of(problem.code),
        "status": problem.status,
        "detail": problem.detail,
        "instance": request.path,
        "code": problem.code,
        **problem.extra,
    }
    # The standard library's encoding, as Flask's default provider gave it: problems are rare,
    # and their bodies stay byte for byte what clients have seen (service/http/json_provider.py).
    text = json.dumps(
        _problem_schema.dump(body), sort_keys=True, default=DefaultJSONProvider.default
    )
    response = Response(text, problem.status)
    response.content_type = PROBLEM_JSON
    response.headers.update(problem.headers)
    return response


def _from_http(error: HTTPException) -> Response:
    status = error.code or 500
    code = HTTP_CODES.get(status, "http_error")
    detail = error.description or HTTPStatus(status).phrase
    headers = {"Allow": ", ".join(error.valid_methods)} if status == 405 else {}  # type: ignore[attr-defined]
    return problem_response(Problem(status, code, detail, headers=headers))


def _from_validation(error: ValidationError) -> Response:
    messages = error.messages if isinstance(error.messages, dict) else {"_schema": error.messages}
    fields_named = ", ".join(sorted(messages))
    return problem_response(
        Problem(
            400,
            "invalid_request",
            f"invalid or unknown fields: {fields_named}; see errors",
            errors=messages,
        )
    )


def from_domain(error: DomainError, **where: Any) -> Problem:
    """The problem for a refusal of the rules; ``where``: the game's version and turn."""
    status = DOMAIN_STATUS.get(error.kind, 422)
    extra = {"errors": dict(error.details)} if error.details else {}
    return Problem(status, error.code, error.message, **extra, **where)


def _from_domain(error: DomainError) -> Response:
    return problem_response(from_domain(error))


def _from_service(error: ServiceError) -> Response:
    headers = {} if error.retry_after is None else {"Retry-After": str(error.retry_after)}
    status = DOMAIN_STATUS.get(error.kind, 422)
    if status == 401:
        headers["WWW-Authenticate"] = f'Bearer error="{error.code}"'

    extra = {"errors": error.details} if error.details else {}
    return problem_response(
        Problem(status, error.code, error.message, headers=headers, **extra, **error.where)
    )


# What a 503 says of each cause (service/store/failures.py): the operator looks in different
# places for each, and a client learns whether its write may have happened.
UNAVAILABLE = {
    "down": "the database cannot be reached or refuses connections right now; retry after a moment",
    "pool": "every database connection of this server is busy (pool exhausted); retry after a"
    " moment",
    "lock": "the database did not grant a lock in time (another transaction holds it); nothing"
    " was written; retry after a moment",
    "statement": "the database did not answer within this request's time budget; retry after a"
    " moment",
    "standby": "the synchronous standby did not confirm the write in time (standby missing):"
    " it is committed on the primary but not replicated; retry with the same Idempotency-Key"
    " to get its answer",
    "read_only": "the database is read-only (a standby, or read-only transactions); nothing was"
    " written; retry after a moment",
    "disk_full": "the database's disk is full; nothing was written; retry later",
    "keys": "this server's keys lack the key this game's seed is sealed under (another host"
    " rotated the keys; the operator hands this host the new ones); nothing was written; retry"
    " after a moment",
}

# A missing key is an operator's matter, mended in minutes, not a failover's second: and its
# host's /readyz fails meanwhile, so that a load balancer sends the retry elsewhere.
KEYS_RETRY_AFTER_SECONDS = 5


def unavailable_problem(error: StoreUnavailable) -> Problem:
    """The 503 of ``error``: its detail names the cause, ``cause`` gives it to machines."""
    return Problem(
        503,
        "database_unavailable",
        UNAVAILABLE[error.cause],
        headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
        cause=error.cause,
    )


def _from_store(error: StoreUnavailable) -> Response:
    log.warning("database unavailable (%s): %s", error.cause, error)
    metrics.UNAVAILABLE.inc()
    return problem_response(unavailable_problem(error))


def _from_missing_key(error: keys.KeyUnknown) -> Response:
    log.warning("keys: %s; this host's keys (%s) lack it", error, keys.source())
    return problem_response(
        Problem(
            503,
            "keys_unavailable",
            f"key {error.kid!r}: {UNAVAILABLE['keys']}",
            headers={"Retry-After": str(KEYS_RETRY_AFTER_SECONDS)},
            cause="keys",
        )
    )


def _from_corrupt_event(error: CorruptEvent) -> Response:
    log.error("corrupt event: %s", error)  # one line: the game and version say where to look
    return problem_response(
        Problem(
            500,
            "corrupt_event",
            f"{error} (a fault on our side, logged): the game cannot be shown or exported until"
            f" an operator restores the row; its audit (GET /games/{error.game_id}/audit)"
            " reports what is wrong",
            errors={"version": error.version},
        )
    )


def _unexpected(error: Exception) -> Response:
    log.exception("unexpected error on %s %s", request.method, request.path)
    return problem_response(
        Problem(500, "internal_error", "something went wrong on our side; it has been logged")
    )


def register(app: Flask) -> None:
    app.register_error_handler(Problem, problem_response)
    app.register_error_handler(HTTPException, _from_http)
    app.register_error_handler(ValidationError, _from_validation)
    app.register_error_handler(DomainError, _from_domain)
    app.register_error_handler(ServiceError, _from_service)
    app.register_error_handler(StoreUnavailable, _from_store)
    app.register_error_handler(keys.KeyUnknown, _from_missing_key)
    app.register_error_handler(CorruptEvent, _from_corrupt_event)
    app.register_error_handler(Exception, _unexpected)
