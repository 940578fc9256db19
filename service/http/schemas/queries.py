"""The query strings of the reads: the lobby's filters, the seen version a replica's answer must
reach (``min_version``), an event page's bounds, a past state's version, the long poll's wait
and the stream's start. Unknown parameters are refused (``Strict``)."""

from __future__ import annotations

from marshmallow import fields, validate

from service.bodies import (
    PLAIN_TEXT_PATTERN,
    Strict,
    plain_text,
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
