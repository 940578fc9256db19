"""service/webhooks/sign.py (issue 36, item 2): a delivery's ``v1`` signature passes the
``standardwebhooks`` library's own verifier (the receiver's side); its ``v1a`` signature
verifies with nothing but the keys ``GET /.well-known/cardroom-keys`` publishes, checked here
with ``cryptography`` and none of the service's code; one changed byte of the body, or of the
id or the timestamp, fails both."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Mapping
from typing import Any

import pytest
from api_client import ApiClient
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

from service import keys as service_keys
from service.webhooks import sign

pytest_plugins = ["api_fixtures"]

BODY = json.dumps(
    {"type": "game.turn", "game_id": "0b0e5c1e-0000-4000-8000-000000000001", "version": 12},
    separators=(",", ":"),
).encode()


@pytest.fixture
def published(api: ApiClient) -> dict[str, Any]:
    """The JWK Set the service publishes, as a receiver fetches it."""
    jwks: dict[str, Any] = api.get("/.well-known/cardroom-keys").json()
    return jwks


def v1a_verifies(body: bytes, headers: Mapping[str, str], jwks: Mapping[str, Any]) -> bool:
    """A receiver's v1a check with the published keys alone (not the service's code)."""
    content = f"{headers['webhook-id']}.{headers['webhook-timestamp']}.".encode() + body
    signatures = [
        base64.b64decode(entry.split(",", 1)[1])
        for entry in headers["webhook-signature"].split(" ")
        if entry.startswith("v1a,")
    ]
    for jwk in jwks["keys"]:
        x = base64.urlsafe_b64decode(jwk["x"] + "=" * (-len(jwk["x"]) % 4))
        key = Ed25519PublicKey.from_public_bytes(x)
        for signature in signatures:
            try:
                key.verify(signature, content)
                return True
            except InvalidSignature:
                continue
    return False


def v1_verifies(body: bytes, headers: Mapping[str, str], secret: str) -> bool:
    try:
        Webhook(secret).verify(body, dict(headers))
        return True
    except (WebhookVerificationError, UnicodeDecodeError):
        return False


def signed(body: bytes = BODY) -> tuple[dict[str, str], str]:
    secret = sign.new_secret()
    return sign.headers("msg_2b8c", int(time.time()), body, secret, service_keys.load()), secret


def test_a_secret_is_whsec_and_32_random_bytes() -> None:
    secrets = {sign.new_secret() for _ in range(20)}
    assert len(secrets) == 20
    for secret in secrets:
        assert secret.startswith("whsec_")
        assert len(base64.b64decode(secret.removeprefix("whsec_"), validate=True)) == 32


def test_the_headers_are_the_standard_three_with_v1_and_v1a() -> None:
    headers, _ = signed()
    assert set(headers) == {"webhook-id", "webhook-timestamp", "webhook-signature"}
    assert headers["webhook-id"] == "msg_2b8c" and headers["webhook-timestamp"].isdigit()
    v1, v1a = headers["webhook-signature"].split(" ")
    assert v1.startswith("v1,") and len(base64.b64decode(v1[3:])) == 32  # HMAC-SHA256
    assert v1a.startswith("v1a,") and len(base64.b64decode(v1a[4:])) == 64  # Ed25519


def test_v1_passes_the_standardwebhooks_verifier(published: dict[str, Any]) -> None:
    headers, secret = signed()
    assert Webhook(secret).verify(BODY, headers) == json.loads(BODY)
    assert not v1_verifies(BODY, headers, sign.new_secret())  # another endpoint's secret


def test_v1a_passes_with_the_published_keys_alone(published: dict[str, Any]) -> None:
    headers, _ = signed()
    assert v1a_verifies(BODY, headers, published)
    stranger = {
        "keys": [dict(published["keys"][-1], x=base64.urlsafe_b64encode(bytes(32)).decode())]
    }
    assert not v1a_verifies(BODY, headers, stranger)


def test_one_changed_byte_of_the_body_fails_both(published: dict[str, Any]) -> None:
    headers, secret = signed()
    for position in (0, len(BODY) // 2, len(BODY) - 1):
        changed = bytearray(BODY)
        changed[position] ^= 0x01
        assert not v1_verifies(bytes(changed), headers, secret), position
        assert not v1a_verifies(bytes(changed), headers, published), position


@pytest.mark.parametrize("header", ["webhook-id", "webhook-timestamp"])
def test_a_changed_id_or_timestamp_fails_both(published: dict[str, Any], header: str) -> None:
    headers, secret = signed()
    moved = {**headers, header: headers[header][:-1] + ("1" if headers[header][-1] != "1" else "2")}
    assert not v1_verifies(BODY, moved, secret)
    assert not v1a_verifies(BODY, moved, published)


def test_v1a_is_signed_with_the_active_key_after_a_rotation() -> None:
    """A ring with two signing keys signs with the last (the active one), which the published
    set holds beside the older one."""
    old, new = service_keys.new_pair(), service_keys.new_pair()
    ring = service_keys.Keyring.from_jwks({"keys": [*old, *new]})
    headers = sign.headers("msg_r", int(time.time()), BODY, sign.new_secret(), ring)
    jwks = ring.jwks()
    assert len(jwks["keys"]) == 2
    assert v1a_verifies(BODY, headers, {"keys": jwks["keys"][1:]})
    assert not v1a_verifies(BODY, headers, {"keys": jwks["keys"][:1]})


def test_a_body_that_is_not_utf8_is_refused() -> None:
    with pytest.raises(UnicodeDecodeError):
        sign.headers("msg_x", 1, b"\xff", sign.new_secret(), service_keys.load())
