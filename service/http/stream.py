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
import random
import socket
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from time import monotonic
from typing import Any
from uuid import UUID

from flask import Blueprint, Response, current_app, request
from marshmallow import ValidationError, fields, validate

from domain.decider import Viewer
from service import metrics
from service.http import auth
from service.http.api import connection_settings, game_id_of, games, hub, load, open_streams
from service.http.hangup import Hangup
from service.http.schemas import EventRecord, StreamQuery
from service.live.hub import Hub
from service.play import GameService, Loaded
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
    """
    ---
    get:
      tags:
      - games
      operationId: streamEvents
      parameters:
      - GameId
      - in: query
        schema: StreamQuery
      - name: Last-Event-ID
        in: header
        description: The `id` of the last event received; resume after it.
        schema:
          type: integer
          minimum: 0
          maximum: 2147483647
      summary: Follow a game's events live (Server-Sent Events)
      description: |
        The game's events as they are appended, as a `text/event-stream` (Server-Sent Events;
        a browser's `EventSource` reads it as is). First every event after `Last-Event-ID` (or
        `after`), then each new one as soon as it is recorded, whichever server appended it.
        Events are redacted for the caller exactly as `GET /games/{game_id}/events` redacts
        them when they are sent (with a seat's token: that seat's view; without: a
        spectator's). Once the game is over everything is public, so a client that resumes
        after the end gets the events it had redacted in full.

        Each event is one message:

        ```
        id: 12
        event: card_picked
        data: {"version":12,"type":"card_picked","schema_version":1,"data":{…},"recorded_at":"…"}
        ```

        `id` is the event's version, `event` its type and `data` the same JSON object as an
        item of `GET /games/{game_id}/events` (an `EventRecord`), on one line. The stream
        starts with a `retry:` hint (milliseconds before reconnecting) and sends a comment line
        (`: heartbeat`) after 15 seconds without an event.

        **Bounded lifetime.** The server ends the stream after the game's last event
        (`game_ended`), and otherwise after 4 to 5 minutes (`CARDROOM_STREAM_SECONDS`, 300).
        A client that reads nothing for 30 seconds while events wait for it is cut off.
        Reconnect with `Last-Event-ID: <the last id you got>` (an
        `EventSource` does so by itself): you get exactly the events after it, none twice,
        none missing. When the game is over and nothing is left after `Last-Event-ID`, the
        answer is `204 No Content`, which tells an `EventSource` to stop reconnecting.
      security:
      - {}
      - bearerAuth: []
      responses:
        '200':
          description: |
            The event stream. Each message's `data` is an `EventRecord` as JSON.
          headers:
            Cache-Control:
              description: '`no-cache`'
              schema:
                type: string
          content:
            text/event-stream: {}
        '204':
          description: The game is over and every event up to its last has been sent. No body.
        '400':
          description: |
            `invalid_request`: an unknown query parameter, one out of range, or a
            `Last-Event-ID` that is not a version.
          content:
            application/problem+json:
              schema: {$ref: '#/components/schemas/QueryBadRequest'}
        '401': BadToken
        '403': OtherGameToken
        '404': GameNotFound
        '429': TooManyStreams
        '500': InternalError
        '503': DatabaseUnavailable
    """
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
    release = open_streams().admit(request.remote_addr or "")
    try:
        live = hub()
        live.start()  # before the first read of the stream: no append after it goes unnoticed
        sock = _stream_socket(request.environ)
        settings = StreamSettings.of(current_app.config)
        frames = _frames(games(), live, gid, Viewer(seat), after, settings, Hangup(sock))
        response = Response(frames, mimetype="text/event-stream")
    except BaseException:
        release()
        raise
    response.call_on_close(release)  # the WSGI server closes it however the stream ends
    response.headers["Cache-Control"] = "no-cache"
    response.headers["X-Accel-Buffering"] = "no"  # nginx: pass each event on at once
    return response


