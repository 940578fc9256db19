"""Marshmallow schemas for the bodies every game shares. Unknown fields are refused (RAISE).

Responses are dumped through schemas too: a field that is not declared here is never sent, so a
view cannot leak what its schema does not name.
"""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, fields, post_load, validate

from domain.decider import BotSeat
from service.bodies import (
    GAME_KIND,
    NAME,
    NAME_DESCRIPTION,
    PLAIN_TEXT_PATTERN,
    RECEIPT_DESCRIPTION,
    TURN_SECONDS,
    VISIBILITIES,
    VISIBILITY,
    Invitation,
    Receipt,
    Strict,
    plain_text,
)

# --- requests -----------------------------------------------------------------------------------


class CreateGameRequest(Strict):
    game = fields.String(
        required=True, validate=GAME_KIND, metadata={"description": "which game, e.g. sushi-go"}
    )
    players = fields.Integer(
        strict=True,
        required=True,
        validate=validate.Range(min=1, max=12),
        metadata={
            "description": (
                "The number of players. The schema takes 1–12; the game's rules narrow it\n"
                "(Sushi Go!: gamewright 2–5, zoch 3–5; Sequence: 2, 3, 4, 6, 8, 9, 10 or 12, Q4;\n"
                "else `422 invalid_rules`)."
            )
        },
    )
    rules = fields.Dict(
        keys=fields.String(),
        load_default=dict,
        metadata={"description": "The rules of the game named by `game`, in its own schema."},
    )
    bots = fields.List(
        fields.Nested(lambda: BotRequest()),
        load_default=list,
        validate=validate.Length(max=12),
        metadata={
            "description": (
                "Seats played by the service's bots (one per seat). People take the other seats."
            )
        },
    )
    visibility = fields.String(
        load_default="public",
        validate=validate.OneOf(VISIBILITIES),
        metadata={
            "description": (
                "`private`: the game is not listed in `GET /games` and joining needs its\n"
                "invitation, returned once in this answer's `invitation` with a creator token\n"
                "that can revoke it. Default `public`."
            )
        },
    )
    turn_seconds = fields.Integer(
        strict=True,
        validate=validate.Range(*TURN_SECONDS),
        metadata={
            "description": (
                "Seconds each seat has for each move; when "
                "they run out, the `greedy` bot moves for\n"
                "the seat (`by: clock`). Omitted: no clock."
            )
        },
    )


class BotRequest(Strict):
    """A seat for one of the game's bots; the game checks the seat and the kind (422)."""

    class Meta(Strict.Meta):
        description = "A seat for one of the game's bots."

    seat = fields.Integer(
        strict=True,
        required=True,
        validate=validate.Range(min=0, max=11),
        metadata={
            "description": "The bot's seat; it must exist in the game (else `422 invalid_bots`)."
        },
    )
    kind = fields.String(
        required=True,
        validate=validate.Length(min=1, max=40),
        metadata={
            "description": (
                "`random` (a legal move at random, from numbers derived from the game's secret\n"
                "seed) or `greedy` (the move worth the most points now); else `422 invalid_bots`."
            ),
            "examples": ["greedy", "random"],
        },
    )
    name = fields.String(
        validate=NAME,
        metadata={
            "description": f"The seat's name; default `<kind> bot <seat>`. {NAME_DESCRIPTION}"
        },
    )

    @post_load
    def _to_bot(self, data: dict[str, Any], **_: Any) -> BotSeat:
        name = data.get("name", f"{data['kind']} bot {data['seat']}")
        return BotSeat(data["seat"], data["kind"], name)


class JoinRequest(Strict):
    name = fields.String(
        required=True,
        validate=NAME,
        metadata={"description": f"The name shown for the seat. {NAME_DESCRIPTION}"},
    )
    invitation = fields.String(
        validate=validate.Length(max=128),
        metadata={
            "description": "A private game's invitation (`invitation.token` of the answer that"
            " created it); else `403 invitation_required` or `invalid_invitation`. Ignored by"
            " public games."
        },
    )


MAX_VERSION = 2**31 - 1  # versions are PostgreSQL integers


