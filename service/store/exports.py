"""Reading a game's export (JSON Lines, see domain/audit.py) from a file or from the service, and
what an offline audit checks it with: the service's public keys and the players' receipts."""

from __future__ import annotations

import json
import re
import urllib.request
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import load_pem_public_key

from domain import receipts

TIMEOUT = 30  # seconds
_GAME_URL = re.compile(r"^(https?://.+/games/[^/?#]+)/?(?:export)?/?$")


def export_url(url: str) -> str:
    """``http(s)://host/games/<id>`` (or its ``/export``) -> the export's URL."""
    match = _GAME_URL.match(url)
    if match is None:
        raise ValueError(f"{url} is not a game's URL (http(s)://host/games/<id>)")
    return match.group(1) + "/export"


def is_url(source: str) -> bool:
    return source.startswith(("http://", "https://"))


def read_export(source: str) -> str:
    """The export's text: ``source`` is a file, or a game's URL (fetched with GET .../export).
    Raises OSError (ValueError for a URL that names no game) when it cannot be read."""
    if not is_url(source):
        return Path(source).read_text(encoding="utf-8")
    request = urllib.request.Request(export_url(source), headers={"Accept": "application/x-ndjson"})
    with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
        return response.read().decode("utf-8")


def read_keys(source: str) -> dict[str, Ed25519PublicKey]:
    """Public keys by id from a JWK Set or JWK file (the keys file of service/keys.py too: its
    private members are ignored), a PEM public key, or a URL serving a JWK Set (the service's
    ``/.well-known/cardroom-keys``). Raises OSError or ValueError when they cannot be read."""
    if is_url(source):
        with urllib.request.urlopen(source, timeout=TIMEOUT) as response:
            text = response.read().decode("utf-8")
    else:
        text = Path(source).read_text(encoding="utf-8")
    if text.lstrip().startswith("-----BEGIN"):
        key = load_pem_public_key(text.encode())
        if not isinstance(key, Ed25519PublicKey):
            raise ValueError(f"{source} is not an Ed25519 public key")
        return {receipts.key_id(key): key}
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{source} is neither a JWK Set nor a PEM key: {exc.msg}") from None
    if not isinstance(document, dict):
        raise ValueError(f"{source} is not a JWK Set")
    keys = receipts.public_keys(document)
    if not keys:
        raise ValueError(f"{source} holds no Ed25519 public key")
    return keys


def read_receipts(path: str) -> list[Any]:
    """Receipts from a file: a JSON array, an object with ``receipts`` (as the web page's
    download), or JSON Lines, one receipt per line."""
    text = Path(path).read_text(encoding="utf-8")
    try:
        document = json.loads(text)
    except json.JSONDecodeError:
        try:
            return [json.loads(line) for line in text.splitlines() if line.strip()]
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path} is neither JSON nor JSON Lines: {exc.msg}") from None
    if isinstance(document, dict) and isinstance(document.get("receipts"), list):
        return list(document["receipts"])
    if isinstance(document, list):
        return document
    return [document]
