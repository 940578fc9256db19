"""``GET /games/{id}/stream``: a game's events as Server-Sent Events, live, whichever server
process appended them (the live hub, service/live/hub.py, wakes the stream; the store says
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
from service.http.hangup import Hangup
from service.http.rematching import REMATCH_VIEW, rematch_body, rematches
from service.http.routes.common import (
    connection_settings,
    game_id_of,
    games,
    hub,
    load,
    open_streams,
)
from service.http.schemas import EventRecord, StreamQuery
from service.live.hub import Hub, vouched
from service.live.shared import SingleFlight
from service.play import GameService, Loaded
from service.rematch import Rematcher
from service.settings import settings
from service.store.events import StoreUnavailable
from service.store.rematches import Rematch

log = logging.getLogger(__name__)

stream_api = Blueprint("stream", __name__)

STREAM_QUERY = StreamQuery()
EVENT_RECORD = EventRecord()
LAST_EVENT_ID = fields.Integer(validate=validate.Range(min=0, max=2**31 - 1))
BATCH = 200  # events read at once when catching up
REMATCH_ID_SUFFIX = "r"  # the rematch message's id: the game's last version, then this


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
        description: |
          The `id` of the last message received; resume after it (an event's version, or
          `<version>r` for the rematch's announcement).
        schema:
          type: string
          pattern: '^[0-9]{1,10}r?$'
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

        **Rematch.** Once a player of the finished game proposes its rematch
        (`POST /games/{game_id}/rematch`), a stream that reaches the game's end sends it as one
        more message, `event: rematch`, whose `data` is the view's `rematch` (`game_id`,
        `proposed_by`, `proposed_at`) and whose `id` is the last version followed by `r`.
        With `follow_rematch=true` the stream stays open after the game's end until the rematch
        is proposed, and sends it as soon as it is.

        **Bounded lifetime.** The server ends the stream after the game's last event
        (`game_ended`) and the rematch's message if there is one (with `follow_rematch`: once
        the rematch is sent), and otherwise after 4 to 5 minutes
        (`CARDROOM_STREAM_SECONDS`, 300).
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
          description: |
            The game is over and every event up to its last has been sent (and its rematch's
            message, if one was proposed; without `follow_rematch`, none is waited for).
            No body.
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
    after, announced = _last_event_id()
    if after is None:
        after = query["after"]
    live = hub()
    live.start()  # before the stream's first read: no append after it goes unnoticed
    epoch = live.epoch
    loaded = vouched(live, gid, games().last_seen(gid))
    if loaded is None:
        loaded = load(gid)
        live.note(gid, loaded.version, epoch)
    seat = auth.optional_seat(games(), gid)
    over = loaded.adapter.game.is_over(loaded.state) and after >= loaded.version
    ending = Ending(rematches(), query["follow_rematch"], announced)
    if over and ending.nothing_left(gid):
        # Nothing will ever follow. 204 tells an EventSource not to reconnect (unlike a 200
        # that ends at once, which it would retry forever).
        return Response(status=204)
    release = open_streams().admit(request.remote_addr or "")
    try:
        sock = stream_socket(request.environ)
        settings = StreamSettings.of(current_app.config)
        # The state above tells whether there is anything to send yet: a client that resumes
        # from the last version (most reconnections) costs no further read until the next
        # append, nor does a reconnection of the hub since (it changes the epoch); and when
        # the hub vouches that this process's state is the game's last, not even that one.
        behind = after < loaded.version or live.epoch != epoch or over
        frames = _frames(
            games(), live, gid, Viewer(seat), after, settings, Hangup(sock), behind, epoch, ending
        )
        response = Response(frames, mimetype="text/event-stream")
    except BaseException:
        release()
        raise
    response.call_on_close(release)  # the WSGI server closes it however the stream ends
    response.headers["Cache-Control"] = "no-cache"
    response.headers["X-Accel-Buffering"] = "no"  # nginx: pass each event on at once
    return response


def stream_socket(environ: Mapping[str, Any]) -> socket.socket | None:
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


def _last_event_id() -> tuple[int | None, bool]:
    """The ``Last-Event-ID`` header an EventSource sends when it reconnects (it wins over
    ``after``, which stays in the URL it reconnects to), and whether it names the rematch's
    announcement (``<last version>r``: the client has it)."""
    value = request.headers.get("Last-Event-ID", "").strip()
    if not value:
        return None, False
    announced = value.endswith(REMATCH_ID_SUFFIX)
    try:
        return int(LAST_EVENT_ID.deserialize(value.removesuffix(REMATCH_ID_SUFFIX))), announced
    except ValidationError as exc:
        raise ValidationError({"Last-Event-ID": exc.messages}) from None


@dataclass(frozen=True)
class Ending:
    """What a stream of a finished game sends after its last event: the rematch if one was
    proposed and the client does not have it (``announced``), and with ``follow``, the rematch
    once it is proposed (the stream stays open for it)."""

    rematches: Rematcher
    follow: bool
    announced: bool

    def nothing_left(self, gid: UUID) -> bool:
        if self.announced:
            return True
        return not self.follow and self.rematches.of(gid) is None

    def frames(
        self, live: Hub, gid: UUID, last: int, deadline: float, s: StreamSettings, hangup: Hangup
    ) -> Iterator[str]:
        """After the last event: the rematch's message, at once or (``follow``) once proposed
        (the hub wakes the stream: its reader follows ``rematches``), within the stream's
        lifetime."""
        if self.announced:
            return
        quiet_until = monotonic() + s.heartbeat
        epoch, read = live.epoch, True
        while True:
            rematch = self.rematches.of(gid) if read else None
            if rematch is not None:
                yield _rematch_frame(rematch, last)
                return
            now = monotonic()
            if not self.follow or now >= deadline:
                return
            if now >= quiet_until:
                yield ": heartbeat\n\n"
                quiet_until = now + s.heartbeat
            woken = live.wait(gid, last, min(deadline, quiet_until) - now, hangup)
            if live.stopped or hangup.gone:
                return
            read = woken or live.epoch != epoch or not live.listening
            epoch = live.epoch


def _rematch_frame(rematch: Rematch, last: int) -> str:
    data = json.dumps(REMATCH_VIEW.dump(rematch_body(rematch)), separators=(",", ":"))
    return f"id: {last}{REMATCH_ID_SUFFIX}\nevent: rematch\ndata: {data}\n\n"


def _frames(
    service: GameService,
    live: Hub,
    gid: UUID,
    viewer: Viewer,
    after: int,
    s: StreamSettings,
    hangup: Hangup,
    behind: bool = True,
    epoch: int = 0,
    ending: Ending | None = None,
) -> Iterator[str]:
    """The stream's text: everything after ``after``, then each event as it is appended, until
    the game is over (its last event sent), the stream's lifetime is up, the server stops or
    the client goes (at once, not at the next write). ``behind``: whether to read the store
    before the first wait (False: it was read after the hub listened, at ``epoch``)."""
    with metrics.OPEN_STREAMS.track_inprogress():
        yield from _stream_frames(
            service, live, gid, viewer, after, s, hangup, behind, epoch, ending
        )


def _stream_frames(
    service: GameService,
    live: Hub,
    gid: UUID,
    viewer: Viewer,
    after: int,
    s: StreamSettings,
    hangup: Hangup,
    read: bool,
    epoch: int,
    ending: Ending | None = None,
) -> Iterator[str]:
    yield f"retry: {s.retry_ms}\n\n"
    now = monotonic()
    # Each stream ends somewhere in the last fifth of its lifetime: streams opened together
    # (after a restart, by a bench) do not all reconnect together.
    deadline, quiet_until = now + s.lifetime * random.uniform(0.8, 1.0), now + s.heartbeat
    last = after
    while True:
        if read:
            epoch = live.epoch
            try:
                page = _SHARED.read(service, live, gid, last, viewer)
            except StoreUnavailable as exc:
                log.warning("stream of %s ends: %s", gid, exc)  # the client resumes from `last`
                return
            if page.text:
                yield page.text
                last, quiet_until = page.last, monotonic() + s.heartbeat
            if page.over:
                if ending is not None:
                    yield from ending.frames(live, gid, page.last, deadline, s, hangup)
                return
            if page.full:
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


@dataclass(frozen=True)
class Page:
    """What one read gives a viewer: the frames of the events it may see (one string: one
    write), the last version among them, whether the read was a full batch (more may follow)
    and whether the game is over with nothing left after them."""

    text: str
    last: int
    full: bool
    over: bool


class SharedReads:
    """One store read for all the streams of a game that read after the same version at once
    (an append wakes every watcher of the game together: service/live/shared.py), and one
    rendering of its frames per kind of viewer (each seat, spectators), so that what each
    watcher adds is a write."""

    def __init__(self) -> None:
        self._reads: SingleFlight[tuple[Loaded, list[Any]]] = SingleFlight()

    def read(self, service: GameService, live: Hub, gid: UUID, after: int, viewer: Viewer) -> Page:
        flight = self._reads.run((gid, after), lambda: _records(service, live, gid, after))
        page = flight.memo.get(viewer)
        if page is None:  # two threads may both render it: the same page, no harm
            assert flight.result is not None
            page = flight.memo[viewer] = _render(service, *flight.result, after, viewer)
        return page


def _records(service: GameService, live: Hub, gid: UUID, after: int) -> tuple[Loaded, list[Any]]:
    """The events after ``after`` and a state at least as recent, to judge their redaction by.
    One read when this process saw the game at ``after`` or later (a woken stream mostly
    did): the state is that one moved on by the events read. Otherwise, or when the page is
    full (the game may have moved past it), the state is read too, after them: it may be
    later than the last of them, never earlier."""
    epoch = live.epoch
    records = service.store.load_records(gid, after, BATCH)
    loaded = service.advance(gid, after, records) if len(records) < BATCH else None
    if loaded is None:
        loaded = service.load(gid)
    live.note(gid, loaded.version, epoch)  # whichever way, the primary's version at the read
    return loaded, records


def _render(
    service: GameService, loaded: Loaded, records: list[Any], after: int, viewer: Viewer
) -> Page:
    items = service.visible(loaded, records, viewer)
    last = items[-1]["version"] if items else after
    over = loaded.adapter.game.is_over(loaded.state) and last >= loaded.version
    text = "".join(_frame(item) for item in items)
    return Page(text, last, len(items) == BATCH, over)


_SHARED = SharedReads()  # per process (each worker imports this module after its fork)


def _frame(item: dict[str, Any]) -> str:
    data = json.dumps(EVENT_RECORD.dump(item), separators=(",", ":"))  # one line, no newline
    return f"id: {item['version']}\nevent: {item['type']}\ndata: {data}\n\n"