class ListGamesQuery(Strict):
    """GET /games's query string."""

    status = fields.String(
        validate=validate.OneOf(["waiting", "playing", "over", "cancelled"]),
        metadata={"description": "Only games in this status."},
    )
    game = fields.String(
        validate=[validate.Length(max=40), plain_text],
        metadata={
            "description": "Only games of this kind, e.g. `sushi-go`.",
            "pattern": PLAIN_TEXT_PATTERN,
        },
    )
    limit = fields.Integer(
        load_default=20,
        validate=validate.Range(min=1, max=100),
        metadata={"description": "The most games on one page."},
    )
    order = fields.String(
        load_default="oldest",
        validate=validate.OneOf(["oldest", "newest"]),
        metadata={
            "description": (
                "`oldest`: games by creation time, oldest first (ties broken by "
                "`game_id`); `newest`: the reverse, newest first (e.g. for a lobby)."
            )
        },
    )
    after = fields.String(
        validate=validate.Length(max=200),
        metadata={
            "description": (
                "The opaque `next_after` value of the previous page. A cursor is a position in "
                "the list, not tied to an order: it lists the games after that position "
                "in the `order` asked for, so a cursor from an `oldest` page used with "
                "`order=newest` lists the games created before it (newest first), and "
                "vice versa. Pass the same `order` on every page to walk the whole list."
            )
        },
    )
    ids = fields.String(
        validate=[
            validate.Length(max=3700),
            validate.Regexp(
                r"^[0-9a-fA-F-]{36}(,[0-9a-fA-F-]{36}){0,99}$",
                error="give up to 100 game ids (UUIDs), separated by commas",
            ),
        ],
        metadata={
            "description": (
                "Only these games: up to 100 game ids, separated by commas (e.g. the games a "
                "client holds seats in). Unknown ids are left out."
            )
        },
    )


MIN_VERSION_HELP = (
    "The game's `version` you have already seen (of a view, an event page, a state). The answer"
    " is never older than that. Reads may be served by a read replica (a hot standby that"
    " replays the primary's log milliseconds later); with this parameter the service answers"
    " from the primary whenever the replica has not caught up. `wait_after`, the version in"
    " `If-None-Match`, `after` (`/events`) and `version` (`/state`) count as seen versions too."
    " Without any of them, a read may lag your own last write by the replication lag when the"
    " service runs with replicas."
)


def min_version_field() -> fields.Integer:
    return fields.Integer(
        validate=validate.Range(min=0, max=MAX_VERSION), metadata={"description": MIN_VERSION_HELP}
    )


class ReadQuery(Strict):
    """A read a replica may serve (GET /games/{id}/export, /scores): only ``min_version``."""

    min_version = min_version_field()


# A whole game on one page by default: a 5-player Sushi Go! game has 140 events, random
# 12-player Sequence games about 200 (tests/test_events_page.py).
EVENTS_PAGE = 1000


class EventsQuery(ReadQuery):
    """GET /games/{id}/events's query string."""

    after = fields.Integer(
        load_default=0,
        validate=validate.Range(min=0, max=MAX_VERSION),
        metadata={"description": "Only events with a version greater than this."},
    )
    limit = fields.Integer(
        load_default=EVENTS_PAGE,
        validate=validate.Range(min=1, max=EVENTS_PAGE),
        metadata={"description": "The most events on one page; the default holds a whole game."},
    )


# --- responses ----------------------------------------------------------------------------------


class SeatSummary(Schema):
    seat = fields.Integer(
        required=True, metadata={"description": "The seat's number, from 0.", "minimum": 0}
    )
    name = fields.String(
        allow_none=True,
        required=True,
        metadata={"description": "Who sits there; null while the seat is free."},
    )
    bot = fields.String(
        allow_none=True,
        required=True,
        metadata={"description": "The kind of bot playing the seat (`random`, `greedy`), or null."},
    )


