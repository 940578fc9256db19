"""What the routes share: the blueprint ``api``, the service and hub of the app, JSON in and out,
loading a game (404 if there is none), a game's view, and an accepted command's signed receipt."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qsl
from uuid import UUID

from flask import Blueprint, Response, current_app, json, request, url_for
from marshmallow import ValidationError

from domain import canonical, receipts
from domain.decider import Viewer
from domain.ratings import pool_of, seat_players
from service.http import idempotency
from service.http.connections import ConnectionSettings, OpenStreams
from service.http.dumping import planned
from service.http.json_provider import json_response
from service.http.problems import Problem
from service.http.schemas import Health, Receipt
from service.live import hub as live
from service.play import GameService, Loaded
from service.store import ratings
from service.store.events import GameNotFound
from service.store.recent import Recent

api = Blueprint("api", __name__)

# Schemas are built once, not per request: building (nested) schemas costs more than using them.
RECEIPT = Receipt()
RECEIPT_HEADER = "Cardroom-Receipt"
HEALTH = Health()
_VIEWS = "cardroom_views"  # the app's encoded views (view_json)
VIEWS_KEPT = 4096  # (game, version, viewer) triples; a 4-player view is about 2 KB


_NOT_UTF8 = re.compile("[\udc80-\udcff]")  # bytes that are no UTF-8, decoded surrogateescape


def text_args() -> dict[str, str]:
    """The query's parameters (the first of each name, as ``request.args.to_dict()``), every
    one UTF-8 text: else 400 ``invalid_request`` naming it. (``request.args`` keeps bytes that
    are no UTF-8 percent-encoded: ``game=%FF`` would filter by the text "%FF".)"""
    query = request.query_string.decode("utf-8", "surrogateescape")
    pairs = parse_qsl(query, keep_blank_values=True, errors="surrogateescape")
    bad = [name for name, value in pairs if _NOT_UTF8.search(name + value)]
    if bad:
        message = "is not UTF-8 text: percent-encode the value's UTF-8 bytes (%C3%A9 for é)"
        raise ValidationError({_shown(name): [message] for name in bad})
    args: dict[str, str] = {}
    for name, value in pairs:
        args.setdefault(name, value)
    return args


def _shown(name: str) -> str:
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def games() -> GameService:
    return current_app.extensions["cardroom"]


def hub() -> live.Hub:
    return current_app.extensions["cardroom_live"]


def open_streams() -> OpenStreams:
    return current_app.extensions["cardroom_open_streams"]


def connection_settings() -> ConnectionSettings:
    return current_app.extensions["cardroom_connections"]


def json_body() -> Any:
    """The request's JSON body: 415 unless it says it is JSON, 400 unless it parses."""
    if not request.is_json:
        raise Problem(
            415,
            "unsupported_media_type",
            "send the body as JSON with 'Content-Type: application/json'",
        )
    try:
        body = request.get_json(silent=True)
    except RecursionError:  # nesting too deep for the parser: not a body any schema accepts
        body = None
    if body is None:
        raise Problem(400, "malformed_json", "the body is not valid JSON")
    return body


def game_id_of(value: str) -> UUID:
    """Game ids are UUIDs; anything else names no game (404)."""
    try:
        return UUID(value)
    except ValueError:
        raise no_game(value) from None


def no_game(game_id: object) -> Problem:
    return Problem(404, "game_not_found", f"there is no game {game_id}; list games at /games")


def load(game_id: UUID) -> Loaded:
    try:
        return games().load(game_id)
    except GameNotFound:
        raise no_game(game_id) from None


def read(game_id: UUID, *seen: int) -> Loaded:
    """The game for a read a replica may serve: never older than any version in ``seen``, nor
    than ``min_version`` or an ``If-None-Match`` tag the client sent (service/play/)."""
    try:
        return games().read(game_id, max(seen, default=0))
    except GameNotFound:
        raise no_game(game_id) from None


_OUR_TAG = re.compile(r"([0-9]{1,10})-", re.ASCII)  # of get_game's tags: the version, then who


def seen_versions(query: dict[str, Any]) -> list[int]:
    """The versions the client says it has seen: ``min_version``, and the version of each
    ``If-None-Match`` tag of ours (``W/"<version>-<viewer>"``)."""
    seen = [query.get("min_version", 0)]
    for tag in request.if_none_match.as_set(include_weak=True):
        match = _OUR_TAG.match(tag or "")  # werkzeug gives None for an empty tag
        if match:
            seen.append(int(match.group(1)))
    return seen


def view_body(loaded: Loaded, seat: int | None, past: bool = False, **extra: Any) -> dict[str, Any]:
    adapter = loaded.adapter
    view = adapter.game.view(loaded.state, Viewer(seat))
    body = {"game_id": loaded.id, **view, **deadline_of(loaded, past), **visibility(loaded.id)}
    return planned(adapter.view)({**body, **rated_of(loaded), **extra})


