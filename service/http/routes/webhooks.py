"""Webhooks (issue 36): endpoints of one game (``/games/{id}/webhooks``, a seat's token or the
private game's creator token) and of an account (``/accounts/me/webhooks``, scope
``webhooks:write``): register (verified at once), list, read, update, delete; each one's
delivery log and redelivery. Delivery itself is service/webhooks/deliver.py's.

The two families share their handlers; each view's contract comes from :func:`_doc`, written
once for both."""

from __future__ import annotations

import hmac
from collections.abc import Callable
from typing import Any
from uuid import UUID, uuid4

from flask import Response
from marshmallow import Schema, ValidationError

from service.http import auth, idempotency
from service.http.problems import Problem
from service.http.routes.common import (
    KeptAnswer,
    api,
    game_id_of,
    games,
    json_body,
    json_response,
    load,
)
from service.http.schemas.webhooks import (
    Delivery,
    DeliveryList,
    NewAccountWebhookRequest,
    NewGameWebhookRequest,
    UpdateWebhookRequest,
    Webhook,
    WebhookCreated,
    WebhookList,
)
from service.settings import settings
from service.store import budget
from service.store import webhooks as store
from service.store.webhooks import Endpoint, Owner, TooMany
from service.webhooks import deliver, sign, transport, verify
from service.webhooks.messages import GAME_TYPES, Message

NEW_GAME = NewGameWebhookRequest()
NEW_ACCOUNT = NewAccountWebhookRequest()
UPDATE = UpdateWebhookRequest()
WEBHOOK = Webhook()
CREATED = WebhookCreated()
WEBHOOKS = WebhookList()
DELIVERY = Delivery()
DELIVERIES = DeliveryList()
LISTED = 100  # attempts a delivery log shows, newest first
GAME = "/games/<game_id>/webhooks"
ACCOUNT = "/accounts/me/webhooks"


# --- who asks --------------------------------------------------------------------------------


def _game_owner(game_id: str) -> tuple[Owner, str]:
    """The game's endpoints the bearer answers for: its seat's, or the creator's (a private
    game's creator token); and the paths' base."""
    gid = game_id_of(game_id)
    load(gid)  # 404 game_not_found first
    token = auth.bearer_token()
    if token is None:
        raise Problem(
            401,
            "missing_token",
            "webhooks of a game need 'Authorization: Bearer <token>': a seat's token, or the"
            " private game's creator token",
            headers={"WWW-Authenticate": "Bearer"},
        )
    private = games().private_game(gid)
    if private is not None and hmac.compare_digest(private.creator_hash, auth.token_hash(token)):
        return Owner(game_id=gid), f"/games/{gid}/webhooks"
    if auth.is_account_token(token):
        auth.require_scope(auth.bearer_account(games(), token), "webhooks:write")
    seat = auth.token_of(games(), gid, token).seat
    return Owner(game_id=gid, seat=seat), f"/games/{gid}/webhooks"


def _account_owner() -> tuple[Owner, str]:
    bearer = auth.require_account(games(), "webhooks:write")
    return Owner(account_id=bearer.account.id), ACCOUNT


# --- the handlers both families share -----------------------------------------------------------


def _view(endpoint: Endpoint, base: str) -> dict[str, Any]:
    here = f"{base}/{endpoint.id}"
    return {
        "webhook_id": endpoint.id,
        "url": endpoint.url,
        "events": endpoint.events,
        "status": endpoint.status,
        "disabled_reason": endpoint.disabled_reason,
        "game_id": endpoint.game_id,
        "seat": endpoint.seat,
        "account_id": endpoint.account_id,
        "created_at": endpoint.created_at,
        "updated_at": endpoint.updated_at,
        "last_success_at": endpoint.last_success_at,
        "failing_since": endpoint.failing_since,
        "retrying": endpoint.attempts,
        "next_attempt_at": endpoint.next_attempt_at if endpoint.attempts else None,
        "links": {"self": here, "deliveries": f"{here}/deliveries"},
    }


