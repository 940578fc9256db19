"""The REST API's routes. Shapes are in openapi.yaml; every body goes through a schema."""

from __future__ import annotations

import logging
from typing import Any
from uuid import UUID

from flask import Blueprint, Response, current_app, json, request, send_file, url_for

from domain.audit import audit
from domain.decider import GAME_ENDED, Viewer
from service.http import auth
from service.http.problems import Problem
from service.http.schemas import (
    LONG_POLL_MAX_SECONDS,
    AuditReport,
    CreateGameRequest,
    EventPage,
    EventsQuery,
    ExportLine,
    GameList,
    GameQuery,
    Health,
    JoinRequest,
    ListGamesQuery,
    SeatGranted,
    StateQuery,
)
from service.live import hub as live
from service.play import GameService, Loaded, adapter_for
from service.store.events import GameCursor, GameNotFound, GameRow, StoredEvent, StoreUnavailable

api = Blueprint("api", __name__)
log = logging.getLogger(__name__)

# Schemas are built once, not per request: building (nested) schemas costs more than using them.
CREATE_GAME_REQUEST = CreateGameRequest()
LIST_GAMES_QUERY = ListGamesQuery()
GAME_LIST = GameList()
JOIN_REQUEST = JoinRequest()
SEAT_GRANTED = SeatGranted()
EVENTS_QUERY = EventsQuery()
EVENT_PAGE = EventPage()
EXPORT_LINE = ExportLine()
AUDIT_REPORT = AuditReport()
MAX_EVENTS = 100_000  # far more than any game has
STATE_QUERY = StateQuery()
HEALTH = Health()
GAME_QUERY = GameQuery()


def games() -> GameService:
    return current_app.extensions["cardroom"]


def hub() -> live.Hub:
    return current_app.extensions["cardroom_live"]


def json_response(body: Any, status: int = 200, **headers: str) -> Response:
    response = Response(json.dumps(body), status, mimetype="application/json")
    response.headers.update(headers)
    return response


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
        raise _no_game(value) from None


def _no_game(game_id: object) -> Problem:
    return Problem(404, "game_not_found", f"there is no game {game_id}; list games at /games")


def load(game_id: UUID) -> Loaded:
    try:
        return games().load(game_id)
    except GameNotFound:
        raise _no_game(game_id) from None


def view_body(loaded: Loaded, seat: int | None) -> dict[str, Any]:
    adapter = loaded.adapter
    view = adapter.game.view(loaded.state, Viewer(seat))
    return adapter.view.dump({"id": loaded.id, **view, **deadline_of(loaded)})


def deadline_of(loaded: Loaded, past: bool = False) -> dict[str, Any]:
    """``turn_deadline``, only while a timed turn waits for someone: the turn clock's deadline
    is in the database, not in the game's state (so not in the domain's view)."""
    deadline = games().turn_deadline(loaded, past)
    return {} if deadline is None else {"turn_deadline": deadline}


def game_url(game_id: UUID) -> str:
    return url_for("api.get_game", game_id=str(game_id))


# --- games ----------------------------------------------------------------------------------------


@api.post("/games")
def create_game() -> Response:
    body = CREATE_GAME_REQUEST.load(json_body())
    adapter = adapter_for(body["game"])
    options = {**adapter.rules.load(body["rules"]), "players": body["players"]}
    loaded = games().create(body["game"], options, body["bots"], body.get("turn_seconds"))
    return json_response(view_body(loaded, None), 201, Location=game_url(loaded.id))


@api.get("/games")
def list_games() -> Response:
    query = LIST_GAMES_QUERY.load(request.args.to_dict())
    after = None
    if "after" in query:
        try:
            after = GameCursor.decode(query["after"])
        except ValueError:
            raise Problem(
                400, "invalid_cursor", "'after' must be the 'next' value of a previous page"
            ) from None
    limit = query["limit"]
    rows = games().store.list_games(
        status=query.get("status"),
        game=query.get("game"),
        limit=limit + 1,
        after=after,
        order=query["order"],
        ids=_game_ids(query["ids"]) if "ids" in query else None,
    )
    page = rows[:limit]
    body = {
        "games": [game_summary(r) for r in page],
        "next": page[-1].cursor.encode() if len(rows) > limit else None,
    }
    return json_response(GAME_LIST.dump(body))


