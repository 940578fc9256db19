"""Fault injection between the client package and a real server (tests/test_client_*.py)."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx

STREAMS_PER_ADDRESS = 3  # the servers' cap in client_fixtures: low, so a test can hold them all


Fault = Callable[[httpx.Request], str | None]


class Faulty(httpx.BaseTransport):
    """Sends each request on to the server, unless ``fault(request)`` says otherwise:
    ``"busy"``: answer 503 with Retry-After 0 without sending it; ``"lose"``: send it, then
    lose the answer (a read timeout: the request took effect, the client cannot know);
    ``"forge"``: alter the receipt's signature in the body (the header dropped);
    ``"mismatch"``: alter the receipt in the Cardroom-Receipt header only."""

    def __init__(self, fault: Fault) -> None:
        self.inner = httpx.HTTPTransport()
        self.fault = fault
        self.sent: list[httpx.Request] = []
        self.answers: list[httpx.Response] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.sent.append(request)
        fault = self.fault(request)
        if fault == "busy":
            body = {"code": "database_unavailable", "detail": "injected"}
            return httpx.Response(503, headers={"Retry-After": "0"}, json=body, request=request)
        answer = self.inner.handle_request(request)
        if fault is None or request.url.path.endswith("/stream"):
            self.answers.append(answer)
            return answer
        answer.read()
        answer.close()
        if fault == "lose":
            raise httpx.ReadTimeout("the answer was lost on its way back", request=request)
        body = json.loads(answer.content)
        headers = {"Content-Type": "application/json"}
        if fault == "forge":
            signature = body["receipt"]["signature"]
            body["receipt"]["signature"] = ("A" if signature[0] != "A" else "B") + signature[1:]
        elif fault == "mismatch":
            headers["Cardroom-Receipt"] = answer.headers["Cardroom-Receipt"][:-4] + "AAAA"
        return httpx.Response(answer.status_code, headers=headers, json=body, request=request)

    def close(self) -> None:
        self.inner.close()
