"""Following a game: its Server-Sent Events stream, resumed and retried, with the long poll as
the fallback.

- A stream ends now and then (its lifetime, a worker stopping, a dropped connection): it is
  opened again with ``Last-Event-ID``, so that no event is missed or sent twice.
- ``204``: the game is over and everything was sent; the iterator ends.
- ``429 too_many_streams`` or ``503``: no stream is opened again before ``Retry-After``
  seconds. Meanwhile the game is followed by the long poll (``GET /games/{id}?wait_after=…``,
  then ``GET /games/{id}/events?after=…``); a long poll refused as well is waited out.
- The read timeout is longer than the stream's heartbeat and the long poll's wait."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

import httpx

from .models import Event
from .retry import CardroomError, problem, retry_after

if TYPE_CHECKING:
    from .client import Client

STREAM_TIMEOUT = httpx.Timeout(10.0, read=45.0)  # the server sends a heartbeat every 15 s
MAX_FAILURES = 8  # connection failures in a row before giving up
FINAL = ("game_ended", "game_cancelled")  # nothing follows them


def sse_messages(lines: Iterator[str]) -> Iterator[tuple[str, str, str]]:
    """(id, event, data) of each message of a text/event-stream (comments and ``retry:`` are
    skipped; ``data:`` lines of one message are joined with newlines)."""
    event_id, kind, data = "", "", list[str]()
    for line in lines:
        if line == "":
            if data:
                yield event_id, kind, "\n".join(data)
            kind, data = "", []
        elif line.startswith(":"):
            continue
        else:
            name, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if name == "id":
                event_id = value
            elif name == "event":
                kind = value
            elif name == "data":
                data.append(value)


def follow(client: Client, path: str, token: str | None, after: int) -> Iterator[Event]:
    """Every event of the game at ``path`` after version ``after``, until its last."""
    last, failures = after, 0
    while True:
        try:
            answer = _open(client, path, token, last)
        except httpx.TransportError:
            failures += 1
            if failures >= MAX_FAILURES:
                raise
            client.sleep(min(0.2 * 2**failures, 5.0))
            continue
        try:
            status = answer.status_code
            if status == 204:
                return
            if status == 200:
                try:
                    for event in _read(answer):
                        last, failures = event.version, 0
                        yield event
                        if event.type in FINAL:
                            return
                except httpx.TransportError:
                    failures += 1
                    if failures >= MAX_FAILURES:
                        raise
                continue  # the stream ended: resume after `last`
            if status not in (429, 503):  # a request that will not succeed
                answer.read()
                raise CardroomError(status, problem(answer), "GET", str(answer.url))
            wait = retry_after(answer)
        finally:
            answer.close()
        for event in _poll(client, path, token, last, wait):
            last = event.version
            yield event
            if event.type in FINAL:
                return


def _read(answer: httpx.Response) -> Iterator[Event]:
    for _, _, data in sse_messages(answer.iter_lines()):
        yield Event.from_json(json.loads(data))


def _open(client: Client, path: str, token: str | None, last: int) -> httpx.Response:
    headers = {"Accept": "text/event-stream"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    if last:
        headers["Last-Event-ID"] = str(last)
    request = client.http.build_request(
        "GET", f"{path}/stream", headers=headers, timeout=STREAM_TIMEOUT
    )
    return client.http.send(request, stream=True)


def _poll(client: Client, path: str, token: str | None, last: int, wait: float) -> Iterator[Event]:
    """The events after ``last`` for the next ``wait`` seconds (the stream's Retry-After),
    followed by the long poll; when the long poll is refused too, the wait is slept out and
    the events read once at its end."""
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
        for event in _page(client, path, headers, last):
            last = event.version
            yield event


def _page(client: Client, path: str, headers: dict[str, str], last: int) -> list[Event]:
    try:
        page = client.http.get(f"{path}/events", params={"after": last}, headers=headers)
    except httpx.TransportError:
        return []
    if page.status_code != 200:
        return []
    return [Event.from_json(record) for record in page.json()["events"]]