def _game_ids(text: str) -> list[UUID]:
    try:
        return [UUID(part) for part in text.split(",")]
    except ValueError:
        raise Problem(
            400, "invalid_request", "'ids' must be game ids (UUIDs) separated by commas"
        ) from None


def game_summary(row: GameRow) -> dict[str, Any]:
    """A lobby row: who sits where, free seats, whose move it is (from the public view of the
    game's state, which the service keeps folded for recent games)."""
    summary = {
        "id": row.id,
        "game": row.game,
        "status": row.status,
        "version": row.version or 0,
        "created_at": row.created_at,
        "url": game_url(row.id),
        "seats": [],
        "free_seats": 0,
        "waiting_for": [],
    }
    try:
        loaded = games().load(row.id)
        view = loaded.adapter.game.view(loaded.state, Viewer(None))
    except StoreUnavailable:
        raise
    except Exception:  # one game whose events do not fold must not take the list down
        log.exception("game %s cannot be folded; listed without its seats", row.id)
        return summary
    summary["seats"] = [
        {"seat": s["seat"], "name": s["name"], "bot": s["bot"]} for s in view["seats"]
    ]
    summary["free_seats"] = sum(1 for s in view["seats"] if not s["taken"] and not s["bot"])
    if view["status"] == "playing":
        summary["waiting_for"] = loaded.adapter.waiting_for(view)
    return summary


@api.get("/games/<game_id>")
def get_game(game_id: str) -> Response:
    gid = game_id_of(game_id)
    query = GAME_QUERY.load(request.args.to_dict())
    loaded = load(gid)
    seat = auth.optional_seat(games(), gid)
    if "wait_after" in query:  # a long poll
        seconds = query.get("wait_seconds", LONG_POLL_MAX_SECONDS)
        loaded = live.wait_past(hub(), gid, query["wait_after"], seconds, lambda: load(gid), loaded)
    # A seat and a spectator see different bodies at the same version: the tag names both.
    tag = f"{loaded.version}-{'spectator' if seat is None else f'seat{seat}'}"
    headers = {"ETag": f'W/"{tag}"', "Vary": "Authorization"}
    if request.if_none_match.contains_weak(tag):
        return Response(status=304, headers=headers)
    return json_response(view_body(loaded, seat), **headers)


@api.post("/games/<game_id>/players")
def join_game(game_id: str) -> Response:
    gid = game_id_of(game_id)
    body = JOIN_REQUEST.load(json_body())
    load(gid)
    token = auth.new_token()
    seat, loaded = games().join(gid, body["name"], auth.token_hash(token))
    granted = {
        "game_id": gid,
        "seat": seat,
        "name": body["name"],
        "token": token,
        "token_type": "Bearer",
        "started": games().started(loaded),  # bots may take the seats after this one
    }
    return json_response(SEAT_GRANTED.dump(granted), 201, Location=game_url(gid))


@api.post("/games/<game_id>/moves")
def make_move(game_id: str) -> Response:
    gid = game_id_of(game_id)
    loaded = load(gid)
    seat = auth.require_seat(games(), gid)
    body = loaded.adapter.move.load(json_body())
    if body["seat"] is not None and body["seat"] != seat:
        raise Problem(
            403,
            "not_your_seat",
            f"your token acts for seat {seat}, not seat {body['seat']}",
        )
    moved = games().move(gid, seat, body["move"], loaded)
    return json_response(view_body(moved, seat))


@api.get("/games/<game_id>/events")
def list_events(game_id: str) -> Response:
    gid = game_id_of(game_id)
    query = EVENTS_QUERY.load(request.args.to_dict())
    loaded = load(gid)
    seat = auth.optional_seat(games(), gid)
    events = games().visible_events(loaded, Viewer(seat), query["after"], query["limit"])
    more = bool(events) and events[-1]["version"] < loaded.version
    body = {
        "game_id": gid,
        "version": loaded.version,
        "events": events,
        "next_after": events[-1]["version"] if more else None,
    }
    return json_response(EVENT_PAGE.dump(body))


