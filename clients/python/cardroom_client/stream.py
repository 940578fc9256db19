"""Following a game: its Server-Sent Events stream, resumed and retried, with the long poll as
the fallback.

- A stream ends now and then (its lifetime, a worker stopping, a dropped connection): it is
  opened again with ``Last-Event-ID``, so that no event is missed or sent twice.
- ``204``: the game is over and everything was sent; the iterator ends.
- ``429 too_many_streams`` or ``503``: no stream is opened again before ``Retry-After``
  seconds. Meanwhile the game is followed by the long poll (``GET /games/{id}?wait_after=…``,
  then ``GET /games/{id}/events?after=…``); a long poll refused as well is waited out.
- The service unreachable (a restart, say): tried again after a pause (retry.py) until the
  client's retry budget is spent (``Unavailable``); then the stream resumes after the last
  event yielded, so that nothing is lost or repeated.
- The read timeout is longer than the stream's heartbeat and the long poll's wait.
- A finished game's rematch comes as one more message (``event: rematch``, id ``<version>r``):
  it is yielded as an Event of type ``rematch`` and ends the iterator; with ``follow_rematch``
  the game's end does not, the stream (or the long poll's view) is followed until the rematch
  is proposed. A message that is neither an event nor the rematch is skipped: a newer service
  may send kinds this client does not know."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import httpx

from .models import Event
from .retry import refused, retry_after

if TYPE_CHECKING:
    from .session import Session

STREAM_TIMEOUT = httpx.Timeout(10.0, read=45.0)  # the server sends a heartbeat every 15 s
FINAL = ("game_ended", "game_cancelled")  # nothing follows them (but a rematch)
REMATCH = "rematch"
OVER_PAUSE = 5.0  # seconds between long polls of a finished game while waiting for its rematch


def done(event: Event, follow_rematch: bool) -> bool:
    """Whether ``event`` is the last the iterator yields."""
    if event.type == REMATCH or event.type == "game_cancelled":
        return True
    return event.type in FINAL and not follow_rematch


class SSE:
    """A text/event-stream parser without input or output: ``feed`` it each line; it returns
    (id, event, data) when a line ends a message (comments and ``retry:`` are skipped;
    ``data:`` lines of one message are joined with newlines). The id is kept across messages."""

    def __init__(self) -> None:
        self.event_id, self.kind, self.data = "", "", list[str]()

    def feed(self, line: str) -> tuple[str, str, str] | None:
        if line == "":
            message = (self.event_id, self.kind, "\n".join(self.data)) if self.data else None
            self.kind, self.data = "", []
            return message
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "id":
            self.event_id = value
        elif name == "event":
            self.kind = value
        elif name == "data":
            self.data.append(value)
        return None


def sse_messages(lines: Iterator[str]) -> Iterator[tuple[str, str, str]]:
    """(id, event, data) of each message of a text/event-stream."""
    parser = SSE()
    for line in lines:
        message = parser.feed(line)
        if message is not None:
            yield message


def follow(
    client: Session, path: str, token: str | None, after: int, follow_rematch: bool = False
) -> Iterator[Event]:
    """Every event of the game at ``path`` after version ``after``, until its last (and its
    rematch's announcement). A service unreachable (or answering 503) for longer than the
    client's retry budget raises Unavailable."""
    last = after
    patience = client.patience(f"GET {client.base_url}{path}/stream")
    while True:
        try:
            answer = _open(client, path, token, last, follow_rematch)
        except httpx.TransportError as exc:
            client.sleep(patience.transport_failed(exc))
            continue
        dropped: httpx.TransportError | None = None
        try:
            status = answer.status_code
            if status == 204:
                return
            if status == 200:
                patience.ok()
                try:
                    for event in _read(answer):
                        last = event.version
                        yield event
                        if done(event, follow_rematch):
                            return
                except httpx.TransportError as exc:
                    dropped = exc
            elif status not in (429, 503):  # a request that will not succeed
                answer.read()
                raise refused(answer, "GET")
            else:
                wait = patience.busy(answer) if status == 503 else retry_after(answer)
        finally:
            answer.close()
        if dropped is not None:  # a worker stopped, or the connection dropped: resume
            client.sleep(patience.transport_failed(dropped))
            continue
        if status == 200:
            continue  # the stream ended: resume after `last`
        for event in _poll(client, path, token, last, wait):
            last = event.version
            patience.ok()
            yield event
            if done(event, follow_rematch):
                return


def _read(answer: httpx.Response) -> Iterator[Event]:
    for event_id, kind, data in sse_messages(answer.iter_lines()):
        event = message(event_id, kind, data)
        if event is not None:
            yield event


def message(event_id: str, kind: str, data: str) -> Event | None:
    """The Event a stream's message stands for: an event of the log, the rematch's announcement
    (its id: the game's last version then ``r``), or None for what this client does not know."""
    try:
        body = json.loads(data)
    except ValueError:
        return None
    if not isinstance(body, dict):
        return None
    if kind == REMATCH:
        version = event_id.removesuffix("r")
        return Event(int(version) if version.isdigit() else 0, REMATCH, body, body)
    if not isinstance(body.get("version"), int) or not isinstance(body.get("type"), str):
        return None
    return Event.from_json(body)


def _rematch_of(view: dict[str, Any]) -> Event | None:
    """The rematch a finished game's view announces, as the stream would send it."""
    rematch = view.get("rematch")
    if not isinstance(rematch, dict):
        return None
    return Event(int(view.get("version", 0)), REMATCH, rematch, rematch)


def _open(
    client: Session, path: str, token: str | None, last: int, follow_rematch: bool = False
) -> httpx.Response:
    params = {"follow_rematch": "true"} if follow_rematch else None
    return open_sse(client, f"{path}/stream", token, str(last) if last else None, params)


def open_sse(
    client: Session,
    path: str,
    token: str | None,
    last_event_id: str | None,
    params: dict[str, str] | None = None,
) -> httpx.Response:
    """``GET path`` as a Server-Sent Events stream (not read yet), resumed after
    ``last_event_id``; the caller closes it."""
    headers = {"Accept": "text/event-stream"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    if last_event_id:
        headers["Last-Event-ID"] = last_event_id
    request = client.http.build_request(
        "GET", path, headers=headers, params=params, timeout=STREAM_TIMEOUT
    )
    return client.http.send(request, stream=True)


def _poll(client: Session, path: str, token: str | None, last: int, wait: float) -> Iterator[Event]:
    """The events after ``last`` for the next ``wait`` seconds (the stream's Retry-After),
    followed by the long poll; when the long poll is refused too, the wait is slept out and
    the events and the view (a finished game's rematch) read once at its end."""
    deadline = time.monotonic() + wait
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    while (remaining := deadline - time.monotonic()) > 0:
        params = {"wait_after": last, "wait_seconds": max(1.0, min(remaining, 30.0))}
        try:
            answer = client.http.get(path, params=params, headers=headers)
            refused = answer.status_code != 200
        except httpx.TransportError:
            answer, refused = None, True
        if refused:
            pause = retry_after(answer) if answer is not None else 1.0
            client.sleep(max(0.0, min(pause, deadline - time.monotonic())))
            answer = _view_now(client, path, headers)  # a finished game's rematch is in it
        for event in _page(client, path, headers, last):
            last = event.version
            yield event
        if answer is None:
            continue
        view = answer.json()
        if view.get("status") in ("over", "cancelled") and view.get("version", 0) <= last:
            rematch = _rematch_of(view)  # after the end, the rematch is all there may be
            if rematch is not None:
                yield rematch
                return
            # A finished game answers the long poll at once: pause instead of asking again.
            client.sleep(max(0.0, min(OVER_PAUSE, deadline - time.monotonic())))


def _view_now(client: Session, path: str, headers: dict[str, str]) -> httpx.Response | None:
    """The view as it is, without waiting (no place among the address's long polls needed)."""
    try:
        answer = client.http.get(path, headers=headers)
    except httpx.TransportError:
        return None
    return answer if answer.status_code == 200 else None


def _page(client: Session, path: str, headers: dict[str, str], last: int) -> list[Event]:
    try:
        page = client.http.get(f"{path}/events", params={"after": last}, headers=headers)
    except httpx.TransportError:
        return []
    if page.status_code != 200:
        return []
    return [Event.from_json(record) for record in page.json()["events"]]