def rated_of(loaded: Loaded) -> dict[str, Any]:
    """A rated game's ``rated`` and, once it is over, each rated seat's ``rating_changes``
    (issue 37); nothing for an unrated game (its view is what it always was)."""
    state = loaded.state
    if not getattr(state, "rated", False):
        return {}
    # The pool and each seat's account: the page shows the players' ratings at the table.
    body = {
        "rated": True,
        "rating_pool": pool_of(loaded.adapter.game.name, state.rules),
        "rated_accounts": seat_players(state),
    }
    if not loaded.adapter.game.is_over(state):
        return body
    changes = ratings.of_game(games().store, loaded.id)
    return {**body, "rating_changes": [seat_change(c) for c in changes.values()]}


def seat_change(row: ratings.HistoryRow) -> dict[str, Any]:
    return {
        "seat": row.seat,
        "account_id": row.account_id,
        "pool": row.pool,
        "rank": row.rank,
        "before": ratings.shown(row.before),
        "after": ratings.shown(row.after),
    }


def view_json(loaded: Loaded, seat: int | None) -> str:
    """``view_body`` of the game as it is now, encoded: built once per game, version and viewer
    in this process. It is the same every time (the state at a version, the deadline row of
    its turn and the game's visibility never change), and a seat polling a game that has not
    moved asks for it again and again."""
    cache: Recent[tuple[UUID, int, int | None], str] | None
    cache = current_app.extensions.get(_VIEWS)
    if cache is None:  # not setdefault(_VIEWS, Recent(...)): that built a cache every call
        cache = current_app.extensions.setdefault(_VIEWS, Recent(VIEWS_KEPT))
    key = (loaded.id, loaded.version, seat)
    encoded = cache.get(key)
    if encoded is None:
        encoded = json.dumps(view_body(loaded, seat))
        cache.put(key, encoded)
    return encoded


def visibility(game_id: UUID) -> dict[str, str]:
    return {"visibility": "private" if games().is_private(game_id) else "public"}


def as_it_was(keyed: idempotency.Keyed) -> Loaded:
    """The game a keyed request changed, at the version its receipt says it left it at: the
    answer to a retry is rebuilt from it (service/http/idempotency.py)."""
    stored = keyed.stored
    assert stored is not None
    loaded = load(stored.game_id)
    return Loaded(stored.game_id, loaded.adapter, games().state_at(loaded, stored.version))


def deadline_of(loaded: Loaded, past: bool = False) -> dict[str, Any]:
    """``turn_deadline``, only while a timed turn waits for someone: the turn clock's deadline
    is in the database, not in the game's state (so not in the domain's view)."""
    deadline = games().turn_deadline(loaded, past)
    return {} if deadline is None else {"turn_deadline": deadline}


def game_url(game_id: UUID) -> str:
    return url_for("api.get_game", game_id=str(game_id))


def with_receipt(body: dict[str, Any], loaded: Loaded, status: int, **headers: str) -> Response:
    """An accepted command's answer: ``body`` with the service's signed receipt for the last
    event it appended, as the ``receipt`` member and the ``Cardroom-Receipt`` header (base64url
    of its canonical JSON). Built here, it is stored and replayed with the answer (idempotency)."""
    receipt = planned(RECEIPT)(games().receipt(loaded))
    headers[RECEIPT_HEADER] = receipts.b64url(canonical.dumps(receipt))
    return json_response({**body, "receipt": receipt}, status, **headers)


def invitation_body(game_id: UUID, token: str, creator_token: str | None = None) -> dict[str, Any]:
    body = {"token": token, "link": f"/#/game/{game_id}?invitation={token}"}
    return body if creator_token is None else {**body, "creator_token": creator_token}


class KeptAnswer:
    """A created resource's answer, encoded once in the transaction that creates it and kept
    there for the keyed request's retries (idempotency.record_answer)."""

    def __init__(
        self, keyed: idempotency.Keyed | None, status: int, location: str | None = None
    ) -> None:
        self.keyed, self.status, self.location = keyed, status, location
        self.text = ""

    def keep(self, cur: Any, body: dict[str, Any]) -> None:
        self.text = json.dumps(body)
        idempotency.record_answer(cur, self.keyed, self.status, self.text.encode(), self.location)

    def response(self) -> Response:
        headers = {} if self.location is None else {"Location": self.location}
        return json_response(self.text, self.status, **headers)


def check_rated(body: dict[str, Any]) -> None:
    """A rated game is public (issue 37): anyone must be able to recompute its players' ratings
    from its export. ``body``: a ``POST /games``-like request, loaded."""
    if body["rated"] and body.get("visibility") == "private":
        raise Problem(
            422,
            "invalid_rated",
            "a rated game is public: anyone can recompute its players' ratings from its export;"
            " leave out visibility (or rated)",
        )