@api.get("/games/<game_id>/scores")
def scores(game_id: str) -> Response:
    gid = game_id_of(game_id)
    loaded = load(gid)
    sheet = loaded.adapter.game.score_sheet(loaded.state)
    body = {"game_id": gid, "version": loaded.version, **sheet}
    return json_response(loaded.adapter.score_sheet.dump(body))


# --- replay and export ---------------------------------------------------------------------------


@api.get("/games/<game_id>/state")
def state_at(game_id: str) -> Response:
    """The caller's view as it was after event ``version``: redacted as the live view is while
    the game goes on; once it is over, everything of every past state is public."""
    gid = game_id_of(game_id)
    query = STATE_QUERY.load(request.args.to_dict())
    loaded = load(gid)
    seat = auth.optional_seat(games(), gid)
    version = query.get("version", loaded.version)
    if version > loaded.version:
        raise Problem(
            404,
            "version_not_found",
            f"this game has {loaded.version} events so far; ask for a version from 1 to"
            f" {loaded.version}",
        )
    game = loaded.adapter.game
    past = games().state_at(loaded, version)
    view = game.view(past, Viewer(seat, everything=game.is_over(loaded.state)))
    then = deadline_of(Loaded(gid, loaded.adapter, past), past=True)
    return json_response(loaded.adapter.view.dump({"id": gid, **view, **then}))


@api.get("/games/<game_id>/export")
def export(game_id: str) -> Response:
    """The whole game as JSON Lines, as recorded: everything once it is over, redacted for the
    caller before (``cardroom audit`` verifies an export offline)."""
    gid = game_id_of(game_id)
    loaded = load(gid)
    seat = auth.optional_seat(games(), gid)
    game, viewer = loaded.adapter.game, Viewer(seat)
    over = game.is_over(loaded.state)
    lines = []
    for record in games().store.load_records(gid, 0, loaded.version):
        data = game.visible_event(loaded.state, record.event, viewer).data
        line = export_line(gid, record, data, record.hash if over else None)
        lines.append(json.dumps(EXPORT_LINE.dump(line)) + "\n")
    response = Response("".join(lines), mimetype="application/x-ndjson")
    response.headers["Content-Disposition"] = f'attachment; filename="{gid}.jsonl"'
    return response


def export_line(gid: UUID, record: StoredEvent, data: Any, digest: str | None) -> dict[str, Any]:
    return {
        "game_id": gid,
        "version": record.version,
        "type": record.type,
        "schema_version": record.schema_version,
        "data": data,
        "recorded_at": record.recorded_at,
        "hash": digest,
    }


@api.get("/games/<game_id>/audit")
def audit_game(game_id: str) -> Response:
    """The audit of a finished game, from its rows as they are now (no cached state): the hash
    chain, the seed against its commitment, every deal, and the whole game re-decided from its
    picks, with the provenance of every point. The same report as ``cardroom audit``."""
    gid = game_id_of(game_id)
    try:
        records = games().store.load_records(gid, 0, MAX_EVENTS)
    except GameNotFound:
        raise _no_game(gid) from None
    if not records or records[-1].type != GAME_ENDED:
        raise Problem(
            409,
            "game_not_over",
            "a game is audited once it is over (the seed is revealed by its last event);"
            " meanwhile its score sheet is at /scores",
        )
    lines = [EXPORT_LINE.dump(export_line(gid, r, r.data, r.hash)) for r in records]
    return json_response(AUDIT_REPORT.dump(audit(lines)))


# --- operations -----------------------------------------------------------------------------------


@api.get("/healthz")
def healthz() -> Response:
    games().store.ping()  # raises StoreUnavailable: 503 problem+json with Retry-After
    return json_response(HEALTH.dump({"status": "ok", "database": "ok"}))


@api.get("/openapi.yaml")
def openapi() -> Response:
    return send_file(current_app.config["OPENAPI_PATH"], mimetype="application/yaml")
