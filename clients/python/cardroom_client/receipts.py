"""Receipts (``cardroom-receipt/1``): the service's Ed25519 signature on a game's history up to a
version, checked here against its JWK Set (``GET /.well-known/cardroom-keys``) without any of
the service's code.

The signed bytes are the five members other than ``signature``, keys sorted, no whitespace
(RFC 8785; all five are ASCII). Base64url is unpadded in the receipt and in the
``Cardroom-Receipt`` header: padding is restored before decoding."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Mapping
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from .errors import CardroomError

FORMAT = "cardroom-receipt/1"
SIGNED = ("format", "game_id", "version", "commitment", "kid")


class ReceiptError(CardroomError):
    """A receipt that does not verify: the answer it came with is not the service's word."""


def unb64url(text: str) -> bytes:
    """Base64url without its padding (as receipts and JWKs write it) to bytes."""
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def signed_bytes(receipt: Mapping[str, Any]) -> bytes:
    members = {name: receipt[name] for name in SIGNED}
    return json.dumps(members, sort_keys=True, separators=(",", ":")).encode("ascii")


class KeySet:
    """The service's public keys by ``kid``, fetched with ``fetch`` (the JWK Set as JSON) when a
    receipt names a key not known yet (a key rotated in since the last fetch). Without
    ``fetch`` (the AsyncClient, which fetches by itself): ``knows`` and ``load``."""

    def __init__(self, fetch: Callable[[], Any] | None = None) -> None:
        self._fetch = fetch
        self._keys: dict[str, Ed25519PublicKey] = {}

    def knows(self, kid: Any) -> bool:
        return kid in self._keys

    def load(self, jwks: Any) -> None:
        """Add the Ed25519 keys of a JWK Set."""
        for jwk in jwks.get("keys", []) if isinstance(jwks, Mapping) else []:
            if jwk.get("kty") == "OKP" and jwk.get("crv") == "Ed25519" and "kid" in jwk:
                try:
                    raw = unb64url(jwk["x"])
                    self._keys[jwk["kid"]] = Ed25519PublicKey.from_public_bytes(raw)
                except (KeyError, ValueError):
                    continue  # a malformed entry verifies nothing

    def key(self, kid: str) -> Ed25519PublicKey:
        if kid not in self._keys and self._fetch is not None:
            self.load(self._fetch())
        if kid not in self._keys:
            raise ReceiptError(f"the receipt is signed by key {kid!r}, which the service lists not")
        return self._keys[kid]

    def verify(self, receipt: Mapping[str, Any], game_id: str | None = None) -> None:
        """Raise ReceiptError unless ``receipt`` is a well-formed receipt (of ``game_id``, when
        given) signed by one of the service's keys."""
        if not isinstance(receipt, Mapping) or receipt.get("format") != FORMAT:
            raise ReceiptError(f"not a {FORMAT} receipt: {receipt!r}")
        if any(name not in receipt for name in (*SIGNED, "signature")):
            raise ReceiptError(f"the receipt lacks one of {SIGNED} or its signature")
        if game_id is not None and receipt["game_id"] != game_id:
            raise ReceiptError(f"a receipt of game {receipt['game_id']}, not of {game_id}")
        try:
            self.key(receipt["kid"]).verify(unb64url(receipt["signature"]), signed_bytes(receipt))
        except (InvalidSignature, ValueError) as exc:
            raise ReceiptError(f"the receipt's signature does not verify: {receipt!r}") from exc


def from_header(value: str) -> dict[str, Any]:
    """The receipt a ``Cardroom-Receipt`` header carries (base64url, unpadded, of its JSON)."""
    try:
        decoded: dict[str, Any] = json.loads(unb64url(value))
    except ValueError as exc:
        raise ReceiptError(f"the Cardroom-Receipt header is not base64url JSON: {value!r}") from exc
    return decoded
