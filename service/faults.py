"""Test-only fault injection at the named points between "decided" and "answer sent".

Inert unless the server runs with ``CARDROOM_FAULT_INJECTION=1`` (tests only; never set it in
production). Then a request that carries ``X-Cardroom-Fault: <point>:<action>`` meets that fault
at that point; other requests run as usual, so a resend (without the header) runs normally.

Points, in the order a keyed POST passes them:

- ``decided``: the command is decided, nothing appended yet (play.py);
- ``appended``: its events and its idempotency receipt are committed (play.py);
- ``answered``: the answer is built, not yet sent (service/http/idempotency.py).

Actions: ``exit`` ends the worker process at once (``os._exit``: no cleanup, no answer, as a
``kill -9`` would); ``drop`` shuts the client's connection (the request's socket under gunicorn)
and the request goes on, its answer lost.
"""

from __future__ import annotations

import os
import socket

from service.settings import settings

POINTS = ("decided", "appended", "answered")
ACTIONS = ("exit", "drop")
HEADER = "X-Cardroom-Fault"
EXIT_STATUS = 70


def enabled() -> bool:
    return settings().fault_injection


def point(name: str) -> None:
    """Meet the fault the current request asks for at ``name``, if injection is enabled."""
    from flask import has_request_context, request

    # The header first: it is absent from nearly every request, and cheaper to look for.
    if not has_request_context() or HEADER not in request.headers or not enabled():
        return
    wanted = request.headers.get(HEADER, "")
    where, _, action = wanted.partition(":")
    if where != name:
        return
    if action == "exit":
        os._exit(EXIT_STATUS)
    if action == "drop":
        sock = request.environ.get("gunicorn.socket")
        if isinstance(sock, socket.socket):
            sock.shutdown(socket.SHUT_RDWR)
