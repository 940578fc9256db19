"""The service's keys, kept outside the database: Ed25519 to sign receipts, AES-256-GCM for seeds.

The keys are a JWK Set with their private members (RFC 7517/8037): ``{"keys": [...]}`` where a
signing key is ``{"kty": "OKP", "crv": "Ed25519", "x", "d", "kid", "use": "sig"}`` and a seed key
``{"kty": "oct", "k", "kid", "use": "enc", "alg": "A256GCM"}``. They come from
``CARDROOM_KEYS`` (the document itself, e.g. from a secret store) or else from the file
``CARDROOM_KEYS_FILE`` (default ``./data/keys/keys.json``). Nothing here creates them on the
way: ``cardroom keys init`` does, or the first start against a brand-new database
(service/key_registry.py, which also checks them against the key ids the database has used).

Rotation: ``cardroom keys rotate`` appends a new pair; the last key of each use is the active
one (it signs, it seals new seeds), the others keep verifying old receipts and opening old seeds.
Retirement (``cardroom keys retire KID``): a signing key keeps only its public part (it stays
published), a seed key goes (allowed once no game sealed under it is still in play).
Errors never quote the document: it is secret.
"""

from __future__ import annotations

import hmac
import json
import os
import secrets
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from uuid import UUID

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat

from domain import receipts
from domain.receipts import b64url, unb64url

ENV_KEYS = "CARDROOM_KEYS"
ENV_FILE = "CARDROOM_KEYS_FILE"
DEFAULT_FILE = Path("data") / "keys" / "keys.json"
_CLIENT_CONTEXT = b"cardroom-client-v1\0"
_CHECK_CONTEXT = b"cardroom-key-check-v1\0"
_SEED_CONTEXT = b"cardroom-seed-v1\0"  # authenticated with the game's id: a sealed seed is
# bound to its game's row and cannot be moved to another


class KeysError(Exception):
    """The keys cannot be read or do not form a usable set."""


class KeyUnknown(KeysError):
    """A seed is sealed under seed key ``kid``, which this process's keys lack (another host
    rotated and this one was not handed the new keys): an operator's matter, answered 503."""

    def __init__(self, game_id: UUID, kid: str) -> None:
        super().__init__(f"the seed of game {game_id} is sealed under unknown key {kid!r}")
        self.kid = kid


def check_value(key: bytes) -> str:
    """A seed key's fingerprint: HMAC-SHA256 of a fixed label under the key (a key check value).
    It tells whether two hosts hold the same 256-bit key and reveals nothing of it."""
    return b64url(hmac.digest(key, _CHECK_CONTEXT, "sha256"))


