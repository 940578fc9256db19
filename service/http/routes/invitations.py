"""A private game's invitation: check it (``GET``), revoke it (``DELETE``) or replace it
(``POST``) at ``/games/{id}/invitation``. Joining with it is in service/http/routes/seats.py."""

from __future__ import annotations

from uuid import UUID

from flask import Response

from service.http import auth, idempotency
from service.http.routes.common import (
    api,
    game_id_of,
    games,
    invitation_body,
    json_response,
    load,
)
from service.http.schemas import InvitationStatus, NewInvitation

INVITATION_STATUS = InvitationStatus()
NEW_INVITATION = NewInvitation()


@api.get("/games/<game_id>/invitation")
def check_invitation(game_id: str) -> Response:
    """
    ---
    get:
      tags:
      - games
      operationId: checkInvitation
      parameters:
      - GameId
      summary: Tell whether a private game's invitation still works
      description: |
        A page that shows an invitation link (to copy, to share) asks before it shows it:
        the creator may have revoked or replaced it from another browser. Send the
        invitation itself (`Authorization: Bearer <invitation token>`, the `invitation`
        of the link): `200 {active: true}` while it is in force, `403 invalid_invitation`
        once it is not (what a join with it would get). With the creator token instead,
        `active` says whether any invitation is in force. Nothing changes, and the answer
        holds no secret.
      security:
      - bearerAuth: []
      responses:
        '200':
          description: The invitation is in force (or, for the creator, whether one is).
          content:
            application/json:
              schema: {$ref: '#/components/schemas/InvitationStatus'}
        '401': InvitationCheckUnauthorized
        '403': InvitationNotInForce
        '404': GameNotFound
        '409': GameNotPrivate
        '500': InternalError
        '503': DatabaseUnavailable
    """
    gid = game_id_of(game_id)
    load(gid)
    active = auth.invitation_in_force(games(), gid)
    return json_response(INVITATION_STATUS.dump({"game_id": gid, "active": active}))


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
      - IdempotencySecret
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
        '400': InvalidIdempotencyKey
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

    def run() -> Response:
        token = auth.new_token()
        record = None if keyed is None else (keyed.record(secret=token), loaded.version)
        games().invitations.change(gid, auth.token_hash(token), record)
        return invitation_issued(gid, token)

    return idempotency.once(keyed, run, reissued)


def reissued(keyed: idempotency.Keyed) -> Response:
    """The first answer again: the invitation was kept, sealed under the key."""
    token, stored = keyed.stored_secret(), keyed.stored
    assert token is not None and stored is not None
    return invitation_issued(stored.game_id, token)


def invitation_issued(gid: UUID, token: str) -> Response:
    body = {"game_id": gid, "invitation": invitation_body(gid, token)}
    return json_response(NEW_INVITATION.dump(body), 201)
