"""Marshmallow schemas for the bodies every game shares. Unknown fields are refused (RAISE).

Responses are dumped through schemas too: a field that is not declared here is never sent, so a
view cannot leak what its schema does not name.
"""

from __future__ import annotations

import re
from typing import Any

from marshmallow import RAISE, Schema, ValidationError, fields, post_load, validate

from domain.decider import BotSeat

# Text the service stores or filters by: no control characters (C0, DEL, C1; a NUL cannot even
# be stored in PostgreSQL text, and escapes would reach terminals through `cardroom replay`) and
# no lone surrogates (not encodable as UTF-8). openapi.yaml says the same with a `pattern`.
_NOT_TEXT = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def plain_text(value: str) -> None:
    if _NOT_TEXT.search(value):
        raise ValidationError("must not contain control characters or lone surrogates")


NAME = validate.And(validate.Length(min=1, max=40), plain_text)
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


# --- requests -----------------------------------------------------------------------------------


class CreateGameRequest(Strict):
    game = fields.String(
        required=True, validate=NAME, metadata={"description": "which game, e.g. sushi-go"}
    )
    players = fields.Integer(strict=True, required=True, validate=validate.Range(min=1, max=12))
    rules = fields.Dict(keys=fields.String(), load_default=dict)
    bots = fields.List(
        fields.Nested(lambda: BotRequest()), load_default=list, validate=validate.Length(max=12)
    )
    turn_seconds = fields.Integer(strict=True, validate=validate.Range(*TURN_SECONDS))


class BotRequest(Strict):
    """A seat for one of the game's bots; the game checks the seat and the kind (422)."""

    seat = fields.Integer(strict=True, required=True, validate=validate.Range(min=0, max=11))
    kind = fields.String(required=True, validate=validate.Length(min=1, max=40))
    name = fields.String(validate=NAME)

    @post_load
    def _to_bot(self, data: dict[str, Any], **_: Any) -> BotSeat:
        name = data.get("name") or f"{data['kind']} bot {data['seat']}"
        return BotSeat(data["seat"], data["kind"], name[:40])


class JoinRequest(Strict):
    name = fields.String(required=True, validate=NAME)


class ListGamesQuery(Strict):
    status = fields.String(validate=validate.OneOf(["waiting", "playing", "over"]))
    game = fields.String(validate=validate.And(validate.Length(max=40), plain_text))
    limit = fields.Integer(load_default=20, validate=validate.Range(min=1, max=100))
    after = fields.String(validate=validate.Length(max=200))
    order = fields.String(load_default="oldest", validate=validate.OneOf(["oldest", "newest"]))
    ids = fields.String(
        validate=validate.Regexp(
            r"^[0-9a-fA-F-]{36}(,[0-9a-fA-F-]{36}){0,99}$",
            error="give up to 100 game ids (UUIDs), separated by commas",
        ),
        metadata={"description": "Only these games: up to 100 ids, comma-separated."},
    )


class EventsQuery(Strict):
    after = fields.Integer(load_default=0, validate=validate.Range(min=0, max=2**31 - 1))
    limit = fields.Integer(load_default=100, validate=validate.Range(min=1, max=500))


# --- responses ----------------------------------------------------------------------------------


class SeatSummary(Schema):
    seat = fields.Integer(required=True, metadata={"description": "The seat's number, from 0."})
    name = fields.String(
        allow_none=True, required=True, metadata={"description": "Who sits there; null if free."}
    )
    bot = fields.String(
        allow_none=True,
        required=True,
        metadata={"description": "The kind of bot playing the seat (random, greedy), or null."},
    )


class GameSummary(Schema):
    id = fields.UUID(required=True)
    game = fields.String(required=True)
    status = fields.String(required=True)
    version = fields.Integer(required=True)
    created_at = fields.AwareDateTime(required=True)
    url = fields.String(required=True)
    seats = fields.List(
        fields.Nested(SeatSummary),
        required=True,
        metadata={"description": "Every seat, in order: who sits there, or null while free."},
    )
    free_seats = fields.Integer(
        required=True,
        metadata={
            "description": "How many seats a person can still join (seats kept for a bot are not)."
        },
    )
    waiting_for = fields.List(
        fields.Integer(),
        required=True,
        metadata={
            "description": "The seats whose move the game waits for (empty unless playing): "
            "every seat yet to pick in Sushi Go!, the seat to move in Sequence."
        },
    )


