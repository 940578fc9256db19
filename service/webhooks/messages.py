"""The messages an endpoint is owed, read from the log past its checkpoint.

A per-game endpoint's messages are what service/play/feed.py's ``moments`` tell of each append
(one transaction's events, ``events.tx``) past ``done_version``: the same logic that writes the
account feed, so the two never disagree. A seat's endpoint hears of the game's start and end,
and of the turns that wait for its seat ("your turn"); the private game's creator hears of
every turn, with the seats it waits for. Then the finished game's rematch. An account's
endpoint's messages are its ``account_feed`` rows past its cursor, below the oldest
transaction still running. Event types share the feed's items' meaning under Standard Webhooks
names (:data:`FROM_FEED`).

Everything here is deterministic: a message read again (a retry, another deliverer after a
crash) has the same ``webhook-id`` and the same body. Bodies are thin (the game, its version,
where to read more): nothing shows a hand or a pick.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

import psycopg

from domain.decider import Event
from service.play import adapter_for
from service.play.feed import moments
from service.store import account_feed
from service.store.account_feed import Cursor
from service.store.recent import Recent
from service.store.webhooks import Checkpoint, Endpoint

FROM_FEED = {
    account_feed.GAME_STARTED: "game.started",
    account_feed.YOUR_TURN: "game.turn",
    account_feed.GAME_FINISHED: "game.finished",
    account_feed.REMATCH: "game.rematch",
    account_feed.CHALLENGE: "challenge.received",
    account_feed.CHALLENGE_ANSWERED: "challenge.answered",
}
GAME_TYPES = ("game.started", "game.turn", "game.finished", "game.rematch")
ACCOUNT_TYPES = (*GAME_TYPES, "challenge.received", "challenge.answered")
VERIFY = "webhook.verify"
FEED_BATCH = 100  # account feed rows read at once


@dataclass(frozen=True)
class Message:
    msg_id: str  # the webhook-id: the same on every attempt
    type: str
    game_id: UUID | None
    version: int | None
    body: bytes


@dataclass(frozen=True)
class Step:
    """The next thing owed: a message (None: nothing to send, the checkpoint just moves past
    what the endpoint does not hear of), and the checkpoint once it is delivered or given up."""

    message: Message | None
    after: Checkpoint


def msg_id(endpoint_id: UUID, key: str) -> str:
    """Deterministic per endpoint and message."""
    return "msg_" + uuid.uuid5(endpoint_id, key).hex


def body(type_: str, at: datetime, data: dict[str, Any]) -> bytes:
    """The Standard Webhooks payload shape: ``type``, ``timestamp`` (when it happened), ``data``."""
    payload = {"type": type_, "timestamp": at.isoformat(), "data": data}
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()


def links(game_id: UUID | str) -> dict[str, str]:
    return {"game": f"/games/{game_id}", "events": f"/games/{game_id}/events"}


def steps(
    conn: psycopg.Connection[Any], endpoint: Endpoint, states: States | None = None
) -> list[Step]:
    """What ``endpoint`` is owed past its checkpoint, in order (``states``: game states kept
    between calls, so that only what came since is folded)."""
    if endpoint.game_id is not None:
        return list(_game_steps(conn, endpoint, endpoint.game_id, states))
    return _account_steps(conn, endpoint)


# --- a game's endpoint -----------------------------------------------------------------------

EVENTS = (
    "SELECT g.game, e.version, e.type, e.data, e.schema_version, e.recorded_at, e.tx::text,"
    " (SELECT hash FROM events h WHERE h.game_id = g.id AND h.version = %(from)s), e.hash"
    " FROM games g LEFT JOIN events e ON e.game_id = g.id AND e.version > %(from)s"
    " WHERE g.id = %(game)s ORDER BY e.version"
)
REMATCH = "SELECT rematch_id, proposed_by, created_at FROM rematches WHERE game_id = %s"
# A game's state after a version, by (game, version, that version's hash): a deliverer folds
# only what came since its last look (the hash: a database that lost commits and took others
# at the same versions is not believed).
States = Recent[tuple[UUID, int, str], Any]


def _batches(rows: Sequence[Any]) -> Iterator[list[Any]]:
    """The rows of each append (one transaction's events; old rows without ``tx``: alone)."""
    batch: list[Any] = []
    for row in rows:
        if batch and (row[6] is None or row[6] != batch[-1][6]):
            yield batch
            batch = []
        batch.append(row)
    if batch:
        yield batch


def _start(
    conn: psycopg.Connection[Any], game_id: UUID, done: int, states: States | None
) -> tuple[Any, Any, list[Any]]:
    """The game's adapter, its state at ``done`` and the rows of its events after it."""
    known = None
    if states is not None and done > 0:
        head = conn.execute(EVENTS, {"game": game_id, "from": done}).fetchall()
        known = states.get((game_id, done, head[0][7])) if head[0][7] is not None else None
        if known is not None:
            return adapter_for(head[0][0]), known, [row for row in head if row[1] is not None]
    rows = conn.execute(EVENTS, {"game": game_id, "from": 0}).fetchall()
    adapter = adapter_for(rows[0][0])
    state = adapter.game.initial_state()
    events = [row for row in rows if row[1] is not None]
    for row in events:
        if row[1] > done:
            break
        state = adapter.game.evolve(state, Event(row[2], row[3], row[4]))
    return adapter, state, [row for row in events if row[1] > done]


def _game_steps(
    conn: psycopg.Connection[Any], endpoint: Endpoint, game_id: UUID, states: States | None
) -> Iterator[Step]:
    adapter, state, rows = _start(conn, game_id, endpoint.done_version, states)
    game = adapter.game
    done, skip = endpoint.done_version, endpoint.done_count
    for batch in _batches(rows):
        before = state
        appended = [Event(row[2], row[3], row[4]) for row in batch]
        for event in appended:
            state = game.evolve(state, event)
        if states is not None:
            states.put((game_id, state.version, batch[-1][8]), state)
        told = _told(endpoint, game_id, moments(adapter, before, state, appended), batch[-1][5])
        for index, (type_, data, at) in enumerate(told):
            last = index == len(told) - 1
            after = Checkpoint(state.version if last else done, 0 if last else index + 1)
            if index < skip:
                continue  # delivered already (the batch was left part way)
            key = f"{state.version}:{index}"
            message = Message(msg_id(endpoint.id, key), type_, game_id, state.version,
                              body(type_, at, data))  # fmt: skip
            yield Step(message if type_ in endpoint.events else None, after)
        if not told:
            yield Step(None, Checkpoint(state.version, 0))
        done, skip = state.version, 0
    if endpoint.rematch_done:
        return
    rematch = conn.execute(REMATCH, (game_id,)).fetchone()
    if rematch is not None:
        data = {
            "game_id": str(game_id),
            "game": game.name,
            "version": done,
            "rematch_id": str(rematch[0]),
            "proposed_by": rematch[1],
            "links": {**links(game_id), "rematch": f"/games/{game_id}/rematch"},
        }
        message = Message(msg_id(endpoint.id, f"{done}:rematch"), "game.rematch", game_id, done,
                          body("game.rematch", rematch[2], data))  # fmt: skip
        keep = message if "game.rematch" in endpoint.events else None
        yield Step(keep, Checkpoint(done, 0, rematch_done=True))


def _told(
    endpoint: Endpoint, game_id: UUID, found: Sequence[Any], at: datetime
) -> list[tuple[str, dict[str, Any], datetime]]:
    """What of ``found`` (feed.Moment) this endpoint hears: (type, data, when)."""
    told: list[tuple[str, dict[str, Any], datetime]] = []
    for moment in found:
        type_ = FROM_FEED[moment.type]
        data: dict[str, Any] = {"game_id": str(game_id), **moment.data}
        if moment.type == account_feed.YOUR_TURN:
            if endpoint.seat is None:
                data["seats"] = list(moment.seats)  # the creator: every turn, whose it is
            elif endpoint.seat in moment.seats:
                data.update(seat=endpoint.seat, your_turn=True)
            else:
                continue  # another seat's turn: not this seat's business
        elif endpoint.seat is not None:
            data["seat"] = endpoint.seat
        told.append((type_, {**data, "links": links(game_id)}, at))
    return told


# --- an account's endpoint -------------------------------------------------------------------


def _account_steps(conn: psycopg.Connection[Any], endpoint: Endpoint) -> list[Step]:
    assert endpoint.account_id is not None and endpoint.feed_tx is not None
    after = Cursor(int(endpoint.feed_tx), int(endpoint.feed_id or 0))
    xmin, rows = account_feed.read(conn, endpoint.account_id, after, FEED_BATCH)
    found: list[Step] = []
    for row in rows:
        if row.tx >= xmin:
            break  # a row of a transaction below it may still commit: not past it yet
        point = Checkpoint(feed_tx=str(row.tx), feed_id=row.id)
        type_ = FROM_FEED.get(row.type)
        if type_ is None or type_ not in endpoint.events:
            found.append(Step(None, point))
            continue
        data: dict[str, Any] = {"account_id": endpoint.account_id, **row.data}
        if row.game_id is not None:
            data = {"game_id": str(row.game_id), **data, "links": links(row.game_id)}
        if "challenge_id" in data:
            data.setdefault("links", {})["challenge"] = f"/challenges/{data['challenge_id']}"
        version = data.get("version") if isinstance(data.get("version"), int) else None
        key = f"feed:{row.tx}-{row.id}"
        message = Message(msg_id(endpoint.id, key), type_, row.game_id, version,
                          body(type_, row.created_at, data))  # fmt: skip
        found.append(Step(message, point))
    return found