@dataclass
class Keyring:
    signing: dict[str, Ed25519PrivateKey] = field(default_factory=dict)
    public: dict[str, Ed25519PublicKey] = field(default_factory=dict)
    seed_keys: dict[str, bytes] = field(default_factory=dict)
    active_signing: str = ""
    active_seed: str = ""
    # The signing keys' thumbprints (receipts' ``kid``), computed once: every receipt names one.
    _thumbprints: dict[str, str] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_jwks(cls, document: Any) -> Keyring:
        ring = cls()
        for jwk in document.get("keys", []) if isinstance(document, dict) else []:
            ring._add(jwk)
        if not ring.active_signing or not ring.active_seed:
            raise KeysError(
                "the keys need an Ed25519 signing key (with 'd') and an AES-256 seed key"
            )
        return ring

    def _add(self, jwk: dict[str, Any]) -> None:
        kid = str(jwk.get("kid", ""))
        try:
            if jwk.get("kty") == "OKP" and jwk.get("crv") == "Ed25519":
                public = Ed25519PublicKey.from_public_bytes(unb64url(jwk["x"]))
                kid = kid or receipts.key_id(public)
                self.public[kid] = public
                if "d" in jwk:
                    self.signing[kid] = Ed25519PrivateKey.from_private_bytes(unb64url(jwk["d"]))
                    self.active_signing = kid
            elif jwk.get("kty") == "oct" and jwk.get("use") == "enc":
                key = unb64url(jwk["k"])
                if len(key) != 32 or not kid:
                    raise ValueError("a seed key is 32 bytes and has a kid")
                self.seed_keys[kid] = key
                self.active_seed = kid
        except (KeyError, ValueError) as exc:
            raise KeysError(f"key {kid!r}: {exc}") from None

    def jwks(self) -> dict[str, Any]:
        """The public keys, as served at /.well-known/cardroom-keys (active key last)."""
        return {"keys": [receipts.public_jwk(key) for key in self.public.values()]}

    def thumbprint(self, kid: str) -> str:
        """The RFC 7638 thumbprint of signing key ``kid``: the id receipts and the database use."""
        known = self._thumbprints.get(kid)
        if known is None:
            known = self._thumbprints[kid] = receipts.key_id(self.public[kid])
        return known

    def signing_ids(self) -> set[str]:
        """The thumbprints of the signing keys whose secret this ring holds."""
        return {self.thumbprint(kid) for kid in self.signing}

    def ids(self) -> dict[str, str]:
        """Every key id this ring can use, with its fingerprint (never a secret): a signing
        key's thumbprint, a seed key's check value. Public-only signing keys are left out: the
        database publishes those itself."""
        held = {self.thumbprint(kid): self.thumbprint(kid) for kid in self.signing}
        held.update((kid, check_value(key)) for kid, key in self.seed_keys.items())
        return held

    def records(self) -> list[tuple[str, str, dict[str, str] | None, str]]:
        """``(kid, use, public JWK or None, fingerprint)`` of each key, as ``key_ids`` has it."""
        rows: list[tuple[str, str, dict[str, str] | None, str]] = []
        for kid in self.signing:
            jwk = receipts.public_jwk(self.public[kid])
            rows.append((jwk["kid"], "sig", jwk, jwk["kid"]))
        rows += [(kid, "enc", None, check_value(key)) for kid, key in self.seed_keys.items()]
        return rows

    def receipt(self, game_id: UUID, version: int, digest: str, seed: bytes) -> dict[str, Any]:
        """A receipt for event ``version`` (hash ``digest``) of a game whose seed is ``seed``."""
        key = self.signing[self.active_signing]
        kid = self.thumbprint(self.active_signing)
        return receipts.sign(key, str(game_id), version, digest, seed, kid)

    def seal_seed(self, game_id: UUID, seed: bytes) -> tuple[bytes, str]:
        """``nonce + AES-GCM(seed)`` under the active seed key, and that key's id."""
        nonce = os.urandom(12)
        sealed = AESGCM(self.seed_keys[self.active_seed]).encrypt(
            nonce, seed, _SEED_CONTEXT + game_id.bytes
        )
        return nonce + sealed, self.active_seed

    def client_hash(self, address: str) -> bytes:
        """Who took a seat, as the database keeps it: HMAC-SHA256 of the client's address under
        the active seed key (an address is personal data; a plain hash of an IPv4 address is
        reversed by trying them all). Rotating the seed key starts the counts afresh."""
        key = self.seed_keys[self.active_seed]
        return hmac.digest(key, _CLIENT_CONTEXT + address.encode(), "sha256")

    def open_seed(self, game_id: UUID, stored: bytes, key_id: str | None) -> bytes:
        if key_id is None:
            return stored  # written before seeds were sealed (migration 0008)
        key = self.seed_keys.get(key_id)
        if key is None:
            raise KeyUnknown(game_id, key_id)
        return AESGCM(key).decrypt(stored[:12], stored[12:], _SEED_CONTEXT + game_id.bytes)


# --- the document ---------------------------------------------------------------------------------


class KeysMissing(KeysError):
    """There is no keys document where this process looked (nothing was created)."""


def new_pair() -> list[dict[str, Any]]:
    """A fresh signing key and seed key, as private JWKs."""
    signing = Ed25519PrivateKey.generate()
    d = signing.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
    seed_key = {
        "kty": "oct",
        "kid": "seed-" + secrets.token_hex(6),
        "k": b64url(secrets.token_bytes(32)),
        "use": "enc",
        "alg": "A256GCM",
    }
    return [{**receipts.public_jwk(signing.public_key()), "d": b64url(d)}, seed_key]


def keys_file() -> Path:
    return Path(os.environ.get(ENV_FILE) or DEFAULT_FILE).expanduser().resolve()


def source() -> str:
    """Where this process reads its keys, as a log line or an error names it."""
    if os.environ.get(ENV_KEYS):
        return ENV_KEYS
    named = ENV_FILE if os.environ.get(ENV_FILE) else f"default path; set {ENV_FILE}"
    return f"{keys_file()} ({named})"


