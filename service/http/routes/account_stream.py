"""``GET /accounts/me/stream`` (issue 35): one Server-Sent Events connection that tells an account
of every game it sits in (started, its turn, finished, rematch) and of its challenges, as
Lichess's ``/api/stream/event`` tells a bot. A bot plays any number of games holding this one
connection plus its moves.

What it sends is the account's ``account_feed`` rows (service/store/account_feed.py), written in
the transactions that made them true, read in ``(tx, id)`` order. The process's reader of the log
(service/live/) wakes the stream when rows for its account commit. A row is sent as soon as it
is visible; the message's ``id`` (what ``Last-Event-ID`` resumes from) moves only past rows below
the oldest transaction still running, so a row that commits late is never skipped. A resumed
stream may therefore send a row again (at least once): each item carries its ``id`` to tell.
"""

from __future__ import annotations

import json
import logging
import random
from collections.abc import Iterator
from time import monotonic
from typing import Any

from flask import Response, current_app, request
from marshmallow import ValidationError

from service import autoplay, metrics
from service.http import auth
from service.http.hangup import Hangup
from service.http.routes.common import api, games, hub, open_streams
from service.http.routes.stream import StreamSettings, stream_socket
from service.live.hub import Hub, account_key
from service.play import GameService
from service.store import account_feed
from service.store.account_feed import CHALLENGE, YOUR_TURN, Cursor, Row
from service.store.events import StoreUnavailable

log = logging.getLogger(__name__)

BATCH = 200  # rows read at once
ACTIVE_GAMES = 100  # a new stream tells of the turns waiting in at most this many games


@api.get("/accounts/me/stream")
def account_stream() -> Response:
    """
    ---
    get:
      tags:
      - accounts
      operationId: streamAccount
      parameters:
      - name: Last-Event-ID
        in: header
        description: The `id` of the last message received; resume after it.
        schema:
          type: string
          pattern: '^[0-9]{1,20}-[0-9]{1,20}$'
      summary: Follow every game of the account live (Server-Sent Events)
      description: |
        One `text/event-stream` for all the account's games and challenges (an account token
        with scope `play`). Each message is one item:

        ```
        id: 7412-503
        event: your_turn
        data: {"id":503,"type":"your_turn","game_id":"…","game":"sushi-go","seat":1,…}
        ```

        Items (`event` is the item's `type`): `game_started` (`game_id`, `game`, `seat`,
        `version`); `your_turn` (a turn opened that waits for the account's seat: `game`,
        `seat`, `version` and the `round`/`turn` a move must name — Sushi Go! waits for every
        seat at each turn, Sequence for one); `game_finished` (`status`: `over` or
        `cancelled`); `rematch` (`rematch_id`: join it with `POST /games/{game_id}/rematch`);
        `challenge` (a challenge offered to the account, or by it) and `challenge_answered`
        (accepted, declined, cancelled or expired; with the new `game_id` once accepted);
        `rating_changed` (a rated game of the account ended: its `pool`, `seat`, `rank` and
        the rating `before` and `after` it, each `{mu, sigma, ordinal, games, provisional}`;
        written in the transaction of the game's last event).
        Items are thin: read the game as the account's seat sees it with the account token.
        None shows a hand or a pick.

        **A new stream** (no `Last-Event-ID`) starts with a `challenge` for every challenge
        still open (offered to the account or by it, oldest first) and a `your_turn` for every
        game (of the account's 100 most recent unfinished ones) waiting for the account's seat
        now (these with `id: null`), then everything from then on. A `your_turn`'s data, in full:
        `{"id":503,"type":"your_turn","game_id":"…","game":"sushi-go","seat":1,"version":14,
        "round":1,"turn":3,"at":"2026-11-28T07:00:00+00:00"}`.
        **Resuming** with `Last-Event-ID` sends every item after it, at least once: an item
        committed late may be sent again after a reconnection (its `id` tells; skip ids you
        have).

        Same rules as a game's stream: a `retry:` hint first, a `: heartbeat` comment after
        15 s of silence, the stream ends after 4 to 5 minutes (`CARDROOM_STREAM_SECONDS`) and
        the client reconnects with `Last-Event-ID` (an `EventSource` does); streams and long
        polls per address are capped (`429 too_many_streams`).
      security:
      - bearerAuth: []
      responses:
        '200':
          description: The account's stream.
          headers:
            Cache-Control:
              description: '`no-cache`'
              schema:
                type: string
          content:
            text/event-stream: {}
        '400':
          description: "`invalid_request`: a `Last-Event-ID` that is not this stream's."
          content:
            application/problem+json:
              schema: {$ref: '#/components/schemas/QueryBadRequest'}
        '401': AccountUnauthorized
        '403': InsufficientScope
        '429': TooManyStreams
        '500': InternalError
        '503': DatabaseUnavailable
    """
    account = auth.require_account(games(), "play").account.id
    resume = _last_event_id()
    live = hub()
    live.start()  # before the first read: no row committed after it goes unnoticed
    ticket = live.ticket(account_key(account))
    seen: set[int] = set()  # rows the opening below already tells
    with games().store.connection() as conn:
        start, seen = (resume, seen) if resume else account_feed.opening(conn, account)
    waiting = [] if resume is not None else _opening(games(), account)
    release = open_streams().admit(request.remote_addr or "")
    try:
        feed = _Feed(games(), live, account, start, ticket, seen)
        frames = feed.frames(
            waiting, StreamSettings.of(current_app.config), Hangup(stream_socket(request.environ))
        )
        response = Response(frames, mimetype="text/event-stream")
    except BaseException:
        release()
        raise
    response.call_on_close(release)
    response.headers["Cache-Control"] = "no-cache"
    response.headers["X-Accel-Buffering"] = "no"
    return response


