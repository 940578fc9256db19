"""The responses made of a game's events: one recorded event (``EventRecord``), an export's line
(the event as stored, with its hashes) and a page of events. Declared fields only are dumped, so
an event shows no more than its schema names."""

from __future__ import annotations

from marshmallow import Schema, fields


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
