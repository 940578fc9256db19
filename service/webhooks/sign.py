"""Standard Webhooks signatures (standardwebhooks.com) for a delivery (issue 36, item 2).

``webhook-signature`` carries two signatures of the same content, ``{id}.{timestamp}.{body}``:
``v1`` (HMAC-SHA256 under the endpoint's ``whsec_`` secret, made by the ``standardwebhooks``
library, so any Standard Webhooks receiver checks it) and ``v1a`` (Ed25519 under the service's
active signing key: a receiver checks it with nothing but ``GET /.well-known/cardroom-keys``,
trying each published key, as the spec's asymmetric scheme does; no key id travels with it).
"""

from __future__ import annotations

import base64
import secrets
from datetime import UTC, datetime

from standardwebhooks import Webhook

from service.keys import Keyring

SECRET_PREFIX = "whsec_"
SECRET_BYTES = 32  # the spec asks for 24 to 64 random bytes


def new_secret() -> str:
    """A new endpoint secret: ``whsec_`` and the base64 of 32 random bytes (shown once)."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode("ascii")


def signed_content(msg_id: str, timestamp: int, body: bytes) -> bytes:
    """What both signatures cover: ``{webhook-id}.{webhook-timestamp}.{body}``."""
    return f"{msg_id}.{timestamp}.".encode() + body


def headers(
    msg_id: str, timestamp: int, body: bytes, secret: str, keyring: Keyring
) -> dict[str, str]:
    """The three Standard Webhooks headers of a delivery of ``body`` (UTF-8 JSON: the library's
    ``v1`` signs text; bytes that are not UTF-8 raise UnicodeDecodeError). ``msg_id`` is the
    same on every retry; ``timestamp`` is the attempt's, in Unix seconds."""
    sent_at = datetime.fromtimestamp(timestamp, tz=UTC)
    v1 = Webhook(secret).sign(msg_id, sent_at, body.decode("utf-8"))
    key = keyring.signing[keyring.active_signing]
    v1a = "v1a," + base64.b64encode(key.sign(signed_content(msg_id, timestamp, body))).decode()
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": f"{v1} {v1a}",
    }