class GameSummary(Schema):
    game_id = fields.UUID(required=True)
    game = fields.String(required=True)
    status = fields.String(
        required=True,
        metadata={
            "enum": ["waiting", "playing", "over", "cancelled"],
            "description": "`cancelled`: its seats did not fill in time (`game_cancelled`).",
        },
    )
    version = fields.Integer(required=True, metadata={"minimum": 0})
    created_at = fields.AwareDateTime(required=True)
    url = fields.String(required=True, metadata={"description": "The game's URL (relative)."})
    seats = fields.List(
        fields.Nested(SeatSummary),
        required=True,
        metadata={"description": "Every seat, in order, with who sits there (null while free)."},
    )
    free_seats = fields.Integer(
        required=True,
        metadata={
            "description": "How many seats a person can still join (seats kept for a bot are not).",
            "minimum": 0,
        },
    )
    visibility = VISIBILITY()
    waiting_for = fields.List(
        fields.Integer(metadata={"minimum": 0}),
        required=True,
        metadata={
            "description": (
                "The seats whose move the game waits for (empty unless playing): every seat yet "
                "to pick in Sushi Go!, the seat to move in Sequence."
            )
        },
    )


class GameList(Schema):
    games = fields.List(fields.Nested(GameSummary), required=True)
    next_after = fields.String(
        allow_none=True,
        required=True,
        metadata={"description": "Pass as `after` for the next page; null on the last page."},
    )


class NewInvitation(Schema):
    """POST /games/{id}/invitation: the private game's new invitation (the old one no longer
    works)."""

    game_id = fields.UUID(required=True)
    invitation = fields.Nested(Invitation, required=True)


class SeatGranted(Schema):
    game_id = fields.UUID(required=True)
    seat = fields.Integer(required=True, metadata={"minimum": 0, "maximum": 11})
    name = fields.String(required=True)
    token = fields.String(
        required=True,
        metadata={
            "description": (
                "The seat's bearer token. **Shown only this "
                "once**: the service keeps only its hash."
            ),
            "minLength": 32,
        },
    )
    token_type = fields.String(required=True, metadata={"enum": ["Bearer"]})
    started = fields.Boolean(
        required=True,
        metadata={"description": "Taking this seat started the game (it was the last free seat)."},
    )
    receipt = fields.Nested(Receipt, metadata={"description": RECEIPT_DESCRIPTION})


class RematchGranted(SeatGranted):
    """POST /games/{id}/rematch: your seat in the finished game's rematch (``game_id``)."""

    rematch_of = fields.UUID(
        required=True, metadata={"description": "The finished game this is the rematch of."}
    )


