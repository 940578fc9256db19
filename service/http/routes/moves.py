"""A move (``POST /games/{id}/moves``)."""

from __future__ import annotations

from typing import Any

from flask import Response
from marshmallow import ValidationError

from service.http import auth, idempotency
from service.http.problems import Problem
from service.http.routes.common import (
    api,
    as_it_was,
    game_id_of,
    games,
    json_body,
    load,
    view_body,
    with_receipt,
)
from service.play import Loaded


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
      - IdempotencySecret
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
            - `not_your_game`: the token belongs to a seat of another game (an account
              token: its account holds no seat in this game);
            - `not_your_seat`: the body's `seat` is not the token's seat;
            - `not_a_seat`: the token's seat does not play in this game;
            - `insufficient_scope`: an account token without `play`.
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
    # The state this process holds, not read again: the append names its version (play/).
    loaded = games().last_seen(gid) or load(gid)
    token = auth.require_token(games(), gid)  # judged again on the state the move is decided on
    seat = token.seat
    keyed = idempotency.begin()  # after authentication: a key is looked up for its client only

    def run() -> Response:
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

    def replay(keyed: idempotency.Keyed) -> Response:
        past = as_it_was(keyed)
        return with_receipt(view_body(past, seat, past=True), past, 200)

    return idempotency.once(keyed, run, replay)


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
