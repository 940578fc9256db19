"""The contract of the webhooks' routes (service/http/routes/webhooks.py): one text per operation,
written once for a game's endpoints and an account's (the YAML the contract reads from each
view's docstring)."""

from __future__ import annotations

import textwrap

GAME_WHO = (
    "A game's endpoints answer to the token that registered them: a seat's token (or an account"
    " token acting for its seat, with `webhooks:write`) manages its seat's, the private game's"
    " creator token the creator's."
)
ACCOUNT_WHO = "An account token with scope `webhooks:write` manages the account's endpoints."

SUMMARIES = {
    "create": "Register a webhook endpoint",
    "list": "The webhook endpoints",
    "get": "A webhook endpoint",
    "update": "Change, disable or enable a webhook endpoint",
    "delete": "Delete a webhook endpoint",
    "deliveries": "A webhook endpoint's delivery log",
    "redeliver": "Send a delivery again",
}

CREATE = """\
The service first POSTs a signed `webhook.verify` event to `url` whose `data.challenge` is a
random string; the endpoint must answer 2xx with `{{"challenge": <that string>}}` within 10 s.
Then the endpoint is registered, active, and the answer holds its **secret, shown only this
once** (`whsec_…`, for the `v1` signature). Otherwise nothing is registered and the problem says
what the URL answered (`422 webhook_verification_failed`), or why it may not be a target
(`422 webhook_url_refused`: HTTPS only, no private or special address, outside
`CARDROOM_WEBHOOKS_INSECURE=1`).

{what}

Each message is a Standard Webhooks POST (standardwebhooks.com): headers `webhook-id` (the
same on every retry and redelivery), `webhook-timestamp`, `webhook-signature` holding
`v1,<HMAC-SHA256 under the secret>` and `v1a,<Ed25519 under the service's signing key>` (verify
it with `GET /.well-known/cardroom-keys` alone); body `{{"type", "timestamp", "data"}}`. At
least once, in order per game (version v goes only after every lower version was delivered or
given up); retried at once, then after about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h
and 24 h (`Retry-After` honoured); `410 Gone` disables the endpoint, and so do 5 days without
one success. The README's Webhooks section lists the event types and their bodies. At most
{limit} endpoints {per}."""

GAME_WHAT = (
    "It hears of what happens in the game from now on: `game.started`, `game.turn` (a seat's"
    " endpoint: the turns that wait for its seat, `data.your_turn`; the creator's: every turn,"
    " `data.seats` it waits for), `game.finished`, `game.rematch`."
)
ACCOUNT_WHAT = (
    "It hears of every game of the account from now on, and of its challenges: the items of"
    " the account's stream (`GET /accounts/me/stream`) under Standard Webhooks names:"
    " `game.started`, `game.turn` (the account's turn), `game.finished`, `game.rematch`,"
    " `challenge.received`, `challenge.answered`. One line for all the account's games: a"
    " message being retried holds back those after it."
)

DESCRIPTIONS = {
    "list": "Every endpoint of the caller, oldest first, with its status (`disabled_reason`"
    " says why one is disabled) and whether it is retrying a message. Never a secret.",
    "get": "The endpoint, with its status and retry state. Never its secret.",
    "update": "Change `url` (verified again, as at registration), `events`, or `enabled`:"
    " `false` stops deliveries (the endpoint keeps its place in the log), `true` starts them"
    " again, with what happened meanwhile, and clears a disabled endpoint's failures.",
    "delete": "The endpoint and its delivery log go; nothing more is sent to it.",
    "deliveries": "The endpoint's attempts, newest first (at most 100; kept 3 days): the"
    " message's `webhook_id` and type, the answer's status, duration and first 1 KiB.",
    "redeliver": "POSTs the attempt's message again now, with the same `webhook-id` (a new"
    " timestamp and signature), and answers with the new attempt, whatever the endpoint"
    " answered. It does not move the endpoint's place in the log.",
}


def _parameters(operation: str, account: bool, post: bool) -> list[str]:
    found = [] if account else ["GameId"]
    if operation not in ("create", "list"):
        found.append("WebhookId")
    if operation == "redeliver":
        found.append("DeliveryId")
    if post:
        found += ["IdempotencyKey", "IdempotencySecret"]
    return found


