"""What an operator sees of each request: its request id, its log context, its metrics; and the
probes' routes are in service/http/routes/probes.py.

Each request gets its deadline here, first (service/store/budget.py).

A request's id is its ``X-Request-ID`` if the client sent a usable one (a proxy's, a client's
own), else a new UUID; the answer carries it back, and every log line of the request names it.
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from typing import Any

from flask import Flask, Request, Response, g, request

from service import logs, metrics
from service.settings import settings
from service.store import budget
from service.store.events import EventStore

HEADER = "X-Request-ID"
_USABLE_ID = re.compile(r"[A-Za-z0-9._:/+=-]{1,128}")

# One line per request, as gunicorn's access log would write it (method, path without the query,
# protocol, status), with the time taken and the request's context. Never a header: no token.
access_log = logging.getLogger("cardroom.access")


def request_id() -> str:
    sent = request.headers.get(HEADER)
    return sent if sent and _USABLE_ID.fullmatch(sent) else str(uuid.uuid4())


def register(app: Flask, store: EventStore) -> None:
    app.extensions["cardroom_store"] = store
    # The latency histogram's child per (method, route, status): labels() checks and converts
    # its values on every call, the same few combinations every time.
    latency: dict[tuple[str, str, int], Any] = {}

    seconds = settings().request_budget  # read once: every request asks

    @app.before_request
    def _start() -> None:
        budget.start(seconds)  # everything it waits for in the database ends by then
        started = time.perf_counter()
        current = request._get_current_object()  # type: ignore[attr-defined]  # one lookup
        sent = current.headers.get(HEADER)
        rid = sent if sent and _USABLE_ID.fullmatch(sent) else str(uuid.uuid4())
        g.cardroom_request = (started, rid)
        view_args = current.view_args
        logs.start(request_id=rid, game_id=view_args.get("game_id") if view_args else None)

    @app.after_request
    def _finish(response: Response) -> Response:
        current = request._get_current_object()  # type: ignore[attr-defined]
        started, rid = g.get("cardroom_request") or (time.perf_counter(), request_id())
        response.headers[HEADER] = rid
        seconds = time.perf_counter() - started
        rule = current.url_rule
        status = response.status_code
        key = (current.method, rule.rule if rule else "unmatched", status)
        child = latency.get(key)
        if child is None:
            child = latency[key] = metrics.REQUEST_SECONDS.labels(key[0], key[1], str(status))
        child.observe(seconds)
        metrics.sample_pool(store.pool)
        if access_log.isEnabledFor(logging.INFO):  # not even the line's fields otherwise
            _log_access(current, status, seconds)
        return response

    @app.teardown_request
    def _end(_: BaseException | None) -> None:
        budget.end()
        logs.end()


def _log_access(current: Request, status: int, seconds: float) -> None:
    """The request's access line. Built and handed to the handlers directly: ``Logger.info``
    would first walk the stack for the caller's file and line, which no format here shows (a
    third of the line's cost)."""
    method, path = current.method, current.path
    protocol = current.environ.get("SERVER_PROTOCOL", "HTTP/1.1")
    http = {"method": method, "path": path, "status": status}
    http["duration_ms"] = round(seconds * 1000, 2)
    access_log.handle(
        access_log.makeRecord(
            access_log.name,
            logging.INFO,
            __file__,
            0,
            '"%s %s %s" %s %.1f ms',
            (method, path, protocol, status, seconds * 1000),
            None,
            extra={"http": http},
        )
    )
