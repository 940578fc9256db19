"""Audit an exported game offline, as ``cardroom audit`` does (issue 38, item 4): its hash chain,
the seed against its commitment (S18), the deals and scores replayed, the points traced, the
signed checkpoint and the receipts players kept, without a server and without the service.

The checks are the game rules' own (``domain.audit``, the repository's ``domain/`` package, the
rules package): this module reads the inputs as the command line reads them and hands them
over, so that there is one audit, and its verdict here is the command's. Without the rules
installed it raises ``RulesNotInstalled``."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import load_pem_public_key

from .errors import RulesNotInstalled

Source = str | bytes | os.PathLike[str]
INSTALL = (
    "audit_export needs the game rules, cardroom-rules: from a checkout, `pip install ./domain`"
    " (or `pip install ./domain './clients/python[env]'`)"
)


def audit_export(
    export: Source,
    keys: Any = None,
    receipts: Sequence[Any] | Source = (),
) -> dict[str, Any]:
    """The audit report of an export (``cardroom audit --json``'s, without ``file``).

    ``export``: the export's path, or its JSON Lines text (``GET /games/{id}/export``).
    ``keys``: the service's public keys: a JWK Set (``GET /.well-known/cardroom-keys`` as
    JSON), a path to one or to a PEM public key, or keys by id; with
    them the signed checkpoint and the ``receipts`` are checked. ``receipts``: a list of them
    (``client.receipts(game)``), or a path (a JSON array, ``{"receipts": [...]}`` as the web
    page downloads them, or JSON Lines). The report's ``ok`` is true only for a complete
    export that passes every check, and false over any refused receipt."""
    try:
        from domain import audit as rules
    except ImportError as exc:
        raise RulesNotInstalled(INSTALL) from exc
    text = _text(export)
    found = _keys(keys) if keys is not None else None
    kept = _receipts(receipts)
    report: dict[str, Any] = rules.audit_export(text, found, kept)
    return report


def _is_path(source: Source) -> bool:
    if isinstance(source, os.PathLike):
        return True
    if isinstance(source, bytes):
        return False
    return "\n" not in source and not source.lstrip().startswith(("{", "[")) and bool(source)


def _text(source: Source) -> str:
    if isinstance(source, bytes):
        return source.decode("utf-8")
    if _is_path(source):
        return Path(source).read_text(encoding="utf-8")
    return str(source)


def _keys(keys: Any) -> dict[str, Ed25519PublicKey]:
    """Public keys by id, as ``cardroom audit --keys`` reads them."""
    from domain.receipts import key_id, public_keys

    if (
        isinstance(keys, Mapping)
        and keys
        and all(isinstance(k, Ed25519PublicKey) for k in keys.values())
    ):
        return dict(keys)
    if isinstance(keys, Mapping):
        return public_keys(keys)
    text = _text(keys)
    if text.lstrip().startswith("-----BEGIN"):
        key = load_pem_public_key(text.encode())
        if not isinstance(key, Ed25519PublicKey):
            raise ValueError("not an Ed25519 public key")
        return {key_id(key): key}
    document = json.loads(text)
    if not isinstance(document, dict):
        raise ValueError("not a JWK Set")
    return public_keys(document)


def _receipts(receipts: Sequence[Any] | Source) -> list[Any]:
    """Receipts as ``cardroom audit --receipts`` reads a file, or the list given."""
    if not isinstance(receipts, str | bytes | os.PathLike):
        return list(receipts)
    text = _text(receipts)
    try:
        document = json.loads(text)
    except json.JSONDecodeError:
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    if isinstance(document, dict) and isinstance(document.get("receipts"), list):
        return list(document["receipts"])
    return document if isinstance(document, list) else [document]
