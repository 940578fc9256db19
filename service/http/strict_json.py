"""Request bodies read as strict JSON (I-JSON, RFC 7493), whatever route reads them.

- **Duplicate keys** are refused (400 ``malformed_json`` naming the key): RFC 8259 leaves their
  meaning open, and the standard library would silently keep the last one, so that a proxy or a
  client library that keeps the first one would see another request than the service did.
- **Lone surrogates** (``"\\ud800"``, or a surrogate's UTF-8-like bytes, which the standard
  library decodes with ``surrogatepass``) are not Unicode text: no string field can hold one
  (400 ``invalid_request``, ``errors`` naming the field). Left in, they fail later, wherever the
  text is encoded (hashing an invitation gave a 500).
- **Integers written with a fraction or an exponent** (``2.0``, ``1e3``) are integers: JSON
  Schema's ``integer`` counts every number with a zero fractional part, so the contract allows
  them; the service reads them as the integers they are. ``2.5`` stays a float (refused by every
  integer field), ``1e400`` stays infinite, and ``NaN``/``Infinity`` are read as before (and
  refused by every field's schema). No field of any request body is a JSON ``number``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from service.http.problems import Problem

# A surrogate can only come from a \u escape, or from bytes decoded with surrogatepass.
_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]|[\ud800-\udfff]")


def _number(text: str) -> float | int:
    value = float(text)
    return int(value) if value.is_integer() else value  # inf and nan are not integers


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    body = dict(pairs)
    if len(body) != len(pairs):
        key, seen = "", set()
        for key, _ in pairs:
            if key in seen:
                break
            seen.add(key)
        shown = json.dumps(key)  # ASCII: a key with a lone surrogate is shown escaped
        raise Problem(
            400,
            "malformed_json",
            f"the key {shown} appears more than once in one object; send each key once",
            errors={"duplicate_key": key.encode("utf-8", "backslashreplace").decode()},
        )
    return body


def loads(data: str | bytes) -> Any:
    """``data`` parsed as strict JSON; raises :class:`Problem` for what the module refuses and
    ``ValueError`` (as ``json.loads``) for what is not JSON at all."""
    if isinstance(data, bytes):  # as json.loads decodes bytes
        data = data.decode(json.detect_encoding(data), "surrogatepass")
    value = json.loads(data, object_pairs_hook=_object, parse_float=_number)
    if _SURROGATE.search(data):  # rare: only then walk the whole body
        path = _lone_surrogate(value, [])
        if path is not None:
            raise Problem(
                400,
                "invalid_request",
                f"{_pointer(path)} is not Unicode text: it holds a lone surrogate (a \\uD800 to"
                " \\uDFFF escape not paired as UTF-16); send text, escaped as UTF-16 pairs"
                " or sent as UTF-8",
                errors=_nested(path, ["not valid Unicode text (a lone surrogate)"]),
            )
    return value


def _lone_surrogate(value: Any, path: list[str]) -> list[str] | None:
    """The path of the first string (or key) in ``value`` that is not Unicode text."""
    if isinstance(value, str):
        return None if _is_text(value) else path
    if isinstance(value, dict):
        for key, item in value.items():
            if not _is_text(key):
                return [*path, key.encode("utf-8", "backslashreplace").decode()]
            found = _lone_surrogate(item, [*path, key])
            if found is not None:
                return found
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = _lone_surrogate(item, [*path, str(index)])
            if found is not None:
                return found
    return None


def _is_text(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _pointer(path: list[str]) -> str:
    return "the body" if not path else "field " + ".".join(path)


def _nested(path: list[str], messages: list[str]) -> dict[str, Any]:
    """``errors`` as marshmallow nests them: ``{"bots": {"0": {"name": [...]}}}``."""
    if not path:
        return {"_schema": messages}
    errors: Any = messages
    for part in reversed(path):
        errors = {part: errors}
    return dict(errors)
