"""Receipts: the service's Ed25519 signature on the history of a game up to version ``version``.

A receipt (format ``cardroom-receipt/1``) is a JSON object::

    {"format": "cardroom-receipt/1", "game_id": "<uuid>", "version": 12,
     "commitment": "<HMAC-SHA256(seed, 'cardroom-receipt-v1' 0x00 hash(12)), 64 hex>",
     "kid": "<key id>",
     "signature": "<base64url, unpadded: Ed25519 (RFC 8032) over the bytes below>"}

The signed bytes are the RFC 8785 (JCS) canonical JSON of the object without ``signature``:
its other five members, keys sorted, no whitespace. ``kid`` names the service's public key in
its JWK Set (``GET /.well-known/cardroom-keys``: OKP/Ed25519 keys, RFC 8037); a key's id is its
RFC 7638 thumbprint, so a bare public key can be matched too. Since every event's hash chains
all the events before it (domain/chain.py), a receipt for version v vouches for the whole
history up to v: an export whose event v gives another commitment is a history the service did
not sign.

Why a commitment and not the hash itself: a seat holds receipts while the game goes on, and two
hashes of the unkeyed chain would let it test guesses of what lies between them (another seat's
unrevealed pick, a card drawn in Sequence, the other hands of a deal); the same reason an export
carries no hashes before the end. The commitment is keyed by the game's secret seed, which the
game's last event reveals (S18): once the game is over anyone recomputes it from the export.

Pure: no keys are read here; the caller passes them.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from domain import canonical

FORMAT = "cardroom-receipt/1"
SIGNED_MEMBERS = ("format", "game_id", "version", "commitment", "kid")
_CONTEXT = b"cardroom-receipt-v1\0"
_HEX64 = re.compile(r"^[0-9a-f]{64}$")


class Refused(ValueError):
    """A receipt that proves nothing: malformed, signed by an unknown key, or forged."""


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


# --- keys ----------------------------------------------------------------------------------------


def raw_public(key: Ed25519PublicKey) -> bytes:
    return key.public_bytes(Encoding.Raw, PublicFormat.Raw)


def key_id(key: Ed25519PublicKey) -> str:
    """RFC 7638 thumbprint: base64url(SHA-256(JCS({"crv", "kty", "x"})))."""
    members = {"crv": "Ed25519", "kty": "OKP", "x": b64url(raw_public(key))}
    return b64url(hashlib.sha256(canonical.dumps(members)).digest())


def public_jwk(key: Ed25519PublicKey) -> dict[str, str]:
    """The public JWK (RFC 8037) of ``key``."""
    return {
        "kty": "OKP",
        "crv": "Ed25519",
        "x": b64url(raw_public(key)),
        "kid": key_id(key),
        "use": "sig",
        "alg": "EdDSA",
    }


def public_keys(jwks: Mapping[str, Any]) -> dict[str, Ed25519PublicKey]:
    """The Ed25519 public keys of a JWK Set (or of one JWK), by ``kid`` (its thumbprint if it
    has none). Other keys, and private members, are ignored."""
    jwks_keys = jwks.get("keys") if "keys" in jwks else [jwks]
    keys: dict[str, Ed25519PublicKey] = {}
    for jwk in jwks_keys if isinstance(jwks_keys, list) else []:
        if not isinstance(jwk, Mapping) or jwk.get("kty") != "OKP" or jwk.get("crv") != "Ed25519":
            continue
        try:
            key = Ed25519PublicKey.from_public_bytes(unb64url(str(jwk["x"])))
        except (KeyError, ValueError) as exc:
            kid = jwk.get("kid")
            raise ValueError(f"key {kid!r} is not an Ed25519 public key: {exc}") from None
        keys[str(jwk.get("kid") or key_id(key))] = key
    return keys


# --- signing and verifying -----------------------------------------------------------------------


def signed_bytes(receipt: Mapping[str, Any]) -> bytes:
    """What the signature covers: JCS of the receipt's members but ``signature``."""
    return canonical.dumps({name: receipt[name] for name in SIGNED_MEMBERS})


def commitment(seed: bytes, digest: str) -> str:
    """The hash of an event, hidden until the game's seed is revealed."""
    return hmac.new(seed, _CONTEXT + bytes.fromhex(digest), hashlib.sha256).hexdigest()


def sign(
    key: Ed25519PrivateKey,
    game_id: str,
    version: int,
    digest: str,
    seed: bytes,
    kid: str | None = None,
) -> dict[str, Any]:
    """A receipt for event ``version`` of ``game_id`` whose hash is ``digest``, signed with
    ``key``; ``seed`` is the game's secret seed. ``kid``: ``key_id`` of ``key``'s public key,
    if the caller keeps it (it costs a canonical JSON and a hash to compute)."""
    receipt: dict[str, Any] = {
        "format": FORMAT,
        "game_id": str(game_id),
        "version": version,
        "commitment": commitment(seed, digest),
        "kid": kid or key_id(key.public_key()),
    }
    receipt["signature"] = b64url(key.sign(signed_bytes(receipt)))
    return receipt


