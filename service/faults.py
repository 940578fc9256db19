"""Test-only fault injection at the named points between "decided" and "answer sent".

Inert unless the server runs with ``CARDROOM_FAULT_INJECTION=1`` (tests only; never set it in
production). Then a request that carries ``X-Cardroom-Fault: <point>:<action>`` meets that fault
at that point; other requests run as usual, so a resend (without the header) runs normally.

Points, in the order a keyed POST passes them:

- ``decided``: the command is decided, nothing appended yet (play/);
- ``appended``: its events and its idempotency receipt are committed (play/);
- ``answered``: the answer is built, not yet sent (service/http/idempotency.py).

And in an export (service/http/exporting.py): ``export_read`` (action ``short``: the read of
the events loses its tail) and ``export_half`` (half the lines are built).

Actions: ``exit`` ends the worker process at once (``os._exit``: no cleanup, no answer, as a
``kill -9`` would); ``drop`` shuts the client's connection (the request's socket under gunicorn)
and the request goes on, its answer lost; ``fail`` raises :class:`InjectedFault` there.
"""

from __future__ import annotations

import os
import socket

from service.settings import settings

POINTS = ("decided", "appended", "answered", "export_read", "export_half")
ACTIONS = ("exit", "drop", "fail", "short")
HEADER = "X-Cardroom-Fault"
EXIT_STATUS = 70


def enabled() -> bool:
    return settings().fault_injection


class InjectedFault(RuntimeError):
    """The failure a test asked for (action ``fail``)."""


def wanted(name: str) -> str | None:
    """The action the current request asks for at point ``name``, if injection is enabled."""
    # Whether injection is on first: off in every real server, and the cheapest to ask
    # (settings() is cached: 0.6 us, against 3.4 us for the request's headers).
    if not enabled():
        return None
    from flask import has_request_context, request

    if not has_request_context() or HEADER not in request.headers:
        return None
    where, _, action = request.headers.get(HEADER, "").partition(":")
    return action if where == name else None


def point(name: str) -> None:
    """Meet the fault the current request asks for at ``name``, if injection is enabled."""
    from flask import request

    action = wanted(name)
    if action is None:
        return
    if action == "fail":
        raise InjectedFault(f"injected at {name}")
    if action == "exit":
        os._exit(EXIT_STATUS)
    if action == "drop":
        sock = request.environ.get("gunicorn.socket")
        if isinstance(sock, socket.socket):
            sock.shutdown(socket.SHUT_RDWR)
