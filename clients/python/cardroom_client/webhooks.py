"""Webhook deliveries (Standard Webhooks) checked with the service's published keys alone.

Each delivery carries ``webhook-id``, ``webhook-timestamp`` and ``webhook-signature``; the
signature holds ``v1a,<base64 Ed25519>`` over ``{webhook-id}.{webhook-timestamp}.{body}``, made
with the service's signing key, so a receiver needs no secret: only the JWK Set of
``GET /.well-known/cardroom-keys``. (It holds ``v1,<HMAC>`` too, under the endpoint's ``whsec_``
secret, for receivers that use a Standard Webhooks library instead.) No key id travels with a
signature: every published key is tried, and ``WebhookKeys`` fetches the set again once when
none verifies (a key rotated in since).

``webhook-id`` is the same on every retry of a delivery: a receiver that must act once keeps
the ids it has handled (deliveries come at least once)."""

from __future__ import annotations

import base64
import binascii
import json
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from .errors import CardroomError
from .receipts import unb64url

TOLERANCE = 300  # seconds a delivery's timestamp may be from now, either way (the spec's 5 min)
MAX_SIGNATURES = 8  # v1a entries tried per delivery: a header cannot make a receiver work more
REFETCH_AFTER = 30.0  # seconds between two fetches of the keys caused by a failing delivery


class WebhookError(CardroomError):
    """A delivery that is not shown to be the service's, now: answer it 4xx and act on nothing.
    ``reason``: ``headers`` (missing or malformed), ``timestamp`` (too old or too new: a replay,
    or a clock off), ``signature`` (no v1a signature verifies with the published keys), or
    ``body`` (verified, but not a JSON object)."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def public_keys(jwks: Mapping[str, Any]) -> list[Ed25519PublicKey]:
    """The Ed25519 keys of a JWK Set (``GET /.well-known/cardroom-keys``)."""
    found = []
    for jwk in jwks.get("keys", []) if isinstance(jwks, Mapping) else []:
        if isinstance(jwk, Mapping) and jwk.get("kty") == "OKP" and jwk.get("crv") == "Ed25519":
            try:
                found.append(Ed25519PublicKey.from_public_bytes(unb64url(str(jwk["x"]))))
            except (KeyError, ValueError):
                continue  # a malformed entry verifies nothing
    return found


def verify(
    body: bytes,
    headers: Mapping[str, str],
    keys: Mapping[str, Any],
    *,
    tolerance: int = TOLERANCE,
    now: float | None = None,
) -> dict[str, Any]:
    """The delivery's JSON body, once its ``v1a`` signature verifies with one of ``keys`` (the
    JWK Set) and its timestamp is within ``tolerance`` seconds of ``now`` (default: the clock);
    else WebhookError. ``body``: the request's bytes exactly as received."""
    found = {name.lower(): value for name, value in headers.items()}
    msg_id = found.get("webhook-id")
    stamp = found.get("webhook-timestamp")
    signature = found.get("webhook-signature")
    if not (msg_id and stamp and signature):
        raise WebhookError(
            "headers", "missing webhook-id, webhook-timestamp or webhook-signature header"
        )
    if not stamp.isdigit():
        raise WebhookError("headers", f"webhook-timestamp is not Unix seconds: {stamp[:40]!r}")
    skew = (time.time() if now is None else now) - int(stamp)
    if abs(skew) > tolerance:
        when = "old" if skew > 0 else "in the future"
        raise WebhookError(
            "timestamp",
            f"the delivery's timestamp is {abs(int(skew))} s {when} (more than {tolerance} s)",
        )
    content = f"{msg_id}.{stamp}.".encode() + body
    if not _verifies(content, _v1a(signature), public_keys(keys)):
        raise WebhookError(
            "signature", "no v1a signature of this delivery verifies with the service's keys"
        )
    try:
        parsed = json.loads(body)
    except ValueError:
        raise WebhookError("body", "the delivery's body is not JSON") from None
    if not isinstance(parsed, dict):
        raise WebhookError("body", "the delivery's body is not a JSON object")
    return parsed


def _v1a(header: str) -> list[bytes]:
    signatures = []
    for entry in header.split(" ")[: MAX_SIGNATURES * 2]:
        version, _, encoded = entry.partition(",")
        if version != "v1a":
            continue  # v1 (HMAC, the endpoint's secret) and versions to come
        try:
            signatures.append(base64.b64decode(encoded, validate=True))
        except (binascii.Error, ValueError):
            continue
    return signatures[:MAX_SIGNATURES]


def _verifies(content: bytes, signatures: list[bytes], keys: list[Ed25519PublicKey]) -> bool:
    for signature in signatures:
        for key in keys:
            try:
                key.verify(signature, content)
                return True
            except InvalidSignature:
                continue
    return False


class WebhookKeys:
    """The service's keys for checking deliveries: fetched with ``fetch`` (the JWK Set) on first
    use and kept; fetched again once when a delivery verifies with none of them (a key rotated
    in); such fetches at most once every ``refetch_after`` seconds, so forged deliveries cannot
    make the receiver hammer the service. Safe to share between threads."""

    def __init__(
        self,
        fetch: Callable[[], Mapping[str, Any]],
        *,
        refetch_after: float = REFETCH_AFTER,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._fetch = fetch
        self._refetch_after = refetch_after
        self._clock = clock
        self._lock = threading.Lock()
        self._jwks: Mapping[str, Any] | None = None
        self._refetched_at: float | None = None  # the last fetch a failing delivery caused

    def jwks(self) -> Mapping[str, Any]:
        """The keys as last fetched (fetched now if never)."""
        with self._lock:
            if self._jwks is None:
                self._refresh()
            assert self._jwks is not None
            return self._jwks

    def _refresh(self) -> None:
        self._jwks = self._fetch()

    def _refetched(self, seen: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """A newer set than ``seen``, if one may be fetched (or another thread just did)."""
        with self._lock:
            if self._jwks is not seen:
                return self._jwks
            now = self._clock()
            if self._refetched_at is not None and now - self._refetched_at < self._refetch_after:
                return None
            self._refetched_at = now
            self._refresh()
            return self._jwks

    def verify(
        self,
        body: bytes,
        headers: Mapping[str, str],
        *,
        tolerance: int = TOLERANCE,
        now: float | None = None,
    ) -> dict[str, Any]:
        """As ``verify``, with these keys; once more with a fresh set if none verifies."""
        seen = self.jwks()
        try:
            return verify(body, headers, seen, tolerance=tolerance, now=now)
        except WebhookError as error:
            if error.reason != "signature":
                raise
            fresh = self._refetched(seen)
            if fresh is None:
                raise
        return verify(body, headers, fresh, tolerance=tolerance, now=now)