def _checked(url: str, secret: str) -> None:
    """The URL may be a target and answers the verification: else 422 saying why."""
    try:
        verify.verify(url, secret, games().keys, insecure=settings().webhooks_insecure)
    except transport.Refused as refused:
        raise Problem(422, "webhook_url_refused", str(refused), errors={"url": url}) from None
    except verify.Failed as failed:
        raise Problem(
            422,
            "webhook_verification_failed",
            f"{failed.reason}. The endpoint is not registered; answer the verification as"
            " the guide's example does and register it again",
            errors={"status": failed.status},
        ) from None
    budget.start()  # the verification's wait is over: the writes get a budget of their own


def _create(owner: Owner, base: str, schema: Schema) -> Response:
    body = schema.load(json_body())
    keyed = idempotency.begin(answers=True)

    def run() -> Response:  # a copy sent meanwhile meets it on the answer's key (KeyTaken)
        with games().store.connection() as conn:
            if store.full(conn, owner):  # before a verification's wait (counted on writing)
                _too_many(owner)
        secret = sign.new_secret()
        _checked(body["url"], secret)
        endpoint_id = uuid4()
        answer = KeptAnswer(keyed, 201, f"{base}/{endpoint_id}")
        events = list(dict.fromkeys(body["events"]))

        def kept(cur: Any, endpoint: Endpoint) -> None:
            answer.keep(cur, CREATED.dump({**_view(endpoint, base), "secret": secret}))

        try:
            with games().store.connection() as conn:
                store.create(conn, endpoint_id, owner, body["url"], events, secret, along=kept)
        except TooMany:
            _too_many(owner)
        return answer.response()

    return idempotency.once(keyed, run)


def _too_many(owner: Owner) -> None:
    limit = store.PER_ACCOUNT if owner.account_id else store.PER_GAME
    what = "this account" if owner.account_id else "this game"
    raise Problem(
        409,
        "too_many_webhooks",
        f"{what} has {limit} webhook endpoints already, the most it may: delete one first",
        errors={"limit": limit},
    )


def _found(owner: Owner, webhook_id: str) -> Endpoint:
    endpoint = None
    wid = _uuid(webhook_id)
    if wid is not None:
        with games().store.connection() as conn:
            endpoint = store.get(conn, owner, wid)
    if endpoint is None:
        raise Problem(
            404,
            "webhook_not_found",
            f"no webhook endpoint {webhook_id} is yours here; list them with GET on the"
            " webhooks' path",
        )
    return endpoint


def _uuid(value: str) -> UUID | None:
    try:
        return UUID(value)
    except ValueError:
        return None


def _list(owner: Owner, base: str) -> Response:
    with games().store.connection() as conn:
        found = store.listed(conn, owner)
    return json_response(WEBHOOKS.dump({"webhooks": [_view(e, base) for e in found]}))


def _get(owner: Owner, base: str, webhook_id: str) -> Response:
    return json_response(WEBHOOK.dump(_view(_found(owner, webhook_id), base)))


def _update(owner: Owner, base: str, webhook_id: str) -> Response:
    body = UPDATE.load(json_body())
    events = body.get("events")
    if owner.account_id is None and events and set(events) - set(GAME_TYPES):
        raise ValidationError({"events": [f"a game's endpoint takes only {', '.join(GAME_TYPES)}"]})
    endpoint = _found(owner, webhook_id)
    url = body.get("url")
    if url is not None and url != endpoint.url:
        _checked(url, endpoint.secret)
    with games().store.connection() as conn:
        changed = store.update(
            conn,
            owner,
            endpoint.id,
            url,
            None if events is None else list(dict.fromkeys(events)),
            body.get("enabled"),
        )
    if changed is None:  # deleted meanwhile
        raise Problem(404, "webhook_not_found", f"the webhook endpoint {webhook_id} was deleted")
    return json_response(WEBHOOK.dump(_view(changed, base)))


def _delete(owner: Owner, webhook_id: str) -> Response:
    wid = _uuid(webhook_id)
    with games().store.connection() as conn:
        deleted = wid is not None and store.delete(conn, owner, wid)
    if not deleted:
        _found(owner, webhook_id)  # its 404
    return Response(status=204)


def _delivery_view(found: store.Delivery, base: str, endpoint_id: UUID) -> dict[str, Any]:
    here = f"{base}/{endpoint_id}/deliveries/{found.id}"
    return {
        "delivery_id": found.id,
        "webhook_id": found.msg_id,
        "type": found.type,
        "game_id": found.game_id,
        "version": found.version,
        "attempt": found.attempt,
        "outcome": found.outcome,
        "status": found.status,
        "duration_ms": found.duration_ms,
        "response": found.response,
        "error": found.error,
        "created_at": found.created_at,
        "links": {"redeliver": f"{here}/redeliver"},
    }


