"""A webhook receiver for the tests (issue 36): a real HTTP server on loopback (pytest-httpserver,
threaded) that answers the registration's challenge, keeps every delivery it gets, checks both
signatures (``v1`` with the ``standardwebhooks`` library, ``v1a`` with the service's published
key alone) and answers as the test says."""

from __future__ import annotations

import base64
import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from pytest_httpserver import HTTPServer
from standardwebhooks.webhooks import Webhook
from werkzeug import Request, Response

from domain.receipts import unb64url

SETTINGS = {  # what the tests' servers and deliverers run with
    "CARDROOM_WEBHOOKS_INSECURE": "1",  # the receivers are on loopback, over plain HTTP
    "CARDROOM_WEBHOOKS_RETRY_SCHEDULE": "0.05,0.05,0.05",
    "CARDROOM_WEBHOOKS_JITTER": "0",
    "CARDROOM_WEBHOOKS_POLL": "0.1",
    "CARDROOM_WEBHOOKS_TIMEOUT": "1",
}


@dataclass(frozen=True)
class Received:
    id: str
    timestamp: str
    signature: str
    body: bytes
    at: float
    status: int = 0  # what the receiver answered

    @property
    def payload(self) -> dict[str, Any]:
        return json.loads(self.body)

    @property
    def type(self) -> str:
        return str(self.payload["type"])

    @property
    def data(self) -> dict[str, Any]:
        return dict(self.payload["data"])

    def headers(self) -> dict[str, str]:
        return {
            "webhook-id": self.id,
            "webhook-timestamp": self.timestamp,
            "webhook-signature": self.signature,
        }


Answer = Callable[[Received], "int | tuple[int, dict[str, str]]"]


@dataclass
class Receiver:
    """One endpoint's URL on the server: ``received`` (deliveries, not challenges) in order;
    ``answer`` decides each status (default 204); ``echo`` False answers the challenge badly."""

    server: HTTPServer
    path: str = field(default_factory=lambda: f"/hook/{uuid.uuid4().hex}")
    answer: Answer = lambda received: 204
    echo: bool = True
    received: list[Received] = field(default_factory=list)
    challenges: list[Received] = field(default_factory=list)
    in_flight: dict[str, int] = field(default_factory=dict)  # per webhook-id, posts being served
    overlaps: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.server.expect_request(self.path, method="POST").respond_with_handler(self._handle)

    @property
    def url(self) -> str:
        return self.server.url_for(self.path)

    def _handle(self, request: Request) -> Response:
        got = Received(
            request.headers.get("webhook-id", ""),
            request.headers.get("webhook-timestamp", ""),
            request.headers.get("webhook-signature", ""),
            request.get_data(),
            time.monotonic(),
        )
        if got.type == "webhook.verify":
            with self.lock:
                self.challenges.append(got)
            echoed = got.data["challenge"] if self.echo else "something else"
            return Response(json.dumps({"challenge": echoed}), 200, mimetype="application/json")
        with self.lock:
            self.in_flight[got.id] = self.in_flight.get(got.id, 0) + 1
            self.overlaps += self.in_flight[got.id] > 1
        answered: int | tuple[int, dict[str, str]] = 500
        try:
            answered = self.answer(got)
        finally:
            status, headers = answered if isinstance(answered, tuple) else (answered, {})
            with self.lock:
                self.in_flight[got.id] -= 1
                self.received.append(replace(got, status=status))
        return Response("ok" if status < 300 else "no", status, headers=headers)

    def snapshot(self) -> list[Received]:
        with self.lock:
            return list(self.received)

    def delivered(self) -> list[Received]:
        """The deliveries it answered 2xx, in arrival order."""
        return [r for r in self.snapshot() if 200 <= r.status < 300]


def verify_both(received: Received, secret: str, jwks: dict[str, Any]) -> None:
    """Both signatures hold: ``v1`` (standardwebhooks, with the endpoint's secret) and ``v1a``
    (Ed25519, with a key of the published set)."""
    Webhook(secret).verify(received.body, received.headers())
    signed = f"{received.id}.{received.timestamp}.".encode() + received.body
    signatures = [part.split(",", 1) for part in received.signature.split(" ")]
    v1a = [base64.b64decode(value) for version, value in signatures if version == "v1a"]
    assert v1a, received.signature
    keys = [Ed25519PublicKey.from_public_bytes(unb64url(k["x"])) for k in jwks["keys"]]
    assert any(_holds(key, v1a[0], signed) for key in keys)


def _holds(key: Ed25519PublicKey, signature: bytes, signed: bytes) -> bool:
    try:
        key.verify(signature, signed)
    except Exception:
        return False
    return True


def receiving() -> Iterator[HTTPServer]:
    """A threaded HTTP server on 127.0.0.1 (a module's ``hooks_server`` fixture yields it)."""
    server = HTTPServer(host="127.0.0.1", port=0, threaded=True)
    server.start()
    yield server
    server.clear()
    server.stop()