def verify(receipt: Any, keys: Mapping[str, Ed25519PublicKey]) -> dict[str, Any]:
    """``receipt`` if its signature holds under one of ``keys``; else raises :class:`Refused`."""
    if not isinstance(receipt, Mapping):
        raise Refused("not a JSON object")
    if receipt.get("format") != FORMAT:
        raise Refused(f"format is {receipt.get('format')!r}, not {FORMAT!r}")
    missing = [m for m in (*SIGNED_MEMBERS, "signature") if m not in receipt]
    if missing:
        raise Refused(f"missing {', '.join(missing)}")
    version, committed = receipt["version"], receipt["commitment"]
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise Refused("version must be an integer from 1")
    if not isinstance(committed, str) or not _HEX64.match(committed):
        raise Refused("commitment must be 64 lowercase hex digits")
    key = keys.get(receipt["kid"]) if isinstance(receipt["kid"], str) else None
    if key is None:
        raise Refused(
            f"signed by key {receipt['kid']!r}, which is not one of the given public keys"
            f" ({', '.join(sorted(keys)) or 'none'})"
        )
    try:
        key.verify(unb64url(str(receipt["signature"])), signed_bytes(receipt))
    except (InvalidSignature, ValueError):
        raise Refused(
            f"the signature does not verify under key {receipt['kid']!r}: forged or altered"
        ) from None
    return dict(receipt)


# --- against an export ---------------------------------------------------------------------------


def _commits_to(signed: Mapping[str, Any], record: Mapping[str, Any] | None, seed: bytes) -> bool:
    return record is not None and hmac.compare_digest(
        commitment(seed, record["hash"]), signed["commitment"]
    )


def check_checkpoint(
    checkpoint: Any,
    records: Sequence[Mapping[str, Any]],
    keys: Mapping[str, Ed25519PublicKey],
    seed: bytes | None,
) -> dict[str, Any]:
    """The export's closing checkpoint (a receipt for its last event), checked with ``keys``
    and the seed the export reveals."""
    result: dict[str, Any] = {"ok": None, "kid": None, "version": None, "detail": None}
    if not keys:
        result["detail"] = "no public key given: the export's signature was not checked"
        return result
    if checkpoint is None:
        detail = "the export ends with no signed checkpoint"
        if seed is not None:  # a finished game: the service signed it once, when it finished
            detail = (
                "the game is over but no signature of its end was kept: the service signs a"
                " finished game once, when it finishes, and never again, so its rows were"
                " rewritten (or it finished before signatures were kept and was never signed)"
            )
        result.update(ok=False, detail=detail)
        return result
    try:
        signed = verify(checkpoint, keys)
    except Refused as exc:
        result.update(ok=False, detail=f"the checkpoint is refused: {exc}")
        return result
    last = records[-1]
    result.update(kid=signed["kid"], version=signed["version"])
    if seed is None:
        result["detail"] = "the export reveals no valid seed: the checkpoint cannot be opened"
        return result
    if (signed["game_id"], signed["version"]) != (last["game_id"], last["version"]) or not (
        _commits_to(signed, last, seed)
    ):
        result.update(
            ok=False,
            detail=f"the checkpoint signs version {signed['version']} of game"
            f" {signed['game_id']}, not this export's last event",
        )
        return result
    result.update(ok=True, detail=f"signed by key {signed['kid']}")
    return result


def check_receipts(
    receipts: Iterable[Any],
    records: Sequence[Mapping[str, Any]],
    keys: Mapping[str, Ed25519PublicKey],
    seed: bytes | None,
) -> dict[str, Any]:
    """Each receipt checked against the export: refused (with the reason) if it proves nothing,
    else it agrees with the export or shows that "the service signed a different history".
    ``seed``: the one the export reveals (its commitment checked), None if it reveals none.
    A refused receipt fails the check: evidence forged or altered must not pass as "ok"."""
    game_id = records[0]["game_id"] if records else None
    by_version = {r["version"]: r for r in records}
    refused: list[dict[str, Any]] = []
    agreed: list[int] = []
    contradicted: list[int] = []
    for number, receipt in enumerate(receipts, start=1):
        try:
            signed = verify(receipt, keys)
            if signed["game_id"] != game_id:
                raise Refused(f"it is for game {signed['game_id']}, not {game_id}")
        except Refused as exc:
            refused.append({"receipt": number, "reason": str(exc)})
            continue
        if seed is not None:
            version = signed["version"]
            agrees = _commits_to(signed, by_version.get(version), seed)
            (agreed if agrees else contradicted).append(version)
    result: dict[str, Any] = {
        "ok": None,
        "first_bad_version": None,
        "detail": None,
        "checked": len(agreed) + len(contradicted),
        "refused": refused,
    }
    if seed is None:
        result["detail"] = (
            "the export reveals no valid seed (the game is not over): receipts are checked"
            " against a finished game's export"
        )
        if refused:
            result.update(ok=False, detail=f"{_refused(refused)}; {result['detail']}")
    elif contradicted:
        bad = min(contradicted)
        good = max((v for v in agreed if v < bad), default=0)
        result.update(
            ok=False,
            first_bad_version=bad,
            detail=f"the service signed a different history at version {bad}"
            + (f" (the receipts up to version {good} agree with the export)" if good else "")
            + (f"; {_refused(refused)}" if refused else ""),
        )
    elif refused:
        result.update(
            ok=False, detail=_refused(refused) + (f"; {_agreed(agreed)}" if agreed else "")
        )
    elif agreed:
        result.update(ok=True, detail=_agreed(agreed))
    else:
        result["detail"] = "no receipt could be checked"
    return result


def _agreed(agreed: Sequence[int]) -> str:
    counted = "1 receipt agrees" if len(agreed) == 1 else f"{len(agreed)} receipts agree"
    return f"{counted}, up to version {max(agreed)}"


def _refused(refused: Sequence[Mapping[str, Any]]) -> str:
    """Names the refused receipts (by their place in the list given), the first one's reason."""
    first = refused[0]
    if len(refused) == 1:
        return f"receipt {first['receipt']} is refused: {first['reason']}"
    numbers = ", ".join(str(r["receipt"]) for r in refused)
    return (
        f"receipts {numbers} are refused (see `refused`);"
        f" receipt {first['receipt']}: {first['reason']}"
    )