def _responses(operation: str, account: bool) -> dict[str, str]:
    found: dict[str, str] = {}
    body = operation in ("create", "update")
    if body:
        found["400"] = "BadBody"
    elif operation == "redeliver":
        found["400"] = "InvalidIdempotencyKey"
    found["401"] = "AccountUnauthorized" if account else "WebhookUnauthorized"
    found["403"] = "InsufficientScope" if account else "WebhookForbidden"
    if operation == "redeliver":
        found["404"] = "DeliveryNotFound"
    elif operation in ("create", "list"):
        if not account:
            found["404"] = "GameNotFound"
    else:
        found["404"] = "WebhookNotFound"
    if operation == "create":
        found["409"] = "WebhookConflict"
    elif operation == "redeliver":
        found["409"] = "IdempotencyKeyInUse"
    if body:
        found["413"] = "BodyTooLarge"
        found["415"] = "UnsupportedMediaType"
    if operation in ("create", "update"):
        found["422"] = "WebhookUnprocessable"
    elif operation == "redeliver":
        found["422"] = "IdempotencyKeyReused"
    found["500"] = "InternalError"
    found["503"] = "DatabaseUnavailable"
    return found


SUCCESS = {
    "create": ("201", "The endpoint, active, with its secret. Keep the secret.", "WebhookCreated"),
    "list": ("200", "The endpoints.", "WebhookList"),
    "get": ("200", "The endpoint.", "Webhook"),
    "update": ("200", "The endpoint as it is now.", "Webhook"),
    "delete": ("204", "Deleted.", None),
    "deliveries": ("200", "The attempts.", "DeliveryList"),
    "redeliver": ("200", "The new attempt.", "Delivery"),
}
REQUESTS = {"create": ("NewGameWebhookRequest", "NewAccountWebhookRequest"), "update": None}


def doc(operation: str, method: str, *, account: bool) -> str:
    """The docstring of one view: a summary line, then the operation's YAML."""
    who = ACCOUNT_WHO if account else GAME_WHO
    if operation == "create":
        text = CREATE.format(
            what=ACCOUNT_WHAT if account else GAME_WHAT,
            limit=20 if account else 5,
            per="per account" if account else "per game, whoever registered them",
        )
    else:
        text = DESCRIPTIONS[operation]
    family = "Account" if account else "Game"
    lines = [
        f"{SUMMARIES[operation]}.",
        "---",
        f"{method.lower()}:",
        "  tags:",
        "  - webhooks",
        f"  operationId: {operation}{family}Webhook{'s' if operation == 'list' else ''}",
    ]
    parameters = _parameters(operation, account, method == "POST")
    if parameters:
        lines.append("  parameters:")
        lines += [f"  - {p}" for p in parameters]
    lines.append(f"  summary: {SUMMARIES[operation]}")
    lines.append("  description: |")
    for paragraph in f"{text}\n\n{who}".split("\n\n"):
        lines += ["    " + line for line in textwrap.wrap(paragraph.replace("\n", " "), 92)]
        lines.append("")
    lines.pop()
    lines += ["  security:", "  - bearerAuth: []"]
    if operation in REQUESTS:
        schema = "UpdateWebhookRequest"
        if operation == "create":
            schema = REQUESTS["create"][1 if account else 0]  # type: ignore[index]
        lines += [
            "  requestBody:",
            "    required: true",
            "    content:",
            "      application/json:",
            f"        schema: {{$ref: '#/components/schemas/{schema}'}}",
        ]
    status, said, body = SUCCESS[operation]
    lines += ["  responses:", f"    '{status}':", f"      description: {said}"]
    if operation == "create":
        lines += [
            "      headers:",
            "        Location:",
            "          description: The endpoint's URL.",
            "          schema: {type: string}",
        ]
    if body is not None:
        lines += [
            "      content:",
            "        application/json:",
            f"          schema: {{$ref: '#/components/schemas/{body}'}}",
        ]
    lines += [f"    '{code}': {ref}" for code, ref in _responses(operation, account).items()]
    return "\n".join(lines) + "\n"