class EventRecord(Schema):
    version = fields.Integer(
        required=True,
        metadata={
            "description": "The event's place in its game, from 1, without gaps.",
            "minimum": 1,
        },
    )
    type = fields.String(
        required=True,
        metadata={
            "description": (
                "The event type. Lifecycle events shared by every game: `game_created` (rules,\n"
                "seed commitment), `seat_taken`, `seat_left` (before the start), `game_started`,\n"
                "`seat_taken_over` (the greedy bot plays a seat from then on), "
                "`game_ended` (the last; reveals the\n"
                "seed), `game_cancelled` (instead of the start; the last, reveals the seed).\n"
                "Sushi Go! adds `round_dealt`, "
                "`card_picked`, `turn_revealed`, `round_scored`;\n"
                "Sequence adds `cards_dealt`, `card_played`, "
                "`dead_card_discarded`, `turn_passed`,\n"
                "`sequence_completed`, `deck_reshuffled`."
            ),
            "enum": [
                "game_created",
                "seat_taken",
                "seat_left",
                "game_started",
                "seat_taken_over",
                "round_dealt",
                "card_picked",
                "turn_revealed",
                "round_scored",
                "cards_dealt",
                "card_played",
                "dead_card_discarded",
                "turn_passed",
                "sequence_completed",
                "deck_reshuffled",
                "game_ended",
                "game_cancelled",
            ],
        },
    )
    schema_version = fields.Integer(
        required=True,
        metadata={
            "description": (
                "The version of this event type's `data` layout. `/events` and the stream give\n"
                "every event in its type's current version (an older one is upcast as it is\n"
                "read); an export gives each as recorded, since its hash covers that form."
            ),
            "minimum": 1,
        },
    )
    data = fields.Dict(
        keys=fields.String(),
        required=True,
        metadata={
            "description": (
                "The event's facts, game-specific. Sushi Go! (schema version 1 unless said):\n"
                "\n"
                "- `game_created`: `{game, rules, seed_commitment, "
                "shuffle, bots?, turn_seconds?}`;\n"
                "  `bots`: `[{seat, kind, name}]`, the seats reserved for bots (only if any);\n"
                "  `turn_seconds`: the turn clock (only if set)\n"
                "- `seat_taken`: `{seat, name, bot?}`; `bot`: the kind of bot that took the seat\n"
                "- `seat_left`: `{seat, name}`: the seat is free again (before the start)\n"
                "- `game_started`: `{seats: [names]}`\n"
                "- `seat_taken_over`: `{seat, reason, idle_seconds?, limit_seconds?}`: the "
                "greedy bot\n"
                "  plays the seat from now on; `reason`: `resigned` (its player resigned) or\n"
                "  `stalled` (the game waited `idle_seconds` for it, past the limit)\n"
                "- `game_cancelled`: `{reason: not_filled, waited_seconds, limit_seconds, "
                "seed}`: the\n"
                "  seats did not fill in time; nothing follows it\n"
                "- `round_dealt` (schema version 2; v1 lacked "
                "`deck_offset`): `{round, deck_offset,\n"
                "  hands: [[card…] per seat], dummy_pile (dummy variant)}`;\n"
                "  before the end another seat's hand and the dummy pile are null, and\n"
                "  `hand_sizes` and `redacted` are added\n"
                "- `card_picked`: `{seat, round, turn, cards, "
                "chopsticks, dummy_card?, use_wasabi?,\n"
                "  auto, by?}` (`by`: `bot`, `clock`, `resigned` or `stalled` when "
                "the service picked\n  for the seat); another\n"
                "  seat's pick of the current turn keeps "
                "only `{seat, round, turn}` plus `redacted`\n"
                "- `turn_revealed`: `{round, turn, picks: "
                "[{seat, cards, chopsticks, dummy_card?,\n"
                "  use_wasabi?}]}`\n"
                "- `round_scored` (schema version 2; v1 listed the seats by position): "
                "`{round,\n"
                "  scores: [{seat, <category>: {points, count…}, total} per scored seat]}`\n"
                "- `game_ended` (schema version 2; v1 listed the seats by position): `{puddings:\n"
                "  [{seat, count, points}], totals: [{seat, total}], winners, seed}`\n"
                "\n"
                "Sequence (schema version 1 unless said; cells are `[row, column]`):\n"
                "\n"
                "- `game_created`: `{game, rules: {players, "
                "teams, advanced_jacks}, seed_commitment,\n"
                "  shuffle, bots?, turn_seconds?}`; the lifecycle events as above\n"
                "- `cards_dealt`: `{hands: [[card…] per "
                "seat]}`; before the end another seat's hand\n"
                "  is null, and `hand_sizes` and `redacted` are added\n"
                "- `card_played`: `{seat, turn, team, card, "
                "cell, removed, drawn, by?}`: `cell` where a\n"
                "  chip was placed, or `removed` where a "
                "one-eyed jack took one (the other null);\n"
                "  `drawn`, the card the service drew for the seat, is null for other viewers\n"
                "  (`redacted: [drawn]`) before the end\n"
                "- `dead_card_discarded`: `{seat, turn, card, drawn, by?}` (Q7), `drawn` hidden\n"
                "  likewise\n"
                "- `turn_passed`: `{seat, turn, auto, by?}` (Q8; `auto`: passed by the service);\n"
                "  `by` (`bot`, `clock`, `resigned`, `stalled`) marks a move the service made "
                "for the seat\n"
                "- `sequence_completed`: `{seat, team, count, "
                "sequences: [{team, cells, count}]}`:\n"
                "  the team's sequences after the placement (Q9/Q10)\n"
                "- `deck_reshuffled`: `{reshuffle, cards, stream_offset}`: the discard pile, in\n"
                "  order, shuffled into a new draw pile from word `stream_offset` of the seed's\n"
                "  stream (Q8)\n"
                "- `game_ended` (schema version 2; v1 listed the teams by position): `{result:\n"
                "  win|draw, team, winners, totals: [{team, total (sequences, Q12)}], seed}`\n"
                "\n"
                "`redacted`, when present, lists what was hidden from this viewer."
            )
        },
    )
    recorded_at = fields.AwareDateTime(required=True)


