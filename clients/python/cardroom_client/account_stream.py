"""Following an account: ``GET /accounts/me/stream``, resumed and retried as a game's stream is
(stream.py: the same SSE reader, connection and backoff).

- A stream ends now and then (its lifetime, a worker stopping, a dropped connection): it is
  opened again with ``Last-Event-ID`` (the last message's id, ``<tx>-<id>``).
- The service sends each item at least once: after a reconnection an item that committed late
  may come again. Each item carries its ``id``; one already yielded is skipped. The turns a new
  stream starts with (``id`` null) are not deduplicated: there is nothing to tell them by, and
  they say what is true now.
- The service unreachable (a restart, say): tried again until the client's retry budget is
  spent (``Unavailable``), then resumed with ``Last-Event-ID``.
- ``429 too_many_streams`` or ``503``: no stream is opened again before ``Retry-After`` seconds
  (an account has no long poll to fall back on: its games' turns come when it is reopened).
- A message that is not an item (no JSON object with a ``type``) is skipped: a newer service
  may send kinds this client does not know."""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import Iterator
from typing import TYPE_CHECKING

import httpx

from .account_models import Item
from .retry import refused, retry_after
from .stream import open_sse, sse_messages

if TYPE_CHECKING:
    from .session import Session

PATH = "/accounts/me/stream"
REMEMBERED = 10_000  # item ids kept to skip repeats (a repeat comes soon after its first)
QUICK_END = 1.0  # seconds: a stream that ends this soon having sent nothing is paced
QUICK_PAUSE = 0.5  # seconds: this much


class Seen:
    """The ids of the last ``REMEMBERED`` items yielded."""

    def __init__(self) -> None:
        self.ids: set[int] = set()
        self.order: deque[int] = deque()

    def first_time(self, item: Item) -> bool:
        if item.id is None:
            return True
        if item.id in self.ids:
            return False
        self.ids.add(item.id)
        self.order.append(item.id)
        if len(self.order) > REMEMBERED:
            self.ids.discard(self.order.popleft())
        return True


def follow_account(client: Session, token: str, after: str | None = None) -> Iterator[Item]:
    """Every item of the account's stream, after the message id ``after`` (None: a new stream,
    starting with the turns waiting now), for as long as the caller reads."""
    last, seen = after, Seen()
    patience = client.patience(f"GET {client.base_url}{PATH}")
    while True:
        opened = time.monotonic()
        try:
            answer = open_sse(client, PATH, token, last)
        except httpx.TransportError as exc:
            client.sleep(patience.transport_failed(exc))
            continue
        sent, dropped = False, None
        try:
            if answer.status_code == 200:
                try:
                    for event_id, _kind, data in sse_messages(answer.iter_lines()):
                        last, sent = event_id or last, True
                        patience.ok()
                        item = _item(event_id, data)
                        if item is not None and seen.first_time(item):
                            yield item
                except httpx.TransportError as exc:
                    dropped = exc
            elif answer.status_code not in (429, 503):  # a request that will not succeed
                answer.read()
                raise refused(answer, "GET")
            else:
                wait = patience.busy(answer) if answer.status_code == 503 else retry_after(answer)
        finally:
            answer.close()
        if dropped is not None:
            client.sleep(patience.transport_failed(dropped))
        elif answer.status_code != 200:
            client.sleep(wait)
        elif not sent and time.monotonic() - opened < QUICK_END:
            client.sleep(QUICK_PAUSE)  # not a tight loop of empty streams


def _item(event_id: str, data: str) -> Item | None:
    try:
        body = json.loads(data)
    except ValueError:
        return None
    if not isinstance(body, dict) or not isinstance(body.get("type"), str):
        return None
    return Item.from_json(event_id, body)