def _deliveries(owner: Owner, base: str, webhook_id: str) -> Response:
    endpoint = _found(owner, webhook_id)
    with games().store.connection() as conn:
        found = store.deliveries(conn, endpoint.id, LISTED)
    views = [_delivery_view(d, base, endpoint.id) for d in found]
    return json_response(DELIVERIES.dump({"deliveries": views}))


def _redeliver(owner: Owner, base: str, webhook_id: str, delivery_id: str) -> Response:
    endpoint = _found(owner, webhook_id)
    did = _uuid(delivery_id)
    with games().store.connection() as conn:
        found = None if did is None else store.delivery(conn, endpoint.id, did)
    if found is None:
        raise Problem(
            404,
            "delivery_not_found",
            f"the endpoint has no delivery {delivery_id} (attempts are kept 3 days); list them"
            f" at {base}/{endpoint.id}/deliveries",
        )
    keyed = idempotency.begin(answers=True)

    def run() -> Response:
        message = Message(found.msg_id, found.type, found.game_id, found.version, found.payload)
        sender = deliver.Deliverer(games().store.pool, lambda: games().keys)
        sent = sender.post(endpoint, message)
        budget.start()  # the attempt's wait is over
        attempted = store.Attempted(
            found.msg_id, found.type, found.game_id, found.version, found.payload, found.attempt,
            "redelivered", sent.status, sent.duration_ms, sent.body_head, sent.error,
        )  # fmt: skip
        answer = KeptAnswer(keyed, 200)
        with games().store.connection() as conn, conn.transaction(), conn.cursor() as cur:
            store.log_attempt(conn, endpoint.id, attempted)
            latest = store.deliveries(conn, endpoint.id, 1)[0]
            answer.keep(cur, DELIVERY.dump(_delivery_view(latest, base, endpoint.id)))
        return answer.response()

    return idempotency.once(keyed, run)


# --- the views -------------------------------------------------------------------------------

Handler = Callable[..., Response]


def _game_view(name: str, handler: Callable[..., Response], with_base: bool = True) -> Handler:
    def view(game_id: str, **ids: str) -> Response:
        owner, base = _game_owner(game_id)
        return handler(owner, base, **ids) if with_base else handler(owner, **ids)

    view.__name__ = name
    return view


def _account_view(name: str, handler: Callable[..., Response], with_base: bool = True) -> Handler:
    def view(**ids: str) -> Response:
        owner, base = _account_owner()
        return handler(owner, base, **ids) if with_base else handler(owner, **ids)

    view.__name__ = name
    return view


ROUTES: list[tuple[str, str, str, Callable[..., Response], bool]] = [
    # (method, path under the webhooks' base, operation, handler, takes the base)
    ("POST", "", "create", lambda owner, base: _create(owner, base, NEW_GAME), True),
    ("GET", "", "list", _list, True),
    ("GET", "/<webhook_id>", "get", _get, True),
    ("PATCH", "/<webhook_id>", "update", _update, True),
    ("DELETE", "/<webhook_id>", "delete", _delete, False),
    ("GET", "/<webhook_id>/deliveries", "deliveries", _deliveries, True),
    (
        "POST",
        "/<webhook_id>/deliveries/<delivery_id>/redeliver",
        "redeliver",
        _redeliver,
        True,
    ),
]


def _register() -> None:
    from service.http.routes.webhook_docs import doc

    for method, tail, operation, handler, with_base in ROUTES:
        game = _game_view(f"game_webhooks_{operation}", handler, with_base)
        game.__doc__ = doc(operation, method, account=False)
        api.add_url_rule(GAME + tail, game.__name__, game, methods=[method])
    for method, tail, operation, handler, with_base in ROUTES:
        if operation == "create":
            handler = lambda owner, base: _create(owner, base, NEW_ACCOUNT)  # noqa: E731
        account = _account_view(f"account_webhooks_{operation}", handler, with_base)
        account.__doc__ = doc(operation, method, account=True)
        api.add_url_rule(ACCOUNT + tail, account.__name__, account, methods=[method])


_register()