class GameList(Schema):
    games = fields.List(fields.Nested(GameSummary), required=True)
    next = fields.String(allow_none=True, required=True)


class SeatGranted(Schema):
    game_id = fields.UUID(required=True)
    seat = fields.Integer(required=True)
    name = fields.String(required=True)
    token = fields.String(required=True)
    token_type = fields.String(required=True)
    started = fields.Boolean(required=True)


class EventRecord(Schema):
    version = fields.Integer(required=True)
    type = fields.String(required=True)
    schema_version = fields.Integer(required=True)
    data = fields.Dict(keys=fields.String(), required=True)
    recorded_at = fields.AwareDateTime(required=True)


class ExportLine(EventRecord):
    """One line of GET /games/{id}/export: an event as recorded, with its link of the hash
    chain (null until the game is over: a hash would let anyone test guesses of hidden cards)."""

    game_id = fields.UUID(required=True)
    hash = fields.String(allow_none=True, required=True)


class AuditReport(Schema):
    """domain/audit.py's report; its sections are described in openapi.yaml (AuditReport)."""

    game_id = fields.String(allow_none=True)
    game = fields.String(allow_none=True)
    events = fields.Integer()
    seats = fields.List(fields.String(allow_none=True), allow_none=True)
    ok = fields.Boolean(required=True)
    complete = fields.Boolean()
    redacted = fields.List(fields.Integer())  # versions of redacted events
    reason = fields.String(allow_none=True)
    error = fields.String(allow_none=True)
    points = fields.Dict(keys=fields.String())
    recorded_totals = fields.List(fields.Integer(), allow_none=True)
    recorded_winners = fields.List(fields.Integer(), allow_none=True)
    chain = fields.Dict(keys=fields.String())
    seed = fields.Dict(keys=fields.String())
    deals = fields.Dict(keys=fields.String())
    scores = fields.Dict(keys=fields.String())
    replay = fields.Dict(keys=fields.String())
    totals = fields.List(fields.Integer(), allow_none=True)
    winners = fields.List(fields.Integer(), allow_none=True)
    provenance = fields.List(fields.Dict(keys=fields.String()), allow_none=True)


class Ruling(Schema):
    code = fields.String(required=True, metadata={"description": "The rule's code, e.g. S8."})
    text = fields.String(required=True, metadata={"description": "The ruling, as plain text."})


class Rulings(Schema):
    game = fields.String(required=True, metadata={"description": "The game, e.g. sushi-go."})
    rulings = fields.List(
        fields.Nested(Ruling),
        required=True,
        metadata={"description": "Every numbered ruling, in order."},
    )
    markdown = fields.String(
        required=True, metadata={"description": "The whole rulings page (tables, notes), Markdown."}
    )


class StateQuery(Strict):
    version = fields.Integer(validate=validate.Range(min=1, max=2**31 - 1))


LONG_POLL_MAX_SECONDS = 30.0  # a long poll holds a server thread: keep it short


class GameQuery(Strict):
    """GET /games/{id}: a long poll with ``wait_after`` (a version) and ``wait_seconds``
    (ignored without ``wait_after``: generated clients send it whenever they can)."""

    wait_after = fields.Integer(validate=validate.Range(min=0, max=2**31 - 1))
    wait_seconds = fields.Float(validate=validate.Range(min=0, max=LONG_POLL_MAX_SECONDS))


class StreamQuery(Strict):
    after = fields.Integer(load_default=0, validate=validate.Range(min=0, max=2**31 - 1))


class EventPage(Schema):
    game_id = fields.UUID(required=True)
    version = fields.Integer(required=True)
    events = fields.List(fields.Nested(EventRecord), required=True)
    next_after = fields.Integer(allow_none=True, required=True)


class Health(Schema):
    status = fields.String(required=True)
    database = fields.String(required=True)