class ExportLine(EventRecord):
    """One line of GET /games/{id}/export: an event as recorded, with its link of the hash
    chain (null until the game is over: a hash would let anyone test guesses of hidden cards)."""

    class Meta:
        description = (
            "One line of an export: an event as recorded, with its link of the hash chain,\n"
            "`hash = sha256(bytes.fromhex(previous hash) + JCS({game_id, version, type,\n"
            "schema_version, data}))` in hex (JCS: RFC 8785), the first event's previous hash "
            "being\n"
            "64 zeros."
        )

    game_id = fields.UUID(required=True)
    hash = fields.String(allow_none=True, required=True, metadata={"pattern": "^[0-9a-f]{64}$"})


class AuditReport(Schema):
    """domain/audit.py's report; its sections are described in openapi.yaml (AuditReport)."""

    class Meta:
        description = (
            "The audit of one game (domain/audit.py). Each check section has `ok` and\n"
            "`first_bad_version` (null when it passed); `provenance` lists, per scoring event and\n"
            "seat, each category's points, the rules (S-numbers) that gave them and the cards "
            "that\n"
            "earned them with the versions of the events that picked and revealed each. A Sushi "
            "Go!\nnigiri on a wasabi has `wasabi: {picked, revealed}` (the wasabi's versions, "
            "S8/S9); one\nwhose owner kept it off a free wasabi has `declined_wasabi: true` "
            "(zoch, S9)."
        )

    game_id = fields.String(allow_none=True)
    game = fields.String(allow_none=True)
    events = fields.Integer()
    seats = fields.List(
        fields.String(allow_none=True),
        allow_none=True,
        metadata={"description": "The seats' names (and `dummy`, S17)."},
    )
    ok = fields.Boolean(required=True)
    complete = fields.Boolean()
    redacted = fields.List(
        fields.Integer(),
        metadata={
            "description": (
                "Versions of events redacted in the export (an export made before the end)."
            )
        },
    )  # versions of redacted events
    reason = fields.String(
        allow_none=True,
        metadata={"description": "Why the game could not be replayed, if it could not."},
    )
    error = fields.String(allow_none=True)
    points = fields.Dict(
        keys=fields.String(),
        metadata={"description": "Whether the provenance's points add up to the recorded scores."},
    )
    recorded_totals = fields.List(
        fields.Dict(keys=fields.String()),
        allow_none=True,
        metadata={
            "description": (
                "The `totals` of the recorded `game_ended`, in its current schema (Sushi Go!:\n"
                "`[{seat, total}]`; Sequence: `[{team, total}]`)."
            )
        },
    )
    recorded_winners = fields.List(fields.Integer(), allow_none=True)
    chain = fields.Dict(keys=fields.String())
    seed = fields.Dict(keys=fields.String())
    deals = fields.Dict(keys=fields.String())
    scores = fields.Dict(keys=fields.String())
    replay = fields.Dict(keys=fields.String())
    totals = fields.List(
        fields.Dict(keys=fields.String()),
        allow_none=True,
        metadata={"description": "The `totals` the replay gives, shaped as `recorded_totals`."},
    )
    winners = fields.List(fields.Integer(), allow_none=True)
    provenance = fields.List(fields.Dict(keys=fields.String()), allow_none=True)
    signature = fields.Dict(
        keys=fields.String(),
        metadata={"description": "the export's signed checkpoint checked with the public keys"},
    )
    receipts = fields.Dict(
        keys=fields.String(),
        metadata={"description": "the players' receipts checked against the export"},
    )


class AuditRequest(Strict):
    """POST /games/{id}/audit: the audit, with receipts the players kept."""

    receipts = fields.List(
        fields.Raw(),
        required=True,
        validate=validate.Length(max=10_000),
        metadata={"description": "receipts as the service gave them (`receipt` members)"},
    )


