"""The service's keys, kept outside the database: Ed25519 to sign receipts, AES-256-GCM for seeds.

The keys are a JWK Set with their private members (RFC 7517/8037): ``{"keys": [...]}`` where a
signing key is ``{"kty": "OKP", "crv": "Ed25519", "x", "d", "kid", "use": "sig"}`` and a seed key
``{"kty": "oct", "k", "kid", "use": "enc", "alg": "A256GCM"}``. They come from
``CARDROOM_KEYS`` (the document itself, e.g. from a secret store) or else from the file
``CARDROOM_KEYS_FILE`` (default ``./data/keys/keys.json``), created with a fresh pair on first
use.

Rotation: ``cardroom keys --rotate`` appends a new pair; the last key of each use is the active
one (it signs, it seals new seeds), the others keep verifying old receipts and opening old seeds.
A signing key retired for good keeps only its public part (drop ``d``): it is still published.
A seed key may go once no game sealed under it is still in play (seeds are revealed at the end).
"""

from __future__ import annotations

import hmac
import json
import os
import secrets
import tempfile
import threading
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
_SEED_CONTEXT = b"cardroom-seed-v1\0"  # authenticated with the game's id: a sealed seed is
# bound to its game's row and cannot be moved to another


class KeysError(Exception):
    """The keys cannot be read or do not form a usable set."""


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

    def receipt(self, game_id: UUID, version: int, digest: str, seed: bytes) -> dict[str, Any]:
        """A receipt for event ``version`` (hash ``digest``) of a game whose seed is ``seed``."""
        key = self.signing[self.active_signing]
        kid = self._thumbprints.get(self.active_signing)
        if kid is None:
            kid = self._thumbprints[self.active_signing] = receipts.key_id(key.public_key())
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
            raise KeysError(f"the seed of game {game_id} is sealed under unknown key {key_id!r}")
        return AESGCM(key).decrypt(stored[:12], stored[12:], _SEED_CONTEXT + game_id.bytes)


# --- the document ---------------------------------------------------------------------------------


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


def _write_new(path: Path, document: dict[str, Any]) -> None:
    """Write ``path`` (mode 0600) unless it exists: a concurrent first start keeps one set."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".keys-")
    try:
        with os.fdopen(fd, "w") as out:
            json.dump(document, out, indent=2)
        os.link(temporary, path)  # atomic, and fails if another process wrote it first
    except FileExistsError:
        pass
    finally:
        os.unlink(temporary)


def read_document(create: bool = True) -> dict[str, Any]:
    """The keys' JWK Set: from ``CARDROOM_KEYS``, else the keys file (created if missing)."""
    text = os.environ.get(ENV_KEYS)
    source = ENV_KEYS
    if not text:
        path = keys_file()
        if not path.exists() and create:
            _write_new(path, {"keys": new_pair()})
        source = str(path)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise KeysError(f"cannot read the keys in {path}: {exc}") from None
    try:
        return dict(json.loads(text))
    except (ValueError, TypeError) as exc:
        raise KeysError(f"the keys in {source} are not a JSON object: {exc}") from None


def rotate() -> Path:
    """Append a new active pair to the keys file; the old keys stay valid."""
    if os.environ.get(ENV_KEYS):
        raise KeysError(f"the keys come from {ENV_KEYS}: rotate them where that value is kept")
    path = keys_file()
    document = read_document()
    document["keys"] = [*document.get("keys", []), *new_pair()]
    temporary = path.with_name(f".{path.name}.new")
    temporary.write_text(json.dumps(document, indent=2), encoding="utf-8")
    temporary.chmod(0o600)
    temporary.replace(path)
    return path


_loaded: Keyring | None = None
_guard = threading.Lock()


def load() -> Keyring:
    """This process's keyring, read once (a rotation takes effect at the next start)."""
    global _loaded
    with _guard:
        if _loaded is None:
            _loaded = Keyring.from_jwks(read_document())
        return _loaded
