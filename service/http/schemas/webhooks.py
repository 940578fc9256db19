"""The bodies of webhooks (issue 36): register, update, list and read endpoints, their delivery
log. Requests refuse unknown fields (``Strict``); answers carry only what is declared."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from service.bodies import Strict, StrictBoolean, plain_text
from service.webhooks.messages import ACCOUNT_TYPES, GAME_TYPES

URL_DESCRIPTION = (
    "Where to POST each message: an `https://` URL whose host resolves to public addresses only"
    " (no loopback, private, link-local or other special address, checked again at each"
    " connection). Plain `http://` and private addresses only with"
    " `CARDROOM_WEBHOOKS_INSECURE=1` (development). Redirects are not followed."
)
EVENTS_DESCRIPTION = (
    "The event types to deliver (default: all of them). `game.started`, `game.turn` (a turn"
    " opened: a seat's endpoint hears of its own turns, the creator's of every turn),"
    " `game.finished`, `game.rematch`{more}."
)


def _url() -> fields.String:
    return fields.String(
        required=True,
        validate=[validate.Length(min=1, max=2048), plain_text],
        metadata={"description": URL_DESCRIPTION},
    )


def _events(types: tuple[str, ...], more: str, required: bool) -> fields.List:
    return fields.List(
        fields.String(validate=validate.OneOf(types)),
        validate=validate.Length(min=1, max=len(types)),
        load_default=None if not required else list(types),
        required=False,
        metadata={"description": EVENTS_DESCRIPTION.format(more=more)},
    )


ACCOUNT_MORE = ", `challenge.received` (a challenge offered to the account), `challenge.answered`"


class NewGameWebhookRequest(Strict):
    """POST /games/{game_id}/webhooks."""

    url = _url()
    events = _events(GAME_TYPES, "", True)


class NewAccountWebhookRequest(Strict):
    """POST /accounts/me/webhooks."""

    url = _url()
    events = _events(ACCOUNT_TYPES, ACCOUNT_MORE, True)


class UpdateWebhookRequest(Strict):
    """PATCH …/webhooks/{webhook_id}: what is sent changes, the rest stays."""

    url = fields.String(
        validate=[validate.Length(min=1, max=2048), plain_text],
        metadata={"description": URL_DESCRIPTION + " A new URL is verified again."},
    )
    events = _events(ACCOUNT_TYPES, ACCOUNT_MORE + " (account endpoints only)", False)
    enabled = StrictBoolean(
        metadata={
            "description": "`false` disables the endpoint (nothing is sent, its place in the log"
            " is kept); `true` enables it again and delivers what happened meanwhile."
        }
    )


class WebhookLinks(Schema):
    self = fields.String(required=True)
    deliveries = fields.String(required=True, metadata={"description": "Its delivery log."})


class Webhook(Schema):
    """An endpoint, never its secret."""

    webhook_id = fields.UUID(required=True)
    url = fields.String(required=True)
    events = fields.List(fields.String(), required=True)
    status = fields.String(required=True, metadata={"enum": ["active", "disabled"]})
    disabled_reason = fields.String(
        allow_none=True,
        required=True,
        metadata={
            "description": "Why it is disabled: by its owner, a `410 Gone`, or every attempt"
            " failing for days (`CARDROOM_WEBHOOKS_DISABLE_AFTER`, 5 days). null while active."
        },
    )
    game_id = fields.UUID(allow_none=True, required=True)
    seat = fields.Integer(
        allow_none=True,
        required=True,
        metadata={"description": "The seat whose token registered it; null: the creator's."},
    )
    account_id = fields.String(allow_none=True, required=True)
    created_at = fields.DateTime(required=True)
    updated_at = fields.DateTime(required=True)
    last_success_at = fields.DateTime(allow_none=True, required=True)
    failing_since = fields.DateTime(
        allow_none=True,
        required=True,
        metadata={"description": "The first failed attempt since the last success; null: none."},
    )
    retrying = fields.Integer(
        required=True,
        metadata={"description": "Failed attempts of the message it is held at (0: none)."},
    )
    next_attempt_at = fields.DateTime(
        allow_none=True,
        required=True,
        metadata={"description": "When that message is tried again (null: not retrying)."},
    )
    links = fields.Nested(WebhookLinks, required=True)


class WebhookCreated(Webhook):
    secret = fields.String(
        required=True,
        metadata={
            "description": "The `v1` signature's secret (`whsec_…`). **Shown only this once.**"
            " The `v1a` signature needs no secret: verify it with the service's public keys"
            " (`GET /.well-known/cardroom-keys`)."
        },
    )


class WebhookList(Schema):
    webhooks = fields.List(fields.Nested(Webhook), required=True)


class DeliveryLinks(Schema):
    redeliver = fields.String(required=True, metadata={"description": "`POST`: send it again."})


class Delivery(Schema):
    """One attempt to deliver a message."""

    delivery_id = fields.UUID(required=True)
    webhook_id = fields.String(
        required=True,
        metadata={"description": "The message's `webhook-id` header: the same on every attempt."},
    )
    type = fields.String(required=True)
    game_id = fields.UUID(allow_none=True, required=True)
    version = fields.Integer(allow_none=True, required=True)
    attempt = fields.Integer(required=True)
    outcome = fields.String(
        required=True,
        metadata={
            "enum": ["delivered", "failed", "given_up", "gone", "redelivered"],
            "description": "`delivered` (2xx); `failed` (tried again later); `given_up` (the"
            " last retry failed: the next message goes); `gone` (410: the endpoint is"
            " disabled); `redelivered` (sent again on request, whatever the answer).",
        },
    )
    status = fields.Integer(
        allow_none=True, required=True, metadata={"description": "null: no HTTP answer."}
    )
    duration_ms = fields.Integer(required=True)
    response = fields.String(
        required=True, metadata={"description": "The first 1 KiB of the answer's body."}
    )
    error = fields.String(allow_none=True, required=True)
    created_at = fields.DateTime(required=True)
    links = fields.Nested(DeliveryLinks, required=True)


class DeliveryList(Schema):
    deliveries = fields.List(fields.Nested(Delivery), required=True)


WEBHOOK_BODIES = (
    NewGameWebhookRequest,
    NewAccountWebhookRequest,
    UpdateWebhookRequest,
    Webhook,
    WebhookCreated,
    WebhookList,
    Delivery,
    DeliveryList,
)