class Jwk(Schema):
    kty = fields.String(required=True, metadata={"description": "`OKP` (RFC 8037)"})
    crv = fields.String(required=True, metadata={"description": "`Ed25519`"})
    x = fields.String(required=True, metadata={"description": "the public key, base64url"})
    kid = fields.String(required=True, metadata={"description": "its RFC 7638 thumbprint"})
    use = fields.String(required=True, metadata={"description": "`sig`"})
    alg = fields.String(required=True, metadata={"description": "`EdDSA`"})


class Jwks(Schema):
    """GET /.well-known/cardroom-keys: the keys receipts are signed with, the active one last."""

    keys = fields.List(
        fields.Nested(Jwk), required=True, metadata={"description": "every valid signing key"}
    )


class Ruling(Schema):
    code = fields.String(required=True, metadata={"description": "The rule's code, e.g. `S8`."})
    text = fields.String(required=True, metadata={"description": "The ruling, as plain text."})


class Rulings(Schema):
    """GET /rules/{game}."""

    game = fields.String(required=True, metadata={"description": "The game, e.g. `sushi-go`."})
    rulings = fields.List(
        fields.Nested(Ruling),
        required=True,
        metadata={"description": "Every numbered ruling, in order."},
    )
    markdown = fields.String(
        required=True,
        metadata={"description": "The whole rulings page (tables, notes), as Markdown."},
    )


class StateQuery(ReadQuery):
    """GET /games/{id}/state's query string."""

    version = fields.Integer(
        validate=validate.Range(min=1, max=MAX_VERSION),
        metadata={"description": "The event after which to look (1 = just created)."},
    )


LONG_POLL_MAX_SECONDS = 30.0  # a long poll holds a server thread: keep it short


class GameQuery(ReadQuery):
    """GET /games/{id}: a long poll with ``wait_after`` (a version) and ``wait_seconds``
    (ignored without ``wait_after``: generated clients send it whenever they can)."""

    wait_after = fields.Integer(
        validate=validate.Range(min=0, max=MAX_VERSION),
        metadata={
            "description": "Wait until the game's version is greater than this (a long poll)."
        },
    )
    wait_seconds = fields.Float(
        validate=validate.Range(min=0, max=LONG_POLL_MAX_SECONDS),
        metadata={
            "description": (
                "The longest wait, in seconds (decimals allowed); "
                "30 when not given. Ignored without `wait_after`."
            )
        },
    )


class StreamQuery(Strict):
    """GET /games/{id}/stream's query string."""

    after = fields.Integer(
        load_default=0,
        validate=validate.Range(min=0, max=MAX_VERSION),
        metadata={
            "description": "Start after this version (ignored when `Last-Event-ID` is sent)."
        },
    )
    follow_rematch = fields.Boolean(
        load_default=False,
        truthy={"true"},
        falsy={"false"},
        metadata={
            "description": "After the game's last event, keep the stream open until the game's"
            " rematch is proposed (`POST /games/{game_id}/rematch`), send it as a `rematch`"
            " message, then end (within the stream's lifetime, as ever: reconnect)."
        },
    )


class EventPage(Schema):
    game_id = fields.UUID(required=True)
    version = fields.Integer(
        required=True,
        metadata={
            "description": "The game's current version (its number of events).",
            "minimum": 1,
        },
    )
    events = fields.List(fields.Nested(EventRecord), required=True)
    next_after = fields.Integer(
        allow_none=True,
        required=True,
        metadata={
            "description": "The `after` of the next page; null when this page reaches `version`.",
            "minimum": 1,
        },
    )


class Health(Schema):
    status = fields.String(required=True, metadata={"enum": ["ok"]})
    database = fields.String(required=True, metadata={"enum": ["ok"]})


class Readiness(Schema):
    """``GET /readyz``: every check passed."""

    status = fields.String(required=True, metadata={"enum": ["ok"]})
    database = fields.String(required=True, metadata={"enum": ["ok"]})
    checks = fields.Dict(
        keys=fields.String(),
        values=fields.String(),
        required=True,
        metadata={
            "description": "Each check's result: `ok` (or why not, for a check that"
            " does not fail the probe)."
        },
    )


class Liveness(Schema):
    """``GET /livez``: the process answers (the database is not asked)."""

    status = fields.String(required=True, metadata={"enum": ["ok"], "description": "Always `ok`."})
