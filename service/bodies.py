"""The marshmallow building blocks of every body, shared by the HTTP layer and each game's own
schemas (service/games/<game>/schemas.py): strict loading, strict booleans, plain text."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from marshmallow import RAISE, Schema, ValidationError, fields, validate

# Text the service stores or filters by: no control characters (C0, DEL, C1; a NUL cannot even
# be stored in PostgreSQL text, and escapes would reach terminals through `cardroom replay`) and
# no lone surrogates (not encodable as UTF-8). openapi.yaml says the same with a `pattern`.
_NOT_TEXT = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


# plain_text as the contract says it (JSON Schema patterns cannot name lone surrogates)
PLAIN_TEXT_PATTERN = "^[^\\x00-\\x1F\\x7F-\\x9F]*$"


def plain_text(value: str) -> None:
    if _NOT_TEXT.search(value):
        raise ValidationError("must not contain control characters or lone surrogates")


# A list, not validate.And: apispec reads the Length into the contract.
NAME: list[Callable[[Any], Any]] = [validate.Length(min=1, max=40), plain_text]
TURN_SECONDS = (5, 3600)  # the turn clock's bounds: tests inject "now" rather than wait


class Strict(Schema):
    class Meta:
        unknown = RAISE


class StrictBoolean(fields.Boolean):
    """JSON true or false only: not "true", 1 or "yes"."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> bool:
        if not isinstance(value, bool):
            raise self.make_error("invalid", input=value)
        return value
