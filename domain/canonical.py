"""RFC 8785 (JCS) canonical JSON, fast for the values this service hashes and signs.

``rfc8785.dumps`` is pure Python: most of the cost of a pick's hash chain and receipt. For the
values events and receipts hold it gives exactly what the standard library's C encoder gives
with sorted keys, no whitespace and UTF-8 output, so ``dumps`` uses that when it can tell the
two agree, and ``rfc8785`` itself otherwise. They agree when:

- every value is exactly a ``dict`` with ``str`` keys, a ``list`` or ``tuple``, a ``str``, a
  ``bool``, ``None``, or an ``int`` within ±(2**53 - 1) (JCS refuses larger ones); anything
  else (floats, which JCS writes as ECMAScript does; subclasses such as enums; other mappings)
  goes to ``rfc8785``;
- no character of the output is U+D800 or above: JCS sorts keys by their UTF-16 code units,
  ``json`` by code points, and the two orders differ only between a character of
  U+E000..U+FFFF and one above U+FFFF; and a lone surrogate cannot be encoded (JCS refuses it).

Both escape the same characters the same way: ``"`` and ``\\`` with a backslash, ``\\b \\f \\n
\\r \\t`` by name, the other control characters below U+0020 as ``\\u00xx`` (lowercase hex),
nothing else. tests/test_canonical.py checks ``dumps == rfc8785.dumps`` over generated values
and every event of random games.
"""

from __future__ import annotations

import json
import json.encoder
from typing import Any

import rfc8785

_LIMIT = 2**53 - 1
_SCALARS = frozenset({str, bool, type(None)})
_ENCODER = json.JSONEncoder(
    ensure_ascii=False, sort_keys=True, separators=(",", ":"), check_circular=False
)
# Its C encoder, made once: JSONEncoder.encode makes it anew on every call (with a closure for
# floats, which no plain value holds), about 12,000 instructions of a receipt's 41,000
# (callgrind). The same arguments as iterencode gives it, so the same text.
_MAKE_C_ENCODER = getattr(json.encoder, "c_make_encoder", None)  # None without _json
_C_ENCODE = (
    None
    if _MAKE_C_ENCODER is None
    else _MAKE_C_ENCODER(
        None, _ENCODER.default, json.encoder.encode_basestring, None, ":", ",", True, False, True
    )
)


def _encode(value: Any) -> str:
    if _C_ENCODE is None or isinstance(value, str):  # encode() escapes a string by itself
        return _ENCODER.encode(value)
    return "".join(_C_ENCODE(value, 0))


def dumps(value: Any) -> bytes:
    """The RFC 8785 canonical bytes of ``value``: identical to ``rfc8785.dumps(value)``, which
    it also raises the errors of."""
    if _plain(value):
        text = _encode(value)
        if text.isascii() or max(text) < "\ud800":
            return text.encode()
    return rfc8785.dumps(value)


def _plain(value: Any) -> bool:
    """Whether ``value`` holds only the types on which ``json`` and JCS agree."""
    kind = type(value)
    if kind in _SCALARS:
        return True
    if kind is int:
        return bool(-_LIMIT <= value <= _LIMIT)
    # Loops, not all() over a generator: this runs on every value of every event appended.
    if kind is dict:
        for key, item in value.items():  # noqa: SIM110
            if type(key) is not str or not _plain(item):
                return False
        return True
    if kind is list or kind is tuple:
        for item in value:  # noqa: SIM110
            if not _plain(item):
                return False
        return True
    return False
