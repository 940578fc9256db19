"""Standard Webhooks signatures: ``v1`` (HMAC-SHA256 under the endpoint's secret) and ``v1a``
(Ed25519 under the service's signing key, verifiable with ``/.well-known/cardroom-keys``).

A minimal stand-in with the interface the delivery uses; the full module (the
``standardwebhooks`` library for ``v1``) comes from the webhook-transport work."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

from service.keys import Keyring

PREFIX = "whsec_"


def new_secret() -> str:
    """A new endpoint secret: ``whsec_`` and 24 random bytes in base64."""
    return PREFIX + base64.b64encode(secrets.token_bytes(24)).decode()


def headers(
    msg_id: str, timestamp: int, body: bytes, secret: str, keyring: Keyring
) -> dict[str, str]:
    """The three Standard Webhooks headers of one attempt."""
    signed = f"{msg_id}.{timestamp}.".encode() + body
    key = base64.b64decode(secret.removeprefix(PREFIX))
    v1 = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    v1a = base64.b64encode(keyring.signing[keyring.active_signing].sign(signed)).decode()
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": f"v1,{v1} v1a,{v1a}",
    }