def _last_event_id() -> Cursor | None:
    value = request.headers.get("Last-Event-ID", "").strip()
    if not value:
        return None
    try:
        return Cursor.decode(value)
    except ValueError:
        raise ValidationError(
            {"Last-Event-ID": ["not an id this stream sent: '<tx>-<id>'"]}
        ) from None


def _opening(service: GameService, account: str) -> list[dict[str, Any]]:
    """What a new stream starts with: the challenges still open (offered to the account or by
    it), then the turns waiting for it."""
    challenges = current_app.extensions["cardroom_challenges"].open_for(account)
    opened = [
        {"id": None, "type": CHALLENGE, **challenge.data()} for challenge in reversed(challenges)
    ]
    return opened + _turns_waiting(service, account)


def _turns_waiting(service: GameService, account: str) -> list[dict[str, Any]]:
    """``your_turn`` for every unfinished game of the account waiting for its seat now."""
    found = []
    for game_id in service.accounts.active_games(account, ACTIVE_GAMES):
        loaded = service.load(game_id)
        accounts = getattr(loaded.state, "accounts", ())
        if account not in accounts:
            continue  # a seat left since
        seat = accounts.index(account)
        if seat in autoplay.awaiting(loaded.adapter.game, loaded.state):
            where = loaded.adapter.position(loaded.state)
            found.append(
                {
                    "id": None,
                    "type": YOUR_TURN,
                    "game_id": str(game_id),
                    "game": loaded.adapter.game.name,
                    "seat": seat,
                    **where,
                }
            )
    return found


class _Feed:
    """One account's stream: reads its rows past ``cursor`` and sends each once."""

    def __init__(
        self,
        service: GameService,
        live: Hub,
        account: str,
        cursor: Cursor,
        ticket: tuple[int, int],
        seen: set[int] | None = None,
    ) -> None:
        self.service, self.live, self.account = service, live, account
        self.cursor, self.ticket = cursor, ticket
        # Rows sent past the cursor (not yet below xmin), or told by the stream's opening.
        self.sent: set[int] = set(seen or ())

    def frames(
        self, waiting: list[dict[str, Any]], s: StreamSettings, hangup: Hangup
    ) -> Iterator[str]:
        with metrics.OPEN_STREAMS.track_inprogress():
            yield f"retry: {s.retry_ms}\n\n"
            for item in waiting:
                yield self._frame(item)
            now = monotonic()
            deadline = now + s.lifetime * random.uniform(0.8, 1.0)
            quiet_until = now + s.heartbeat
            key, read = account_key(self.account), True
            while True:
                try:
                    text, more = self._read() if read else ("", False)
                except StoreUnavailable as exc:
                    log.warning("account stream of %s ends: %s", self.account, exc)
                    return
                if text:
                    yield text
                    quiet_until = monotonic() + s.heartbeat
                if more:
                    continue
                now = monotonic()
                if now >= deadline:
                    return
                if now >= quiet_until:
                    yield ": heartbeat\n\n"
                    quiet_until = now + s.heartbeat
                woken = self.live.wait_ticket(
                    key, self.ticket, min(deadline, quiet_until) - now, hangup
                )
                if self.live.stopped or hangup.gone:
                    return
                # A quiet wait with the hub listening all along missed nothing (the ticket holds
                # the epoch: a reconnection of the hub wakes it), so a heartbeat reads nothing:
                # 1,000 idle streams read 67 times a second otherwise (bench/account_streams.py).
                # The ticket is kept until the next read: a row after it wakes the next wait.
                read = woken or not self.live.listening
                if read:
                    self.ticket = self.live.ticket(key)  # before the read: later rows wake again

    def _read(self) -> tuple[str, bool]:
        """The frames of the rows not sent yet, and whether a full batch was read."""
        with self.service.store.connection() as conn:
            xmin, rows = account_feed.read(conn, self.account, self.cursor, BATCH)
        frames = []
        settled = True  # rows so far all below xmin: the cursor may move past them
        for row in rows:
            settled = settled and row.tx < xmin
            sent = row.id in self.sent
            if settled:
                self.cursor = Cursor(row.tx, row.id)
                self.sent.discard(row.id)
            elif not sent:
                self.sent.add(row.id)
            if not sent:
                frames.append(self._frame(_item(row)))
        return "".join(frames), len(rows) == BATCH and settled

    def _frame(self, item: dict[str, Any]) -> str:
        data = json.dumps(item, separators=(",", ":"), default=str)
        return f"id: {self.cursor.encode()}\nevent: {item['type']}\ndata: {data}\n\n"


def _item(row: Row) -> dict[str, Any]:
    game: dict[str, Any] = {} if row.game_id is None else {"game_id": str(row.game_id)}
    return {
        "id": row.id,
        "type": row.type,
        **game,
        **row.data,
        "at": row.created_at.isoformat(),
    }
