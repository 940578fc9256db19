"""The gunicorn worker of ``cardroom serve``: gevent's, so that a connection that waits (an event
stream, a long poll, a slow client) costs a greenlet and a socket, not a thread.

On top of gunicorn's gevent worker it cuts hostile clients (settings: service/http/connections.py):
headers that do not arrive within the header timeout close the connection; a body that does not
arrive within the body timeout gets ``408 request_timeout``; and the answers gunicorn itself
gives to malformed HTTP (a bad request line, headers too large, a bad chunk size) are
``application/problem+json`` instead of HTML pages.

Why gevent rather than an asyncio tier for streams: measured in bench/streams.py (README);
psycopg, psycopg_pool, the hub and the turn clock's thread cooperate with it once the process is
monkey-patched, which ``cardroom serve`` does before it imports them (service/cli/main.py).
"""

from __future__ import annotations

import io
import json
import socket
from collections.abc import Callable, Iterable
from http import HTTPStatus
from typing import Any

import gevent
from gunicorn import util
from gunicorn.http import wsgi as gunicorn_wsgi
from gunicorn.workers.ggevent import GeventWorker

from service.http import heap
from service.http.connections import ConnectionSettings
from service.http.problems import PROBLEM_JSON, PROBLEM_TYPE, Problem

MAX_BUFFERED_BODY = 64 * 1024  # read ahead at most this much; the app refuses past 16 KiB (413)

# gunicorn's own answers to requests it cannot parse, by status; any other 4xx is 400's.
TRANSPORT_PROBLEMS = {
    400: Problem(400, "malformed_request", "the HTTP request is malformed"),
    414: Problem(414, "uri_too_long", "the request line is too long; shorten the URL"),
    431: Problem(431, "headers_too_large", "too many or too large request headers"),
    501: Problem(501, "unsupported_transfer_coding", "send the body with Content-Length"),
}
INTERNAL = Problem(500, "internal_error", "something went wrong on our side; it has been logged")
BODY_TIMEOUT = Problem(408, "request_timeout", "the request body did not arrive in time")


def problem_bytes(problem: Problem, instance: str = "", extra_detail: str = "") -> bytes:
    detail = f"{problem.detail}: {extra_detail}" if extra_detail else problem.detail
    body = {
        "type": PROBLEM_TYPE + problem.code,
        "title": HTTPStatus(problem.status).phrase,
        "status": problem.status,
        "detail": detail,
        "instance": instance,
        "code": problem.code,
    }
    return json.dumps(body).encode()


def write_problem(sock: socket.socket, status: int, reason: str, message: str) -> None:
    """Replaces ``gunicorn.util.write_error`` (an HTML page) in this worker."""
    if status >= 500 and status != 501:
        problem = INTERNAL
        message = ""  # nothing of our internals for the client
    else:
        problem = TRANSPORT_PROBLEMS.get(status, TRANSPORT_PROBLEMS[400])
    body = problem_bytes(problem, extra_detail=message)
    head = (
        f"HTTP/1.1 {problem.status} {HTTPStatus(problem.status).phrase}\r\n"
        f"Connection: close\r\nContent-Type: {PROBLEM_JSON}\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    util.write_nonblock(sock, head.encode("latin-1") + body)


class BodyDeadline:
    """Reads a request's body within ``seconds`` before the app sees it (a slow body holds a
    greenlet at most that long), or answers ``408 request_timeout`` and stops reading."""

    def __init__(self, app: Callable[..., Iterable[bytes]], seconds: float) -> None:
        self.app = app
        self.seconds = seconds

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        size = _body_size(environ)
        if size == 0:
            return self.app(environ, start_response)
        try:
            with gevent.Timeout(self.seconds):
                body = environ["wsgi.input"].read(size)
        except gevent.Timeout:
            sock = environ.get("gunicorn.socket")
            if sock is not None:
                sock.shutdown(socket.SHUT_RD)  # the rest of the body is never read: close after
            payload = problem_bytes(BODY_TIMEOUT, environ.get("PATH_INFO", ""))
            headers = [("Content-Type", PROBLEM_JSON), ("Content-Length", str(len(payload)))]
            start_response("408 Request Timeout", headers)
            return [payload]
        environ["wsgi.input"] = io.BytesIO(body)
        return self.app(environ, start_response)


def _body_size(environ: dict[str, Any]) -> int:
    """How many bytes to read ahead: the Content-Length (0 past the limit: the app answers 413
    from the header alone), or up to the limit of a chunked body."""
    if "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower():
        return MAX_BUFFERED_BODY + 1
    length = environ.get("CONTENT_LENGTH") or ""
    if not length.isdigit() or int(length) > MAX_BUFFERED_BODY:
        return 0
    return int(length)


class _Held:
    """Stands in for the socket while gunicorn writes a response's head: keeps the bytes."""

    def __init__(self) -> None:
        self.data = b""

    def sendall(self, data: bytes) -> None:
        self.data += data


class OneSendResponse(gunicorn_wsgi.Response):
    """gunicorn's response, whose head leaves with the first piece of the body in one send.
    gunicorn sent them apart: for each answer two system calls, two packets, and a client that
    woke up twice. The head is held only until the first piece (or the end, for no body): a
    stream's head still leaves with its first event, as before."""

    sock: Any  # the client's socket (gunicorn sets it)
    _head = b""

    def send_headers(self) -> None:
        if not self.headers_sent:
            self._head = self._held(super().send_headers)  # gunicorn's head, as ever

    def _emit_body(self, data: bytes) -> None:
        if not self._head:
            super()._emit_body(data)
            return
        piece = self._held(lambda: super(OneSendResponse, self)._emit_body(data))  # framed
        head, self._head = self._head, b""
        util.write(self.sock, head + piece)

    def _held(self, writes: Any) -> bytes:
        """What ``writes`` would send on the socket, kept instead."""
        sock: Any = self.sock
        held = self.sock = _Held()
        try:
            writes()
            return held.data
        finally:
            self.sock = sock

    def flush_head(self) -> None:
        head, self._head = self._head, b""
        if head:
            util.write(self.sock, head)

    def write(self, arg: bytes) -> None:
        super().write(arg)
        self.flush_head()  # a piece gunicorn chose not to emit (HEAD, past the length)

    def write_file(self, respiter: Any) -> Any:
        self.send_headers()
        self.flush_head()  # before sendfile writes to the socket itself
        return super().write_file(respiter)

    def close(self) -> None:
        self.send_headers()
        self.flush_head()
        super().close()


class CardroomWorker(GeventWorker):
    settings = ConnectionSettings.from_env()
    wsgi: Any
    flask_app: Any

    def init_process(self) -> None:
        util.write_error = write_problem  # gunicorn's answers to malformed HTTP, in this process
        gunicorn_wsgi.Response = OneSendResponse  # what gunicorn_wsgi.create() builds, here
        super().init_process()

    def load_wsgi(self) -> None:
        super().load_wsgi()
        self.flask_app = self.wsgi  # the hooks in service/cli/main.py reach the app through it
        self.wsgi = BodyDeadline(self.wsgi, self.settings.body_timeout)
        heap.settle()  # thousands of open connections: see service/http/heap.py
        gevent.spawn(heap.collect_young, gevent.sleep)

    def timeout_ctx(self) -> gevent.Timeout:
        # Around reading each request's line and headers, and an idle kept-alive connection's
        # wait for its next request: past it the connection is closed (slow-loris).
        return gevent.Timeout(self.settings.header_timeout, False)
