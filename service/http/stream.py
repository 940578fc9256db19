"""``GET /games/{id}/stream``: a game's events as Server-Sent Events, live, whichever server
process appended them (the notification hub, service/live/hub.py, wakes the stream; the store says
what to send).

Each event is sent once, redacted for the caller exactly as ``GET /games/{id}/events`` redacts
it at that moment. A stream lives a bounded time, so that it does not hold a server thread
forever; the client reconnects with ``Last-Event-ID`` and misses nothing.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from time import monotonic
from typing import Any
from uuid import UUID

from flask import Blueprint, Response, current_app, request
from marshmallow import ValidationError, fields, validate

from domain.decider import Viewer
from service import metrics
from service.http import auth
from service.http.api import game_id_of, games, hub, load
from service.http.schemas import EventRecord, StreamQuery
from service.live.hub import Hub
from service.play import GameService
from service.settings import settings
from service.store.events import StoreUnavailable

log = logging.getLogger(__name__)

stream_api = Blueprint("stream", __name__)

STREAM_QUERY = StreamQuery()
EVENT_RECORD = EventRecord()
LAST_EVENT_ID = fields.Integer(validate=validate.Range(min=0, max=2**31 - 1))
BATCH = 200  # events read at once when catching up


@dataclass(frozen=True)
class StreamSettings:
    lifetime: float  # seconds before the server ends a stream (the client reconnects)
    heartbeat: float  # seconds of silence before a comment line keeps proxies from timing out
    retry_ms: int  # the reconnection delay suggested to EventSource clients

    @classmethod
    def of(cls, config: Mapping[str, Any]) -> StreamSettings:
        return cls(
            float(config.get("STREAM_SECONDS") or settings().stream_seconds),
            float(config.get("STREAM_HEARTBEAT_SECONDS", 15)),
            int(config.get("STREAM_RETRY_MS", 1000)),
        )


@stream_api.get("/games/<game_id>/stream")
def stream(game_id: str) -> Response:
    gid = game_id_of(game_id)
    query = STREAM_QUERY.load(request.args.to_dict())
    after = _last_event_id()
    if after is None:
        after = query["after"]
    loaded = load(gid)
    seat = auth.optional_seat(games(), gid)
    if loaded.adapter.game.is_over(loaded.state) and after >= loaded.version:
        # Nothing will ever follow. 204 tells an EventSource not to reconnect (unlike a 200
        # that ends at once, which it would retry forever).
        return Response(status=204)
    live = hub()
    live.start()  # before the first read of the stream: no append after it goes unnoticed
    frames = _frames(games(), live, gid, Viewer(seat), after, StreamSettings.of(current_app.config))
    response = Response(frames, mimetype="text/event-stream")
    response.headers["Cache-Control"] = "no-cache"
    response.headers["X-Accel-Buffering"] = "no"  # nginx: pass each event on at once
    return response


def _last_event_id() -> int | None:
    """The ``Last-Event-ID`` header an EventSource sends when it reconnects (it wins over
    ``after``, which stays in the URL it reconnects to)."""
    value = request.headers.get("Last-Event-ID", "").strip()
    if not value:
        return None
    try:
        return int(LAST_EVENT_ID.deserialize(value))
    except ValidationError as exc:
        raise ValidationError({"Last-Event-ID": exc.messages}) from None


def _frames(
    service: GameService, live: Hub, gid: UUID, viewer: Viewer, after: int, s: StreamSettings
) -> Iterator[str]:
    """The stream's text: everything after ``after``, then each event as it is appended, until
    the game is over (its last event sent), the stream's lifetime is up or the server stops."""
    with metrics.OPEN_STREAMS.track_inprogress():
        yield from _stream_frames(service, live, gid, viewer, after, s)


def _stream_frames(
    service: GameService, live: Hub, gid: UUID, viewer: Viewer, after: int, s: StreamSettings
) -> Iterator[str]:
    yield f"retry: {s.retry_ms}\n\n"
    now = monotonic()
    deadline, quiet_until = now + s.lifetime, now + s.heartbeat
    last = after
    while True:
        try:
            items, over = _read(service, gid, viewer, last)
        except StoreUnavailable as exc:
            log.warning("stream of %s ends: %s", gid, exc)  # the client resumes from `last`
            return
        for item in items:
            yield _frame(item)
        if items:
            last, quiet_until = items[-1]["version"], monotonic() + s.heartbeat
        if over:
            return
        if len(items) == BATCH:
            continue  # catching up: read on at once
        now = monotonic()
        if now >= deadline:
            return
        if now >= quiet_until:
            yield ": heartbeat\n\n"
            quiet_until = now + s.heartbeat
        live.wait(gid, last, min(deadline, quiet_until) - now)
        if live.stopped:
            return  # the server is shutting down: the client resumes elsewhere


def _read(
    service: GameService, gid: UUID, viewer: Viewer, after: int
) -> tuple[list[dict[str, Any]], bool]:
    """Up to BATCH events after ``after`` as ``viewer`` may read them now, and whether the game
    is over with nothing left after them."""
    loaded = service.load(gid)  # first: the redaction rule judges by a state this recent
    items = service.visible_events(loaded, viewer, after, BATCH)
    last = items[-1]["version"] if items else after
    return items, loaded.adapter.game.is_over(loaded.state) and last >= loaded.version


def _frame(item: dict[str, Any]) -> str:
    data = json.dumps(EVENT_RECORD.dump(item), separators=(",", ":"))  # one line, no newline
    return f"id: {item['version']}\nevent: {item['type']}\ndata: {data}\n\n"
