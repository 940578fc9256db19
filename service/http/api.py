"""The REST API's routes. Shapes are in openapi.yaml; every body goes through a schema."""

from __future__ import annotations

import logging
import re
from typing import Any
from uuid import UUID

from flask import Blueprint, Response, current_app, json, request, send_file, url_for
from marshmallow import ValidationError

from domain import canonical, receipts
from domain.audit import audit
from domain.decider import FINAL_EVENTS, Viewer
from service import metrics
from service.http import abuse, auth, idempotency
from service.http.connections import ConnectionSettings, OpenStreams
from service.http.dumping import planned
from service.http.hangup import Hangup
from service.http.problems import Problem
from service.http.schemas import (
    LONG_POLL_MAX_SECONDS,
    AuditReport,
    AuditRequest,
    CreateGameRequest,
    EventPage,
    EventsQuery,
    ExportLine,
    GameList,
    GameQuery,
    Health,
    JoinRequest,
    Jwks,
    ListGamesQuery,
    NewInvitation,
    ReadQuery,
    Receipt,
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
NEW_INVITATION = NewInvitation()
SEAT_GRANTED = SeatGranted()
EVENTS_QUERY = EventsQuery()
EVENT_PAGE = EventPage()
EXPORT_LINE = ExportLine()
AUDIT_REPORT = AuditReport()
MAX_EVENTS = 100_000  # far more than any game has
STATE_QUERY = StateQuery()
HEALTH = Health()
GAME_QUERY = GameQuery()
RECEIPT = Receipt()
AUDIT_REQUEST = AuditRequest()
JWKS = Jwks()
RECEIPT_HEADER = "Cardroom-Receipt"
READ_QUERY = ReadQuery()


def games() -> GameService:
    return current_app.extensions["cardroom"]


def hub() -> live.Hub:
    return current_app.extensions["cardroom_live"]


def open_streams() -> OpenStreams:
    return current_app.extensions["cardroom_open_streams"]


def connection_settings() -> ConnectionSettings:
    return current_app.extensions["cardroom_connections"]


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


def read(game_id: UUID, *seen: int) -> Loaded:
    """The game for a read a replica may serve: never older than any version in ``seen``, nor
    than ``min_version`` or an ``If-None-Match`` tag the client sent (service/play.py)."""
    try:
        return games().read(game_id, max(seen, default=0))
    except GameNotFound:
        raise _no_game(game_id) from None


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
    return planned(adapter.view)({**body, **extra})


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


# --- games ----------------------------------------------------------------------------------------


@api.post("/games")
def create_game() -> Response:
    """
    ---
    post:
      tags:
      - games
      operationId: createGame
      parameters:
      - IdempotencyKey
      summary: Create a game
      description: |
        Creates a game with the given rules; nobody is seated yet (status `waiting`). The
        answer is the spectator's view of the new game. The game's secret 32-byte seed is
        drawn now; only its SHA-256 (`seed_commitment`) is published until the game ends (S18).

        **Bots.** `bots` reserves seats for the service's built-in bots (`random`: a legal pick
        at random, its numbers derived from the game's secret seed; `greedy`: the pick worth
        the most points now). A bot takes its seat as soon as every seat before it is taken
        (at once if it comes first), and moves as soon as a turn needs it, in the same append
        as the move or join that led there: its picks are ordinary `card_picked` events with
        `by: bot`. If bots take every seat, the game is played to its end before this answer.

        **Turn clock.** With `turn_seconds`, every turn has a deadline (`turn_deadline` in the
        view); when it passes, the `greedy` bot picks for each seat that has not, marked
        `by: clock` (a few seconds late at most: the service checks every second).

        **Private games.** With `visibility: private` the game is not listed by `GET /games`
        (only by id: `GET /games?ids=`, `GET /games/{id}`; whoever has the id may watch, as
        with any game) and taking a seat needs its invitation. This answer's `invitation` holds
        the invitation (`token`, and `link`: the web page's link to share) and the creator's
        `creator_token`, **shown only here** (a retry with the same `Idempotency-Key` shows them
        again); the creator token revokes the invitation or issues a new one
        (`/games/{id}/invitation`). Only their SHA-256 hashes are stored, never in the events:
        an export or an audit of a private game shows nothing of them.
      security: []
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: '#/components/schemas/CreateGameRequest'}
            examples:
              fourPlayers:
                summary: A 4-player game, Gamewright edition
                value:
                  game: sushi-go
                  players: 4
              dummy:
                summary: The 2-player dummy variant (S17)
                value:
                  game: sushi-go
                  players: 2
                  rules:
                    dummy: true
              zoch:
                summary: Zoch edition, alternating pass direction
                value:
                  game: sushi-go
                  players: 5
                  rules:
                    edition: zoch
                    pass_direction: alternate
              private:
                summary: A private 3-player game (join with its invitation)
                value:
                  game: sushi-go
                  players: 3
                  visibility: private
              sequence:
                summary: Sequence, 6 players in 3 teams of 2 (Q4)
                value:
                  game: sequence
                  players: 6
                  rules:
                    teams: 3
              bots:
                summary: One person against three bots, 30 seconds per turn
                value:
                  game: sushi-go
                  players: 4
                  bots:
                  - seat: 1
                    kind: greedy
                  - seat: 2
                    kind: random
                    name: Rita
                  - seat: 3
                    kind: greedy
                  turn_seconds: 30
      responses:
        '201':
          description: The game was created. Its spectator's view.
          headers:
            Location:
              $ref: '#/components/headers/GameLocation'
            Idempotent-Replayed:
              $ref: '#/components/headers/IdempotentReplayed'
            Cardroom-Receipt:
              $ref: '#/components/headers/Receipt'
          content:
            application/json:
              schema: {$ref: '#/components/schemas/GameView'}
          links:
            JoinGame:
              operationId: joinGame
              parameters:
                game_id: $response.body#/id
            GetGame:
              operationId: getGame
              parameters:
                game_id: $response.body#/id
        '400': BadBody
        '413': BodyTooLarge
        '415': UnsupportedMediaType
        '422':
          description: |
            The request is well-formed but cannot be honoured:

            - `unknown_game`: `game` names no game this service hosts;
            - `invalid_rules`: the rules do not fit together, e.g. the `zoch` edition with 2
              players (it is for 3–5), `gamewright` with 1 or 6+ players (2–5), or
              `dummy: true` with anything but a 2-player `gamewright` game (S17).
            - `invalid_bots`: a bot's seat does not exist or has two bots, its `kind` is not
              one of the game's bots (`random`, `greedy`), or two bots' names look alike.
            - `invalid_name`: a bot's `name` is not a name (`details.reason` says why: see
              `JoinRequest.name`).
            - `idempotency_key_reused`: this `Idempotency-Key` came with another request.
          content:
            application/problem+json:
              schema: {$ref: '#/components/schemas/CreateGameUnprocessable'}
        '409': IdempotencyKeyInUse
        '429': RateLimited
        '500': InternalError
        '503': DatabaseUnavailable
    """
    keyed = idempotency.begin()
    if keyed is not None and keyed.stored is not None:
        past = as_it_was(keyed)
        return idempotency.replayed(created(past, past=True, tokens=kept_tokens(keyed)))
    body = CREATE_GAME_REQUEST.load(json_body())
    adapter = adapter_for(body["game"])
    options = {**adapter.rules.load(body["rules"]), "players": body["players"]}
    # A private game's invitation and creator token: kept (sealed) with a keyed request.
    tokens = (auth.new_token(), auth.new_token()) if body["visibility"] == "private" else None
    kept = None if tokens is None else " ".join(tokens)
    record = None if keyed is None else keyed.record(secret=kept)
    hashes = None if tokens is None else (auth.token_hash(tokens[1]), auth.token_hash(tokens[0]))
    turn_seconds = body.get("turn_seconds")
    loaded = games().create(
        body["game"], options, body["bots"], turn_seconds, record=record, private=hashes
    )
    return created(loaded, tokens=tokens)


def created(loaded: Loaded, past: bool = False, tokens: tuple[str, str] | None = None) -> Response:
    """The answer to a create: the new game's spectator view, with the invitation and the
    creator's token of a private game (``tokens``), shown only in this answer."""
    extra = {} if tokens is None else {"invitation": invitation_body(loaded.id, *tokens)}
    body = view_body(loaded, None, past, **extra)
    return with_receipt(body, loaded, 201, Location=game_url(loaded.id))


def invitation_body(game_id: UUID, token: str, creator_token: str | None = None) -> dict[str, Any]:
    body = {"token": token, "link": f"/#/game/{game_id}?invitation={token}"}
    return body if creator_token is None else {**body, "creator_token": creator_token}


def kept_tokens(keyed: idempotency.Keyed) -> tuple[str, str] | None:
    """A private game's invitation and creator token, as its keyed create kept them (sealed)."""
    kept = keyed.stored_secret()
    if kept is None:
        return None
    invitation, creator = kept.split(" ")
    return invitation, creator


@api.get("/games")
def list_games() -> Response:
    r"""
    ---
    get:
      tags:
      - games
      operationId: listGames
      parameters:
      - in: query
        schema: ListGamesQuery
      summary: List games
      description: |
        Games, oldest first (newest first with `order=newest`), optionally filtered by status
        and game; keyset-paginated: pass the `next_after` value of a page as `after`, with the
        same `order`, to get the following page (`next_after` is null on the last page). No
        authentication; a listing reveals nothing secret. Private games are listed only when
        asked for by id (`ids`): whoever has a game's id may look at it anyway.
      security: []
      responses:
        '200':
          description: One page of games.
          content:
            application/json:
              schema: {$ref: '#/components/schemas/GameList'}
        '400':
          description: |
            - `invalid_request`: an unknown query parameter, or one out of range (see `errors`);
            - `invalid_cursor`: `after` is not the `next_after` value of a previous page.
          content:
            application/problem+json:
              schema: {$ref: '#/components/schemas/ListGamesBadRequest'}
        '500': InternalError
        '503': DatabaseUnavailable
    """
    query = LIST_GAMES_QUERY.load(request.args.to_dict())
    after = None
    if "after" in query:
        try:
            after = GameCursor.decode(query["after"])
        except ValueError:
            raise Problem(
                400, "invalid_cursor", "'after' must be the 'next_after' value of a previous page"
            ) from None
    limit = query["limit"]
    rows = games().lobby(
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
        "next_after": page[-1].cursor.encode() if len(rows) > limit else None,
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
        "game_id": row.id,
        "game": row.game,
        "status": row.status,
        "version": row.version or 0,
        "created_at": row.created_at,
        "url": game_url(row.id),
        "visibility": "private" if row.private else "public",
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
    free = [s for s in view["seats"] if not s["taken"] and not s["bot"]]
    summary["free_seats"] = len(free) if view["status"] == "waiting" else 0
    if view["status"] == "playing":
        summary["waiting_for"] = loaded.adapter.waiting_for(view)
    return summary


@api.get("/games/<game_id>")
def get_game(game_id: str) -> Response:
    """
    ---
    get:
      tags:
      - games
      operationId: getGame
      parameters:
      - GameId
      - in: query
        schema: GameQuery
      - name: If-None-Match
        in: header
        description: An `ETag` of this resource; `304` if the view would be the same.
        schema:
          type: string
      summary: View a game
      description: |
        The game as the caller may see it. Without a token: the spectator's view (public
        information only). With a seat's token: the same plus `you` (that seat's own hand and
        its own unrevealed pick) once the game has started. Nobody sees another seat's hand, an
        unrevealed pick of another seat, the draw pile, the dummy's pile or the seed before the
        game is over; after it, everything is public (`seats[].hand`, `winners`, `totals`,
        `seed`).

        **Polling cheaply.** The answer carries an `ETag` (weak: the game's version and who is
        looking, since a seat and a spectator see different bodies); send it back in
        `If-None-Match` and the answer is `304 Not Modified`, without a body, until the view
        changes.

        **Long poll.** With `wait_after=N` the answer waits until the game's `version` is past
        `N` (it returns at once if it already is), or for `wait_seconds` (default and at most
        30); then it answers as usual: the view, changed or not (or `304` if it matches
        `If-None-Match`). Pass the `version` of the view you have. For every event as it
        happens, see `GET /games/{game_id}/stream`.
      security:
      - {}
      - bearerAuth: []
      responses:
        '200':
          description: The caller's view of the game.
          headers:
            ETag:
              $ref: '#/components/headers/ViewETag'
          content:
            application/json:
              schema: {$ref: '#/components/schemas/GameView'}
        '304':
          description: |
            The view is the one tagged by `If-None-Match`: keep yours. No body.
          headers:
            ETag:
              $ref: '#/components/headers/ViewETag'
        '400': InvalidQuery
        '401': BadToken
        '403': OtherGameToken
        '404': GameNotFound
        '429': TooManyStreams
        '500': InternalError
        '503': DatabaseUnavailable
    """
    gid = game_id_of(game_id)
    query = GAME_QUERY.load(request.args.to_dict())
    after = query.get("wait_after")
    loaded = read(gid, *seen_versions(query), after or 0)
    seat = auth.optional_seat(games(), gid)
    if after is not None and loaded.version <= after:  # a long poll waits
        # once woken, the answer must be past ``after`` (a standby may not have it yet)
        seconds = query.get("wait_seconds", LONG_POLL_MAX_SECONDS)
        release = open_streams().admit(request.remote_addr or "")
        try:
            gone = Hangup(request.environ.get("gunicorn.socket"))
            reload = lambda: read(gid, after + 1)  # noqa: E731
            with metrics.LONG_POLLS.track_inprogress():
                loaded = live.wait_past(hub(), gid, after, seconds, reload, loaded, gone)
        finally:
            release()
    # A seat and a spectator see different bodies at the same version: the tag names both.
    tag = f"{loaded.version}-{'spectator' if seat is None else f'seat{seat}'}"
    headers = {"ETag": f'W/"{tag}"', "Vary": "Authorization"}
    if request.if_none_match.contains_weak(tag):
        return Response(status=304, headers=headers)
    return json_response(view_body(loaded, seat), 200, **headers)


@api.post("/games/<game_id>/players")
def join_game(game_id: str) -> Response:
    """
    ---
    post:
      tags:
      - play
      operationId: joinGame
      parameters:
      - GameId
      - IdempotencyKey
      summary: Take a seat
      description: |
        Takes the first free seat (seats are numbered from 0 in joining order; a seat left
        before the start is free again) under `name`.
        The answer holds the seat's bearer token: **it is shown only once** and cannot be
        recovered (the service stores only its hash); send it as
        `Authorization: Bearer <token>` to view the game as this seat and to make its moves.
        Taking the last seat starts the game and deals the first round (`started: true`).
        Seats reserved for bots are never yours: a bot takes its seat right after the seat
        before it, so taking the last free seat for a person may start the game too.

        **Names.** The name is NFC-normalised and stripped of surrounding spaces (the answer's
        `name` is the name as recorded), then must have 1–32 visible characters and no
        control, format (direction overrides, zero-width spaces), line/paragraph separator or
        invisible characters (`422 invalid_name`; `details.reason` is one of `control`,
        `format`, `separator`, `invisible`, `not_text`, `too_many_marks`, `blank`,
        `too_long`). A name that looks like another seat's (bots' included) once case, width
        and compatibility forms are folded and a few look-alike letters (Cyrillic `а`, Greek
        `ο`, `0` for `o`, `1` for `l`) are mapped is `409 name_taken` (`details.seat`).

        **Private games** need `invitation`: the invitation from the answer that created the
        game (`403 invitation_required` without it, `invalid_invitation` for another one or a
        revoked one).

        **Limits.** Per address: joins per minute across games and into one game
        (`429 rate_limited`), and seats in at most 10 games that have not started
        (`409 too_many_waiting_games`); see the README's settings.
      security: []
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: '#/components/schemas/JoinRequest'}
            examples:
              public:
                summary: A public game
                value:
                  name: Ada
              private:
                summary: A private game, with its invitation
                value:
                  name: Ada
                  invitation: 3Hh0-qk1lQdVtq0pB8Rr3s9Xn2Vh6cWmZ1o5aYbKe7U
      responses:
        '201':
          description: The seat is yours. Keep the token.
          headers:
            Location:
              $ref: '#/components/headers/GameLocation'
            Idempotent-Replayed:
              $ref: '#/components/headers/IdempotentReplayed'
            Cardroom-Receipt:
              $ref: '#/components/headers/Receipt'
          content:
            application/json:
              schema: {$ref: '#/components/schemas/SeatGranted'}
          links:
            MakeMove:
              description: The new seat's move, with its token.
              operationId: makeMove
              parameters:
                game_id: $response.body#/game_id
                header.Authorization: Bearer {$response.body#/token}
            GetGameAsSeat:
              operationId: getGame
              parameters:
                game_id: $response.body#/game_id
                header.Authorization: Bearer {$response.body#/token}
        '400': BadBody
        '404': GameNotFound
        '403':
          description: |
            - `invitation_required`: the game is private and the body has no `invitation`;
            - `invalid_invitation`: not the game's invitation, or its creator revoked it.
          content:
            application/problem+json:
              schema: {$ref: '#/components/schemas/JoinForbidden'}
        '409':
          description: |
            - `game_full`: every seat is taken (the game has started or is over);
            - `name_taken`: another seat's name looks the same as this one (`details.seat`);
            - `too_many_waiting_games`: your address holds seats in as many games that have
              not started as it may (`CARDROOM_WAITING_GAMES_PER_ADDRESS`, default 10);
            - `game_cancelled`: the game was cancelled, its seats did not fill in time
              (`CARDROOM_FILL_SECONDS`); create or join another;
            - `too_many_conflicts`: the game changed under this request too many times in a
              row (heavy contention); send it again after `Retry-After` seconds.
            - `idempotency_key_in_use`: a request with this `Idempotency-Key` is still
              running; send it again after `Retry-After` seconds.
          headers:
            Retry-After:
              $ref: '#/components/headers/RetryAfter'
          content:
            application/problem+json:
              schema: {$ref: '#/components/schemas/JoinConflict'}
        '422':
          description: |
            - `invalid_name`: `name` is not a name; `details.reason` says why (see above);
            - `idempotency_key_reused`: this `Idempotency-Key` came with another request.
          content:
            application/problem+json:
              schema: {$ref: '#/components/schemas/JoinUnprocessable'}
        '413': BodyTooLarge
        '415': UnsupportedMediaType
        '429': RateLimited
        '500': InternalError
        '503': DatabaseUnavailable
    """
    gid = game_id_of(game_id)
    body = JOIN_REQUEST.load(json_body())
    load(gid)
    keyed = idempotency.begin()
    if keyed is not None and keyed.stored is not None:
        return idempotency.replayed(rejoined(gid, keyed))
    invitation = auth.check_invitation(games(), gid, body.get("invitation"))
    token = auth.new_token()
    record = None if keyed is None else keyed.record(secret=token)
    client = games().keys.client_hash(request.remote_addr or "")
    seat, loaded = games().join(
        gid,
        body["name"],
        auth.token_hash(token),
        record,
        client,
        abuse.waiting_games_limit(),
        invitation=invitation,
    )
    return seat_granted(gid, seat, token, loaded)


def rejoined(gid: UUID, keyed: idempotency.Keyed) -> Response:
    """A join's first answer again: its token was kept, sealed under the key, with its receipt."""
    token = keyed.stored_secret()
    assert token is not None
    seat = games().store.seat_for_token(gid, auth.token_hash(token))
    assert seat is not None  # the receipt was written with the seat's row
    return seat_granted(gid, seat, token, as_it_was(keyed))


def seat_granted(gid: UUID, seat: int, token: str, loaded: Loaded) -> Response:
    granted = {
        "game_id": gid,
        "seat": seat,
        "name": loaded.state.names[seat],  # as the rules recorded it (domain/names.py)
        "token": token,
        "token_type": "Bearer",
        "started": games().started(loaded),  # bots may take the seats after this one
    }
    return with_receipt(SEAT_GRANTED.dump(granted), loaded, 201, Location=game_url(gid))


@api.delete("/games/<game_id>/invitation")
def revoke_invitation(game_id: str) -> Response:
    """
    ---
    delete:
      tags:
      - games
      operationId: revokeInvitation
      parameters:
      - GameId
      summary: Revoke a private game's invitation
      description: |
        With the creator token (`Authorization: Bearer <creator_token>`, from the answer that
        created the private game), the invitation stops working: joining with it is refused
        with `403 invalid_invitation`. Seats already taken stay taken. Revoking a revoked
        invitation changes nothing. `POST` issues a new one.
      security:
      - bearerAuth: []
      responses:
        '204':
          description: The invitation no longer works.
        '401': CreatorUnauthorized
        '403': NotTheCreator
        '404': GameNotFound
        '409': GameNotPrivate
        '500': InternalError
        '503': DatabaseUnavailable
    """
    gid = game_id_of(game_id)
    load(gid)
    private = auth.require_creator(games(), gid)
    if private.invitation_hash is not None:  # revoking a revoked invitation changes nothing
        games().invitations.change(gid, None)
    return Response(status=204)


@api.post("/games/<game_id>/invitation")
def new_invitation(game_id: str) -> Response:
    """
    ---
    post:
      tags:
      - games
      operationId: newInvitation
      parameters:
      - GameId
      - IdempotencyKey
      summary: Issue a new invitation to a private game
      description: |
        With the creator token (`Authorization: Bearer <creator_token>`), a new invitation
        replaces the one in force (or a revoked one): the old one stops working. It is shown
        only in this answer (and to a retry with the same `Idempotency-Key`); the service keeps
        its hash.
      security:
      - bearerAuth: []
      responses:
        '201':
          description: The new invitation.
          headers:
            Idempotent-Replayed:
              $ref: '#/components/headers/IdempotentReplayed'
          content:
            application/json:
              schema: {$ref: '#/components/schemas/NewInvitation'}
        '401': CreatorUnauthorized
        '403': NotTheCreator
        '404': GameNotFound
        '409': GameNotPrivate
        '500': InternalError
        '503': DatabaseUnavailable
    """
    gid = game_id_of(game_id)
    loaded = load(gid)
    auth.require_creator(games(), gid)
    keyed = idempotency.begin()  # after authentication: a key is looked up for its client only
    if keyed is not None and keyed.stored is not None:
        token = keyed.stored_secret()
        assert token is not None
        return idempotency.replayed(invitation_issued(gid, token))
    token = auth.new_token()
    record = None if keyed is None else (keyed.record(secret=token), loaded.version)
    games().invitations.change(gid, auth.token_hash(token), record)
    return invitation_issued(gid, token)


def invitation_issued(gid: UUID, token: str) -> Response:
    body = {"game_id": gid, "invitation": invitation_body(gid, token)}
    return json_response(NEW_INVITATION.dump(body), 201)


@api.post("/games/<game_id>/moves")
def make_move(game_id: str) -> Response:
    """
    ---
    post:
      tags:
      - play
      operationId: makeMove
      parameters:
      - GameId
      - IdempotencyKey
      summary: Pick (Sushi Go!) or play (Sequence)
      description: |
        Records the pick of the token's seat for the turn it names (S4). A pick is final: it
        cannot be changed or withdrawn, and it stays secret until every seat has picked; then
        all picks are revealed at once and the hands are passed. The answer is the seat's view
        after the pick (if the pick completed the turn, already the next turn's view).

        - `cards`: **one card** from your hand, or **two cards** in the order they are placed
          when you use chopsticks (S6): that needs a chopsticks card placed in an earlier turn
          and a hand of at least two cards: `you.chopsticks_usable` says whether that is so now.
        - `dummy_card`: required when you control the dummy in the 2-player dummy variant
          (`you.controls_dummy`, S17), forbidden otherwise: the card from your hand that the
          dummy plays.
        - `use_wasabi`: `zoch` edition only (S9): one true/false per card in `cards`, saying
          whether a nigiri goes onto a free wasabi (default true); `true` for a card that is not
          a nigiri is refused (`400 invalid_request`). In `gamewright` a nigiri always goes onto
          a free wasabi (S8) and this field is refused.
        - `seat`: optional; if given it must be the token's seat.
        - `round` and `turn` (Sequence: `turn`): required, the turn this move answers, as the
          game's view showed it. A move for any other turn is refused with
          `409 stale_move` and changes nothing: the turn moved on (every seat picked, or the
          turn clock picked for you) and the hand you chose from is gone. Read the game again.
          Without them: `400 missing_turn`.

        A seat whose hand holds a single card and which has nothing else to decide picks it
        automatically (S5): the service records that pick itself.

        **Sequence** is played in turns (Q4): only the seat whose turn it is (`seat_to_move`)
        moves; see `SequenceMove` for `{card, cell}`, `{discard}` (Q7) and `{pass: true}` (Q8).
      security:
      - bearerAuth: []
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: '#/components/schemas/Move'}
            examples:
              one:
                summary: One card
                value:
                  round: 1
                  turn: 1
                  cards:
                  - tempura
              chopsticks:
                summary: Two cards with chopsticks (S6), placed in this order
                value:
                  round: 1
                  turn: 3
                  cards:
                  - wasabi
                  - squid_nigiri
              dummy:
                summary: Controlling the dummy (S17)
                value:
                  round: 2
                  turn: 1
                  cards:
                  - sashimi
                  dummy_card: pudding
              zoch:
                summary: Declining the wasabi (zoch, S9)
                value:
                  round: 1
                  turn: 4
                  cards:
                  - egg_nigiri
                  use_wasabi:
                  - false
              sequencePlay:
                summary: 'Sequence: a chip on a cell showing the card (Q6)'
                value:
                  turn: 5
                  card: 7H
                  cell:
                  - 4
                  - 8
              sequenceRemove:
                summary: 'Sequence: a one-eyed jack removes the chip on a cell (Q6)'
                value:
                  turn: 12
                  card: JS
                  cell:
                  - 2
                  - 3
              sequenceDiscard:
                summary: 'Sequence: discard a dead card, draw another, then play (Q7)'
                value:
                  turn: 7
                  discard: 5S
      responses:
        '200':
          description: The pick is recorded. The seat's view after it.
          headers:
            Idempotent-Replayed:
              $ref: '#/components/headers/IdempotentReplayed'
            Cardroom-Receipt:
              $ref: '#/components/headers/Receipt'
          content:
            application/json:
              schema: {$ref: '#/components/schemas/GameView'}
        '400': BadBody
        '401':
          description: |
            - `missing_token`: no `Authorization` header; moves need the seat's token;
            - `invalid_token`: the header is not `Bearer <token>`, or the token is unknown.
          headers:
            WWW-Authenticate:
              $ref: '#/components/headers/WWWAuthenticate'
          content:
            application/problem+json:
              schema: {$ref: '#/components/schemas/MoveUnauthorized'}
        '403':
          description: |
            - `not_your_game`: the token belongs to a seat of another game;
            - `not_your_seat`: the body's `seat` is not the token's seat;
            - `not_a_seat`: the token's seat does not play in this game.
          content:
            application/problem+json:
              schema: {$ref: '#/components/schemas/MoveForbidden'}
        '404': GameNotFound
        '409':
          description: |
            The pick does not fit the game's state. Every answer about the game carries
            its current `version` (and `round`/`turn`), to resynchronise without a `GET`:

            - `game_not_started`: not every seat is taken yet;
            - `game_over`: the game has ended;
            - `already_picked`: this seat has picked this turn already; a pick is final (S4).
              `errors` gives the `round` and `turn`;
            - `stale_move`: the move names a turn that is over (`round`/`turn` are not the
              game's); nothing was recorded. Read the game and choose again;
            - `not_your_turn` (Sequence): another seat is to move (Q4); `errors` gives the
              `turn` and the `seat_to_move`;
            - `seat_taken_over`: the greedy bot plays this seat since its player resigned or it
              stalled the game (`seats[i].taken_over`); its token makes no more moves;
            - `game_cancelled`: the game was cancelled before it started;
            - `too_many_conflicts`: the game changed under this request too many times in a
              row; send it again after `Retry-After` seconds.
            - `idempotency_key_in_use`: a request with this `Idempotency-Key` is still
              running; send it again after `Retry-After` seconds.
          headers:
            Retry-After:
              $ref: '#/components/headers/RetryAfter'
          content:
            application/problem+json:
              schema: {$ref: '#/components/schemas/MoveConflict'}
        '413': BodyTooLarge
        '415': UnsupportedMediaType
        '422':
          description: |
            The pick breaks a rule:

            - `card_not_in_hand`: your hand does not hold a named card (as many times as named);
              `errors.hand` lists your hand;
            - `chopsticks_not_available`: two cards need a chopsticks card placed in an earlier
              turn (S6);
            - `dummy_card_missing`: you control the dummy this turn, name its card (S17);
            - `dummy_card_not_allowed`: you do not control the dummy this turn (S17);
            - `wasabi_choice_not_allowed`: `use_wasabi` in the `gamewright` edition (S8);
            - `wrong_number_of_wasabi_choices`, `wrong_number_of_cards`, `unknown_card`: the
              rules engine's own checks of what the body schema already refuses with 400.
            - `idempotency_key_reused`: this `Idempotency-Key` came with another request.

            Sequence:

            - `card_not_in_hand`: as above;
            - `card_does_not_match_cell`: a non-jack card goes on a cell showing it (Q6);
              `errors.cells` lists its two cells;
            - `cell_occupied`: the cell already holds a chip (Q6);
            - `corner_cell`: no chip goes on a corner (Q9);
            - `no_opponent_chip`: a one-eyed jack removes another team's chip (Q6);
            - `chip_locked`: that chip is part of a completed sequence (Q10, unless
              `advanced_jacks`, Q11);
            - `card_not_dead`: only a dead card can be discarded (Q7);
            - `already_discarded`: one dead card per turn (Q7);
            - `legal_play_exists`: a seat passes only when it cannot play (Q8);
            - `invalid_cell`: the engine's own check of what the body schema refuses with 400.
          content:
            application/problem+json:
              schema: {$ref: '#/components/schemas/MoveUnprocessable'}
        '429': RateLimited
        '500': InternalError
        '503': DatabaseUnavailable
    """
    gid = game_id_of(game_id)
    # The state this process holds, not read again: the append names its version (play.py).
    loaded = games().last_seen(gid) or load(gid)
    token = auth.require_token(games(), gid)  # judged again on the state the move is decided on
    seat = token.seat
    keyed = idempotency.begin()  # after authentication: a key is looked up for its client only
    if keyed is not None and keyed.stored is not None:
        past = as_it_was(keyed)
        return idempotency.replayed(with_receipt(view_body(past, seat, past=True), past, 200))
    body = move_body(loaded)
    if body["seat"] is not None and body["seat"] != seat:
        raise Problem(
            403,
            "not_your_seat",
            f"your token acts for seat {seat}, not seat {body['seat']}",
        )
    record = None if keyed is None else keyed.record()
    moved = games().move(gid, seat, body["move"], body.get("turn"), loaded, record, token)
    return with_receipt(view_body(moved, seat), moved, 200)


def move_body(loaded: Loaded) -> dict[str, Any]:
    """The move, with the turn it names; 400 ``missing_turn`` saying what to add if that is all
    it lacks."""
    adapter = loaded.adapter
    try:
        return adapter.move.load(json_body())
    except ValidationError as error:
        wrong = error.messages if isinstance(error.messages, dict) else {}
        missing = [f for f in adapter.turn_fields if f in wrong]
        if not missing or set(wrong) - set(missing):
            raise
    now: dict[str, Any] = adapter.position(load(loaded.id).state)  # where it is now, read
    add = ", ".join(f'"{f}": {now[f]}' for f in missing)
    raise Problem(
        400,
        "missing_turn",
        f"a move names the turn it answers: add {add} (the game view's"
        f" {' and '.join(repr(f) for f in adapter.turn_fields)} when you chose it); a move for a"
        " turn that is over is refused and changes nothing",
        **now,
    )


@api.get("/games/<game_id>/events")
def list_events(game_id: str) -> Response:
    """
    ---
    get:
      tags:
      - games
      operationId: listEvents
      parameters:
      - GameId
      - in: query
        schema: EventsQuery
      summary: Read a game's event log
      description: |
        The game's events in version order (versions are 1, 2, 3, … without gaps), as the
        caller may read them: before the game is over, parts another viewer must not see are
        replaced by null or left out, and listed in `data.redacted` (another seat's dealt hand,
        the dummy's pile, another seat's pick of the current turn). After the game, everything
        is public, including the seed in `game_ended`.

        Paginate with `after` (the last version you have) and `limit`; `next_after` is the
        `after` of the next page, null when this page reaches the game's current `version`.
      security:
      - {}
      - bearerAuth: []
      responses:
        '200':
          description: One page of events.
          content:
            application/json:
              schema: {$ref: '#/components/schemas/EventPage'}
        '400': InvalidQuery
        '401': BadToken
        '403': OtherGameToken
        '404': GameNotFound
        '500': InternalError
        '503': DatabaseUnavailable
    """
    gid = game_id_of(game_id)
    query = EVENTS_QUERY.load(request.args.to_dict())
    loaded = read(gid, query["after"], *seen_versions(query))
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
    """
    ---
    get:
      tags:
      - games
      operationId: getScores
      parameters:
      - GameId
      - in: query
        schema: ReadQuery
      summary: The score sheet
      description: |
        For every scored round and seat, the points per category with the counts behind them
        (S10–S12); after the game also the pudding scores (S13–S15) and the winners (S16).
        In the dummy variant the dummy is listed as an extra seat named `dummy` (S17). The
        score sheet is public: no token is needed, and one sent is ignored.
      security: []
      responses:
        '200':
          description: The score sheet.
          content:
            application/json:
              schema: {$ref: '#/components/schemas/ScoreSheet'}
        '400': InvalidQuery
        '404': GameNotFound
        '500': InternalError
        '503': DatabaseUnavailable
    """
    gid = game_id_of(game_id)
    loaded = read(gid, *seen_versions(READ_QUERY.load(request.args.to_dict())))
    sheet = loaded.adapter.game.score_sheet(loaded.state)
    body = {"game_id": gid, "version": loaded.version, **sheet}
    return json_response(loaded.adapter.score_sheet.dump(body))


# --- replay and export ---------------------------------------------------------------------------


@api.get("/games/<game_id>/state")
def state_at(game_id: str) -> Response:
    """The caller's view as it was after event ``version``: redacted as the live view is while
    the game goes on; once it is over, everything of every past state is public.

    ---
    get:
      tags:
      - replay
      operationId: getStateAt
      parameters:
      - GameId
      - in: query
        schema: StateQuery
      summary: The game as it was after a given event (time travel)
      description: |
        The caller's view of the game as it was right after event `version` (default: now).
        While the game goes on it is redacted exactly as the live view (`GET /games/{game_id}`)
        is; once the game is over, every past state is public: every seat's hand and pending
        pick, and the dummy's pile.
      security:
      - {}
      - bearerAuth: []
      responses:
        '200':
          description: The caller's view of the game at that version.
          content:
            application/json:
              schema: {$ref: '#/components/schemas/GameView'}
        '400': InvalidQuery
        '401': BadToken
        '403': OtherGameToken
        '404':
          description: '`game_not_found`, or `version_not_found`: the game has fewer events.'
          content:
            application/problem+json:
              schema: {$ref: '#/components/schemas/StateNotFoundProblem'}
        '500': InternalError
        '503': DatabaseUnavailable
    """
    gid = game_id_of(game_id)
    query = STATE_QUERY.load(request.args.to_dict())
    loaded = read(gid, query.get("version", 0), *seen_versions(query))
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
    body = {"game_id": gid, **view, **then, **visibility(gid)}
    return json_response(loaded.adapter.view.dump(body))


@api.get("/games/<game_id>/export")
def export(game_id: str) -> Response:
    """The whole game as JSON Lines, as recorded: everything once it is over, redacted for the
    caller before (``cardroom audit`` verifies an export offline).

    ---
    get:
      tags:
      - replay
      operationId: exportGame
      parameters:
      - GameId
      - in: query
        schema: ReadQuery
      summary: The whole game as JSON Lines
      description: |
        Every event of the game, one JSON object per line, in version order, as recorded
        (older schema versions stay as they were written; see `ExportLine`). Once the game is
        over the export is complete and carries every event's `hash`: `cardroom audit FILE`
        checks it offline, with no server and no database. Before the end it is redacted for
        the caller as `GET /games/{game_id}/events` is, and `hash` is null (a hash would let
        anyone test guesses of the hidden cards).

        A finished game's export ends with one more line, `{"checkpoint": <Receipt>}`: the
        service's signature on its last version and hash (`cardroom audit --keys` checks it).
      security:
      - {}
      - bearerAuth: []
      responses:
        '200':
          description: One `ExportLine` per line; then, once the game is over, the checkpoint.
          headers:
            Content-Disposition:
              description: '`attachment; filename="<game_id>.jsonl"`'
              schema:
                type: string
          content:
            application/x-ndjson: {}
        '400': InvalidQuery
        '401': BadToken
        '403': OtherGameToken
        '404': GameNotFound
        '500': InternalError
        '503': DatabaseUnavailable
    """
    gid = game_id_of(game_id)
    loaded = read(gid, *seen_versions(READ_QUERY.load(request.args.to_dict())))
    seat = auth.optional_seat(games(), gid)
    game, viewer = loaded.adapter.game, Viewer(seat)
    over = game.is_over(loaded.state)
    lines = []
    records = games().records(gid, 0, loaded.version, loaded.version)
    for record in records:
        data = game.visible_event(loaded.state, record.event, viewer).data
        line = export_line(gid, record, data, record.hash if over else None)
        lines.append(json.dumps(EXPORT_LINE.dump(line)) + "\n")
    if over:  # the service's signature on the whole history: its last version and hash
        lines.append(json.dumps(checkpoint_line(gid, records[-1])) + "\n")
    response = Response("".join(lines), mimetype="application/x-ndjson")
    response.headers["Content-Disposition"] = f'attachment; filename="{gid}.jsonl"'
    return response


def checkpoint_line(gid: UUID, last: StoredEvent) -> dict[str, Any]:
    """The last line of a finished game's export: a receipt for its last event."""
    receipt = games().keys.receipt(gid, last.version, last.hash, games().seed(gid))
    return {"checkpoint": RECEIPT.dump(receipt)}


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


AUDIT_MAX_BODY_BYTES = 4 * 1024 * 1024  # up to 10 000 receipts of about 350 bytes


@api.url_value_preprocessor
def _receipts_body_limit(endpoint: str | None, values: Any) -> None:
    """The audit with receipts takes a long list: its own body limit, set before any hook
    (idempotency's) reads the body."""
    if endpoint == "api.audit_with_receipts":
        request.max_content_length = AUDIT_MAX_BODY_BYTES


@api.get("/games/<game_id>/audit")
def audit_game(game_id: str) -> Response:
    """The audit of a finished game, from its rows as they are now (no cached state): the hash
    chain, the seed against its commitment, every deal, and the whole game re-decided from its
    picks, with the provenance of every point. The same report as ``cardroom audit``.

    ---
    get:
      tags:
      - replay
      operationId: auditGame
      parameters:
      - GameId
      summary: Audit a finished game
      description: |
        Checks a finished game from its recorded rows as they are now, and says where the first
        problem is: the hash chain (`chain.first_bad_version`), the revealed seed against the
        commitment of the first event (`seed`, S18), every deal re-dealt from the seed (`deals`),
        the whole game re-decided from its picks by the rules engine (`replay`, `scores`), and
        the provenance of every point (which cards, picked and revealed by which events, under
        which rule). `cardroom audit` gives the same report offline from an export.
      security: []
      responses:
        '200':
          description: The audit report; `ok` is true when every check passed.
          content:
            application/json:
              schema: {$ref: '#/components/schemas/AuditReport'}
        '404': GameNotFound
        '409':
          description: '`game_not_over`: the seed is revealed, and the game audited, at its end.'
          content:
            application/problem+json:
              schema: {$ref: '#/components/schemas/AuditConflict'}
        '500': InternalError
        '503': DatabaseUnavailable
    """
    return _audit(game_id_of(game_id), [])


@api.post("/games/<game_id>/audit")
def audit_with_receipts(game_id: str) -> Response:
    """The audit, with the receipts players kept checked against the rows as they are now: a
    receipt the rows contradict is evidence that the history was rewritten.

    ---
    post:
      tags:
      - replay
      operationId: auditGameWithReceipts
      parameters:
      - GameId
      - IdempotencyKey
      summary: Audit a finished game against the receipts players kept
      description: |
        The audit of `GET`, with the receipts given checked against the rows as they are now:
        a receipt the service signed that the rows contradict is reported in `receipts` as
        "the service signed a different history at version v", and `ok` is false. Receipts
        that prove nothing (unknown key, forged signature, another game) are listed in
        `receipts.refused` with the reason. Receipts are checked with the seed the game's last
        event reveals. The audit changes nothing: a retry simply runs it again.
      security: []
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: '#/components/schemas/AuditRequest'}
      responses:
        '200':
          description: The audit report.
          content:
            application/json:
              schema: {$ref: '#/components/schemas/AuditReport'}
        '400': BadBody
        '404': GameNotFound
        '409':
          description: '`game_not_over`: the seed is revealed, and the game audited, at its end.'
          content:
            application/problem+json:
              schema: {$ref: '#/components/schemas/AuditWithReceiptsConflict'}
        '413': BodyTooLarge
        '415': UnsupportedMediaType
        '500': InternalError
        '503': DatabaseUnavailable
    """
    gid = game_id_of(game_id)
    body = AUDIT_REQUEST.load(json_body())
    return _audit(gid, body["receipts"])


def _audit(gid: UUID, receipts_given: list[Any]) -> Response:
    try:
        records = games().finished_records(gid, MAX_EVENTS)
    except GameNotFound:
        raise _no_game(gid) from None
    if not records or records[-1].type not in FINAL_EVENTS:
        raise Problem(
            409,
            "game_not_over",
            "a game is audited once it is over (the seed is revealed by its last event);"
            " meanwhile its score sheet is at /scores",
            version=records[-1].version if records else 0,
        )
    lines = [EXPORT_LINE.dump(export_line(gid, r, r.data, r.hash)) for r in records]
    lines.append(checkpoint_line(gid, records[-1]))
    keys = games().keys.public
    return json_response(AUDIT_REPORT.dump(audit(lines, keys=keys, receipts=receipts_given)))


@api.get("/.well-known/cardroom-keys")
def signing_keys() -> Response:
    """The public keys receipts and exports are signed with (a JWK Set, RFC 7517/8037).

    ---
    get:
      tags:
      - replay
      operationId: getSigningKeys
      summary: The public keys receipts and exports are signed with
      description: |
        A JWK Set of the service's Ed25519 public keys: the active one (last) and those it
        signed with before a rotation, so old receipts stay verifiable. `cardroom keys`
        prints the same. Keep a copy: an audit checks signatures against the keys you give it.
      security: []
      responses:
        '200':
          description: The keys.
          content:
            application/json:
              schema: {$ref: '#/components/schemas/Jwks'}
        '500': InternalError
    """
    response = json_response(JWKS.dump(games().keys.jwks()))
    response.headers["Cache-Control"] = "max-age=300"
    return response


# --- operations -----------------------------------------------------------------------------------


@api.get("/healthz")
def healthz() -> Response:
    """
    ---
    get:
      tags:
      - operations
      operationId: health
      summary: Health check
      description: >-
        `200` when the service can read from its database, else `503`. Kept for compatibility:
        it says nothing of writes; orchestrators should use `/livez` and `/readyz`.
      security: []
      responses:
        '200':
          description: Healthy.
          content:
            application/json:
              schema: {$ref: '#/components/schemas/Health'}
        '500': InternalError
        '503': DatabaseUnavailable
    """
    games().store.ping()  # raises StoreUnavailable: 503 problem+json with Retry-After
    return json_response(HEALTH.dump({"status": "ok", "database": "ok"}))


@api.get("/openapi.yaml")
def openapi() -> Response:
    """
    ---
    get:
      tags:
      - operations
      operationId: openapi
      summary: This document
      description: |
        This API's contract, as committed with the code that serves it (generated from its
        routes and schemas by `cardroom openapi`).
      security: []
      responses:
        '200':
          description: The OpenAPI description of this API, as YAML.
          content:
            application/yaml:
              schema:
                type: string
    """
    return send_file(current_app.config["OPENAPI_PATH"], mimetype="application/yaml")
