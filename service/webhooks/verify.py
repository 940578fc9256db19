"""An endpoint's verification, when it is registered or its URL changes: the service posts a
signed ``webhook.verify`` event whose ``data.challenge`` is a random string, and the endpoint
must answer 2xx with ``{"challenge": <the same>}`` within 10 seconds. Done in the request that
registers it (so that the answer is either an active endpoint or a problem saying what the URL
answered), before anything is written."""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass
from datetime import UTC, datetime

from service.keys import Keyring
from service.webhooks import sign, transport
from service.webhooks.messages import VERIFY, body

TIMEOUT_SECONDS = 10.0


@dataclass(frozen=True)
class Failed(Exception):
    """The endpoint did not pass: ``reason`` says what it answered."""

    reason: str
    status: int | None


def verify(
    url: str,
    secret: str,
    keyring: Keyring,
    *,
    insecure: bool,
    resolve: transport.Resolver = transport.system_resolver,
    timeout: float = TIMEOUT_SECONDS,
) -> None:
    """Post the challenge to ``url``, signed with ``secret``; :class:`Failed` unless it answers
    as it should. (:class:`transport.Refused` first if the URL may not be a target.)"""
    transport.check_url(url, insecure=insecure, resolve=resolve)
    challenge = secrets.token_urlsafe(24)
    message_id = "msg_verify_" + secrets.token_hex(12)
    payload = body(VERIFY, datetime.now(UTC), {"challenge": challenge})
    headers = sign.headers(message_id, int(time.time()), payload, secret, keyring)
    answer = transport.post(
        url, payload, headers, insecure=insecure, timeout=timeout, resolve=resolve
    )
    if answer.status is None:
        raise Failed(f"the verification request failed: {answer.error}", None)
    if not 200 <= answer.status < 300:
        raise Failed(
            f"the endpoint answered {answer.status} to the verification request (it must"
            f' answer 2xx with {{"challenge": <data.challenge>}}): {answer.body_head[:200]!r}',
            answer.status,
        )
    try:
        echoed = json.loads(answer.body_head)
    except ValueError:
        echoed = None
    if not isinstance(echoed, dict) or echoed.get("challenge") != challenge:
        raise Failed(
            "the endpoint answered the verification request without echoing its challenge: it"
            ' must answer with the JSON {"challenge": <the request\'s data.challenge>}; it'
            f" answered {answer.body_head[:200]!r}",
            answer.status,
        )
