"""Tamper evidence: every event carries a hash of its predecessor's hash and its own content.

    hash(v) = SHA-256( bytes.fromhex(hash(v - 1)) + JCS(content(v)) ), hex-encoded

where ``content(v)`` is the JSON object ``{"game_id", "version", "type", "schema_version",
"data"}`` of event ``v`` as recorded, ``JCS`` is RFC 8785 JSON canonicalisation (the ``rfc8785``
package's bytes, computed faster by domain/canonical.py), and the predecessor of version 1 is
``GENESIS``, 64 zeros. Changing, removing, inserting or reordering any event changes the hash of
every event after it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

from domain import canonical

GENESIS = "0" * 64


def content(game_id: str, version: int, type: str, schema_version: int, data: Any) -> bytes:
    """The canonical bytes of one event as recorded (RFC 8785)."""
    record = {
        "game_id": str(game_id),
        "version": version,
        "type": type,
        "schema_version": schema_version,
        "data": data,
    }
    return canonical.dumps(record)


def event_hash(
    previous: str, game_id: str, version: int, type: str, schema_version: int, data: Any
) -> str:
    digest = hashlib.sha256(bytes.fromhex(previous))
    digest.update(content(game_id, version, type, schema_version, data))
    return digest.hexdigest()


def first_break(records: Iterable[Mapping[str, Any]]) -> int | None:
    """The first version whose recorded ``hash`` does not follow from the ones before it (or
    whose ``version`` is not the next one), None when the whole chain holds. ``records`` are
    export lines: ``game_id``, ``version``, ``type``, ``schema_version``, ``data``, ``hash``."""
    previous, expected = GENESIS, 1
    for record in records:
        version: int = record["version"]
        if version != expected:
            return expected if version > expected else version
        computed = event_hash(
            previous,
            record["game_id"],
            version,
            record["type"],
            record["schema_version"],
            record["data"],
        )
        if computed != record.get("hash"):
            return version
        previous, expected = computed, version + 1
    return None