def _stream_socket(environ: Mapping[str, Any]) -> socket.socket | None:
    """The client's socket under gunicorn (else None), its send buffer bounded and its writes
    timed: a client that stops reading fills the buffer, then is cut after the send timeout,
    instead of making the server hold ever more for it."""
    sock = environ.get("gunicorn.socket")
    if not isinstance(sock, socket.socket):
        return None
    limits = connection_settings()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, limits.stream_buffer)
    sock.settimeout(limits.send_timeout)
    return sock


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
    service: GameService,
    live: Hub,
    gid: UUID,
    viewer: Viewer,
    after: int,
    s: StreamSettings,
    hangup: Hangup,
) -> Iterator[str]:
    """The stream's text: everything after ``after``, then each event as it is appended, until
    the game is over (its last event sent), the stream's lifetime is up, the server stops or
    the client goes (at once, not at the next write)."""
    with metrics.OPEN_STREAMS.track_inprogress():
        yield from _stream_frames(service, live, gid, viewer, after, s, hangup)


def _stream_frames(
    service: GameService,
    live: Hub,
    gid: UUID,
    viewer: Viewer,
    after: int,
    s: StreamSettings,
    hangup: Hangup,
) -> Iterator[str]:
    yield f"retry: {s.retry_ms}\n\n"
    now = monotonic()
    # Each stream ends somewhere in the last fifth of its lifetime: streams opened together
    # (after a restart, by a bench) do not all reconnect together.
    deadline, quiet_until = now + s.lifetime * random.uniform(0.8, 1.0), now + s.heartbeat
    last, read = after, True
    while True:
        if read:
            epoch = live.epoch
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
        woken = live.wait(gid, last, min(deadline, quiet_until) - now, hangup)
        if live.stopped or hangup.gone:
            return  # shutting down (the client resumes elsewhere), or nobody is listening
        # A quiet wait with the hub listening all along missed nothing: no need to read again
        # (10,000 streams would otherwise read the store at every heartbeat).
        read = woken or live.epoch != epoch or not live.listening


def _read(
    service: GameService, gid: UUID, viewer: Viewer, after: int
) -> tuple[list[dict[str, Any]], bool]:
    """Up to BATCH events after ``after`` as ``viewer`` may read them now, and whether the game
    is over with nothing left after them."""
    loaded, records = _SHARED.read(service, gid, after)
    items = service.visible(loaded, records, viewer)
    last = items[-1]["version"] if items else after
    return items, loaded.adapter.game.is_over(loaded.state) and last >= loaded.version


class SharedReads:
    """One store read for all the streams of a game that read after the same version at once
    (an append wakes every watcher of the game together): the first reads, the others wait for
    its result. Only reads in flight are shared, nothing is kept: one that began before an
    append may miss it, and then its waiters read again, as the hub still says they are
    behind."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._flights: dict[tuple[UUID, int], _Flight] = {}

    def read(self, service: GameService, gid: UUID, after: int) -> tuple[Loaded, list[Any]]:
        key = (gid, after)
        with self._lock:
            flight = self._flights.get(key)
            leader = flight is None
            if flight is None:
                flight = self._flights[key] = _Flight()
        if not leader:
            flight.done.wait()
            if flight.error is not None:
                raise flight.error
            assert flight.result is not None
            return flight.result
        try:
            # The state first: the redaction rule judges by a state this recent.
            loaded = service.load(gid)
            flight.result = (loaded, service.store.load_records(gid, after, BATCH))
            return flight.result
        except BaseException as exc:
            flight.error = exc
            raise
        finally:
            with self._lock:
                del self._flights[key]
            flight.done.set()


@dataclass
class _Flight:
    done: threading.Event = field(default_factory=threading.Event)
    result: tuple[Loaded, list[Any]] | None = None
    error: BaseException | None = None


_SHARED = SharedReads()  # per process (each worker imports this module after its fork)


def _frame(item: dict[str, Any]) -> str:
    data = json.dumps(EVENT_RECORD.dump(item), separators=(",", ":"))  # one line, no newline
    return f"id: {item['version']}\nevent: {item['type']}\ndata: {data}\n\n"
