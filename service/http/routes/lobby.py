"""The lobby: create a game (``POST /games``) and list games (``GET /games``)."""

from __future__ import annotations

import logging
from typing import Any
from uuid import UUID

from flask import Response

from domain.decider import Viewer
from domain.ratings import pool_of, seat_players
from service.http import auth, idempotency
from service.http.problems import Problem
from service.http.routes.common import (
    api,
    as_it_was,
    check_rated,
    game_url,
    games,
    invitation_body,
    json_body,
    json_response,
    text_args,
    view_body,
    with_receipt,
)
from service.http.schemas import CreateGameRequest, GameList, ListGamesQuery
from service.play import Loaded, adapter_for
from service.store import ratings
from service.store.events import GameCursor, GameRow, StoreUnavailable
from service.store.ratings import shown

log = logging.getLogger(__name__)

CREATE_GAME_REQUEST = CreateGameRequest()
LIST_GAMES_QUERY = ListGamesQuery()
GAME_LIST = GameList()


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
      - IdempotencySecret
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
                game_id: $response.body#/game_id
            GetGame:
              operationId: getGame
              parameters:
                game_id: $response.body#/game_id
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
            - `invalid_rated`: `rated: true` with `visibility: private` (a rated game is public:
              anyone can recompute the ratings from its export), or with bots in every seat.
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

    def run() -> Response:
        body = CREATE_GAME_REQUEST.load(json_body())
        check_rated(body)
        adapter = adapter_for(body["game"])
        options = {**adapter.rules.load(body["rules"]), "players": body["players"]}
        # A private game's invitation and creator token: kept (sealed) with a keyed request.
        tokens = (auth.new_token(), auth.new_token()) if body["visibility"] == "private" else None
        kept = None if tokens is None else " ".join(tokens)
        record = None if keyed is None else keyed.record(secret=kept)
        hashes = (
            None if tokens is None else (auth.token_hash(tokens[1]), auth.token_hash(tokens[0]))
        )
        turn_seconds = body.get("turn_seconds")
        loaded = games().create(
            body["game"],
            options,
            body["bots"],
            turn_seconds,
            record=record,
            private=hashes,
            rated=body["rated"],
        )
        return created(loaded, tokens=tokens)

    return idempotency.once(keyed, run, recreated)


def recreated(keyed: idempotency.Keyed) -> Response:
    """The first answer again: the game as its creation left it."""
    past = as_it_was(keyed)
    return created(past, past=True, tokens=kept_tokens(keyed))


def created(loaded: Loaded, past: bool = False, tokens: tuple[str, str] | None = None) -> Response:
    """The answer to a create: the new game's spectator view, with the invitation and the
    creator's token of a private game (``tokens``), shown only in this answer."""
    extra = {} if tokens is None else {"invitation": invitation_body(loaded.id, *tokens)}
    body = view_body(loaded, None, past, **extra)
    return with_receipt(body, loaded, 201, Location=game_url(loaded.id))


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
        asked for by id (`ids`): whoever has a game's id may look at it anyway. A rated game's
        row also names its `rating_pool` and, for each seat, who plays it in ratings
        (`account_id`) and their `rating` in that pool now (issue 37); an unrated game's row
        has none of these.
      security: []
      responses:
        '200':
          description: One page of games.
          content:
            application/json:
              schema: {$ref: '#/components/schemas/GameList'}
        '400':
          description: |
            - `invalid_request`: an unknown query parameter, one out of range, or one whose
              percent-encoded bytes are not UTF-8 text (see `errors`);
            - `invalid_cursor`: `after` is not the `next_after` value of a previous page.
          content:
            application/problem+json:
              schema: {$ref: '#/components/schemas/ListGamesBadRequest'}
        '500': InternalError
        '503': DatabaseUnavailable
    """
    query = LIST_GAMES_QUERY.load(text_args())
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
        "games": with_ratings([game_summary(r) for r in page]),
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
    seats: list[dict[str, Any]] = [
        {"seat": s["seat"], "name": s["name"], "bot": s["bot"]} for s in view["seats"]
    ]
    summary["seats"] = seats
    free = [s for s in view["seats"] if not s["taken"] and not s["bot"]]
    summary["free_seats"] = len(free) if view["status"] == "waiting" else 0
    if view["status"] == "playing":
        summary["waiting_for"] = loaded.adapter.waiting_for(view)
    if getattr(loaded.state, "rated", False):  # only then: an unrated row is as it was
        summary["rated"] = True
        summary["rating_pool"] = pool_of(loaded.adapter.game.name, loaded.state.rules)
        for seat, player in zip(seats, seat_players(loaded.state), strict=True):
            seat["account_id"] = player
    return summary


def with_ratings(summaries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rated games' seats with their players' current ratings in the game's pool (issue
    37: the lobby shows them), read in one query for the page; unrated rows untouched."""
    wanted = [
        (summary["rating_pool"], seat["account_id"])
        for summary in summaries
        if "rating_pool" in summary
        for seat in summary["seats"]
        if seat["account_id"]
    ]
    if not wanted:
        return summaries
    found = ratings.in_pools(games().store, wanted)
    for summary in summaries:
        for seat in summary["seats"] if "rating_pool" in summary else ():
            held = found.get((summary["rating_pool"], seat["account_id"]))
            seat["rating"] = None if held is None else {**shown(held.rating), "anchor": held.anchor}
    return summaries
