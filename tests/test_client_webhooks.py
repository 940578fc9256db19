"""The client's webhook check (clients/python/cardroom_client/webhooks.py, issue 36, item 7):
``verify`` accepts a delivery signed by the service (service/webhooks/sign.py) with the JWK Set
alone and returns its body; it refuses, with ``WebhookError`` and its reason, a missing header,
an old or future timestamp, a changed byte, another key's signature, a body that is not an
object. ``Client.verify_webhook`` fetches the keys from the service once (a receiver on
loopback stands in for it), and once more when a key has rotated in; forged deliveries cannot
make it fetch more than once per ``refetch_after``."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from cardroom_client import Client, WebhookError, WebhookKeys
from cardroom_client.webhooks import verify
from pytest_httpserver import HTTPServer

from service import keys as service_keys
from service.webhooks import sign

NOW = 1_800_000_000
BODY = json.dumps({"type": "game.turn", "game_id": "g1", "version": 3, "seat": 0}).encode()


def ring() -> service_keys.Keyring:
    return service_keys.Keyring.from_jwks({"keys": service_keys.new_pair()})


def delivery(
    keyring: service_keys.Keyring, body: bytes = BODY, at: int = NOW, msg_id: str = "msg_1"
) -> dict[str, str]:
    return sign.headers(msg_id, at, body, sign.new_secret(), keyring)


def reason(body: bytes, headers: dict[str, str], jwks: dict[str, Any], **kw: Any) -> str:
    with pytest.raises(WebhookError) as refused:
        verify(body, headers, jwks, **kw)
    return refused.value.reason


def test_a_signed_delivery_verifies_with_the_key_set_alone() -> None:
    keyring = ring()
    headers = delivery(keyring)
    assert verify(BODY, headers, keyring.jwks(), now=NOW + 10) == json.loads(BODY)
    shouted = {name.title(): value for name, value in headers.items()}  # Webhook-Id, ...
    assert verify(BODY, shouted, keyring.jwks(), now=NOW) == json.loads(BODY)


def test_missing_or_malformed_headers_are_refused() -> None:
    keyring = ring()
    headers = delivery(keyring)
    for name in headers:
        less = {k: v for k, v in headers.items() if k != name}
        assert reason(BODY, less, keyring.jwks(), now=NOW) == "headers"
    odd = {**headers, "webhook-timestamp": "2026-01-01T00:00:00Z"}
    assert reason(BODY, odd, keyring.jwks(), now=NOW) == "headers"


def test_a_timestamp_outside_the_tolerance_is_refused() -> None:
    keyring = ring()
    headers, jwks = delivery(keyring), keyring.jwks()
    verify(BODY, headers, jwks, now=NOW + 300)
    verify(BODY, headers, jwks, now=NOW - 300)
    assert reason(BODY, headers, jwks, now=NOW + 301) == "timestamp"  # a replay
    assert reason(BODY, headers, jwks, now=NOW - 301) == "timestamp"
    assert reason(BODY, headers, jwks, now=NOW + 61, tolerance=60) == "timestamp"


def test_a_changed_byte_or_another_keys_signature_is_refused() -> None:
    keyring = ring()
    headers, jwks = delivery(keyring), keyring.jwks()
    for position in range(len(BODY)):
        changed = bytearray(BODY)
        changed[position] ^= 0x20
        assert reason(bytes(changed), headers, jwks, now=NOW) == "signature"
    assert reason(BODY, delivery(ring()), jwks, now=NOW) == "signature"
    v1_only = {**headers, "webhook-signature": headers["webhook-signature"].split(" ")[0]}
    assert reason(BODY, v1_only, jwks, now=NOW) == "signature"
    junk = {**headers, "webhook-signature": "v1a,not-base64!! v1a"}
    assert reason(BODY, junk, jwks, now=NOW) == "signature"
    assert reason(BODY, headers, {"keys": []}, now=NOW) == "signature"


def test_a_verified_body_that_is_not_an_object_is_refused() -> None:
    keyring = ring()
    for body in (b"[1, 2]", b"not json"):
        assert reason(body, delivery(keyring, body), keyring.jwks(), now=NOW) == "body"


def keys_endpoint(server: HTTPServer, *sets: dict[str, Any]) -> None:
    """The service's keys route, answering ``sets`` in turn (the last one from then on)."""
    served = list(sets)

    def answer(request: Any) -> Any:
        from werkzeug import Response

        current = served.pop(0) if len(served) > 1 else served[0]
        return Response(json.dumps(current), content_type="application/json")

    server.expect_request("/.well-known/cardroom-keys").respond_with_handler(answer)


def key_fetches(server: HTTPServer) -> int:
    return sum(1 for request, _ in server.log if request.path == "/.well-known/cardroom-keys")


def test_the_client_fetches_the_keys_once_and_again_when_a_key_rotated_in(
    httpserver_ipv4: HTTPServer,
) -> None:
    old, new = ring(), ring()
    keys_endpoint(httpserver_ipv4, old.jwks(), {"keys": old.jwks()["keys"] + new.jwks()["keys"]})
    now = int(time.time())
    with Client(f"http://127.0.0.1:{httpserver_ipv4.port}") as client:
        for n in range(5):
            body = client.verify_webhook(BODY, delivery(old, at=now, msg_id=f"msg_{n}"))
            assert body["type"] == "game.turn"
        assert key_fetches(httpserver_ipv4) == 1
        assert client.verify_webhook(BODY, delivery(new, at=now))["version"] == 3
        assert key_fetches(httpserver_ipv4) == 2  # once more, for the rotated key
        with pytest.raises(WebhookError) as forged:
            client.verify_webhook(BODY, delivery(ring(), at=now))
        assert forged.value.reason == "signature"
        assert key_fetches(httpserver_ipv4) == 2  # not again within refetch_after


def test_forged_deliveries_refetch_at_most_once_per_interval() -> None:
    keyring, clock, fetched = ring(), [0.0], []

    def fetch() -> dict[str, Any]:
        fetched.append(clock[0])
        return keyring.jwks()

    keys = WebhookKeys(fetch, refetch_after=30.0, clock=lambda: clock[0])
    keys.verify(BODY, delivery(keyring), now=NOW)
    for step in range(10):  # a forged delivery every 10 s for 100 s
        clock[0] = step * 10.0
        with pytest.raises(WebhookError):
            keys.verify(BODY, delivery(ring()), now=NOW)
    assert fetched == [0.0, 0.0, 30.0, 60.0, 90.0]  # the first fetch, then refetches
    clock[0] = 1000.0
    with pytest.raises(WebhookError) as old:  # not a signature problem: no fetch
        keys.verify(BODY, delivery(keyring), now=NOW + 3600)
    assert old.value.reason == "timestamp" and len(fetched) == 5
