"""A game's history: its events, scores, its state at a version, the signed export, and the audit
(with or without the receipts a client kept)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from uuid import UUID

from flask import Response, request

from domain import receipts
from domain.audit import audit
from domain.decider import FINAL_EVENTS, Viewer
from service.http import auth, idempotency
from service.http.problems import Problem
from service.http.routes.common import (
    api,
    deadline_of,
    game_id_of,
    games,
    json_body,
    json_response,
    no_game,
    read,
    seen_versions,
    visibility,
)
from service.http.routes.exports import EXPORT_LINE, checkpoint_line, export_line, export_text
from service.http.schemas import (
    AuditReport,
    AuditRequest,
    EventPage,
    EventsQuery,
    ReadQuery,
    StateQuery,
)
from service.play import Loaded
from service.store.events import GameNotFound, StoredEvent

EVENTS_QUERY = EventsQuery()
EVENT_PAGE = EventPage()
AUDIT_REPORT = AuditReport()
MAX_EVENTS = 100_000  # far more than any game has
STATE_QUERY = StateQuery()
AUDIT_REQUEST = AuditRequest()
READ_QUERY = ReadQuery()


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
        service's signature on its last version and hash, made once, when the game finished,
        and stored (`cardroom audit --keys` checks it); the service never signs a finished
        game again, so `{"checkpoint": null}` (no stored signature) means its rows were
        tampered with (or it finished before signatures were kept and was never signed).

        **Whole or refused.** The export is read and checked whole before its status is sent:
        a `200` always carries every event (its `Content-Length` tells a body cut on the wire);
        a read that comes back short is `503 export_incomplete` (retry), any other failure a
        `500`, never part of a game.
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
        '503': ExportUnavailable
    """
    gid = game_id_of(game_id)
    loaded = read(gid, *seen_versions(READ_QUERY.load(request.args.to_dict())))
    seat = auth.optional_seat(games(), gid)
    response = Response(export_text(loaded, Viewer(seat)), mimetype="application/x-ndjson")
    response.headers["Content-Disposition"] = f'attachment; filename="{gid}.jsonl"'
    return response


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
      - IdempotencySecret
      summary: Audit a finished game against the receipts players kept
      description: |
        The audit of `GET`, with the receipts given checked against the rows as they are now:
        a receipt the service signed that the rows contradict is reported in `receipts` as
        "the service signed a different history at version v", and `ok` is false. Receipts
        that prove nothing (unknown key, forged or altered signature, another game) are listed
        in `receipts.refused` with the reason (numbered from 1 in the order given), and `ok`
        is false too: the verdict never passes refused evidence. Receipts are checked with the
        seed the game's last event reveals. The audit changes nothing: a retry simply runs it again.
      security: []
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: '#/components/schemas/AuditRequest'}
      responses:
        '200':
          description: The audit report; `ok` is true when every check passed and every
            receipt given agrees with the rows.
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
    idempotency.check_headers()  # no record is kept (nothing changes), but the rule holds
    body = AUDIT_REQUEST.load(json_body())
    return _audit(gid, body["receipts"])


def _audit(gid: UUID, receipts_given: list[Any]) -> Response:
    try:
        records = games().finished_records(gid, MAX_EVENTS)
    except GameNotFound:
        raise no_game(gid) from None
    if not records or records[-1].type not in FINAL_EVENTS:
        raise Problem(
            409,
            "game_not_over",
            "a game is audited once it is over (the seed is revealed by its last event);"
            " meanwhile its score sheet is at /scores",
            version=records[-1].version if records else 0,
        )
    lines: list[Any] = [_audit_line(gid, r) for r in records]
    lines.append(checkpoint_line(gid))  # the signature stored when the game finished
    keys = receipts.public_keys(games().published_keys())
    return json_response(AUDIT_REPORT.dump(audit(lines, keys=keys, receipts=receipts_given)))


def _audit_line(gid: UUID, record: StoredEvent) -> dict[str, Any]:
    """``record`` as the export writes it; data that is no JSON object is kept as it is stored,
    for the audit to report (a finding, not a failure: issue 39, item 12)."""
    if isinstance(record.data, Mapping):
        return EXPORT_LINE.dump(export_line(gid, record, record.data, record.hash))
    return {**EXPORT_LINE.dump(export_line(gid, record, {}, record.hash)), "data": record.data}