def _write_new(path: Path, document: dict[str, Any]) -> bool:
    """Write ``path`` (mode 0600) unless it exists: a concurrent first start keeps one set.
    True if this call wrote it."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".keys-")
    try:
        with os.fdopen(fd, "w") as out:
            json.dump(document, out, indent=2)
        os.link(temporary, path)  # atomic, and fails if another process wrote it first
        return True
    except FileExistsError:
        return False
    finally:
        os.unlink(temporary)


def init() -> Path:
    """Create the keys file with a fresh pair; refuse if it exists (it may hold keys in use)."""
    if os.environ.get(ENV_KEYS):
        raise KeysError(f"the keys come from {ENV_KEYS}: there is no file to create")
    path = keys_file()
    if not _write_new(path, {"keys": new_pair()}):
        raise KeysError(f"{path} exists already: keys in use are never replaced (see `rotate`)")
    return path


def read_document() -> dict[str, Any]:
    """The keys' JWK Set: from ``CARDROOM_KEYS``, else the keys file. Never created here: keys
    are made by ``cardroom keys init`` or at the first start on a new database (key_registry)."""
    text = os.environ.get(ENV_KEYS)
    where = ENV_KEYS
    if not text:
        path = keys_file()
        where = str(path)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise KeysMissing(f"no keys at {source()}") from None
        except OSError as exc:
            raise KeysError(f"cannot read the keys in {path}: {exc.strerror}") from None
    try:
        document = json.loads(text)
    except ValueError as exc:  # the message names a position, never the text (it is secret)
        raise KeysError(f"the keys in {where} are not JSON ({type(exc).__name__})") from None
    if not isinstance(document, dict) or not isinstance(document.get("keys"), list):
        raise KeysError(f'the keys in {where} are not a JWK Set ({{"keys": [...]}})')
    return document


def read() -> Keyring:
    """The keyring as its source holds it now (not this process's: see ``load``)."""
    document = read_document()
    try:
        return Keyring.from_jwks(document)
    except KeysError as exc:
        raise KeysError(f"the keys in {source()}: {exc}") from None


def _write(path: Path, document: dict[str, Any]) -> None:
    temporary = path.with_name(f".{path.name}.new")
    temporary.write_text(json.dumps(document, indent=2), encoding="utf-8")
    temporary.chmod(0o600)
    temporary.replace(path)


def rotate() -> Path:
    """Append a new active pair to the keys file; the old keys stay valid."""
    if os.environ.get(ENV_KEYS):
        raise KeysError(f"the keys come from {ENV_KEYS}: rotate them where that value is kept")
    path = keys_file()
    document = read_document()
    document["keys"] = [*document["keys"], *new_pair()]
    _write(path, document)
    return path


def drop_secret(kid: str) -> Path:
    """Retire ``kid`` in the keys file: a signing key keeps its public half only (it stays
    published), a seed key goes. The active key of its use cannot be retired."""
    if os.environ.get(ENV_KEYS):
        raise KeysError(f"the keys come from {ENV_KEYS}: drop the key where that value is kept")
    path = keys_file()
    document = read_document()
    ring = Keyring.from_jwks(document)
    if kid in (ring.active_signing, ring.active_seed, ring.thumbprint(ring.active_signing)):
        raise KeysError(f"{kid} is the active key: `cardroom keys rotate` first")
    kept = []
    for jwk in document["keys"]:
        named = {str(jwk.get("kid", ""))}
        if jwk.get("kty") == "OKP" and "x" in jwk:
            named.add(receipts.key_id(Ed25519PublicKey.from_public_bytes(unb64url(jwk["x"]))))
        if kid not in named:
            kept.append(jwk)
        elif jwk.get("use") != "enc":
            kept.append({name: value for name, value in jwk.items() if name != "d"})
    document["keys"] = kept
    _write(path, document)
    return path


_loaded: Keyring | None = None
_guard = threading.Lock()


def load() -> Keyring:
    """This process's keyring, read once (the workers inherit the one `cardroom serve` checked
    against the database); ``KeysMissing`` if there are none: nothing is created here."""
    global _loaded
    with _guard:
        if _loaded is None:
            _loaded = read()
        return _loaded


def adopt(ring: Keyring) -> None:
    """Make ``ring`` this process's keyring (a reload found keys the database knows)."""
    global _loaded
    with _guard:
        _loaded = ring


_reread_at = -1.0


def reread(kid: str | None) -> Keyring | None:
    """The keys' source read again, if it holds seed key ``kid`` (then it is this process's
    keyring); None otherwise. At most once a second: a missing key costs no read per request."""
    global _reread_at
    now = time.monotonic()
    if kid is None or now - _reread_at < 1.0:
        return None
    _reread_at = now
    try:
        ring = read()
    except KeysError:
        return None
    if kid not in ring.seed_keys:
        return None
    adopt(ring)
    return ring
