"""What the sync ``Client`` and the ``AsyncClient`` share, without input or output (issue 38,
item 5): their settings, the headers a request carries, what its answer means, the receipts
kept, and the bodies and results of the game and seat operations. Each client only sends (with
``httpx.Client`` or ``httpx.AsyncClient``) and sleeps, as this module and retry.py say."""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import httpx

from .models import BotSeat, GameKind
from .receipts import KeySet, ReceiptError, from_header
from .retry import RETRY_BUDGET, Patience, decoded, is_busy, refused

POLL_SECONDS = 30.0  # the longest long poll the service holds (wait_seconds)
# Reads wait longer than the longest long poll, and than the stream's 15 s heartbeat.
TIMEOUT = httpx.Timeout(10.0, read=POLL_SECONDS + 15.0)
OK = (200, 201, 204)


class ClientBase:
    """A cardroom service at ``base_url``: the settings and state both clients keep.

    ``retry_budget``: the seconds a run of failures (the service unreachable, or answering
    429/503) is retried before ``Unavailable`` (or ``RateLimited``); ``retries``: at most this
    many tries of one request (None: as many as the budget allows)."""

    def __init__(
        self,
        base_url: str,
        *,
        retry_budget: float = RETRY_BUDGET,
        retries: int | None = None,
        verify_receipts: bool = True,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.retry_budget = retry_budget
        self.retries = retries
        self.verify_receipts = verify_receipts
        self.keys = KeySet(self._fetch_keys_now)
        self._receipts: dict[str, list[dict[str, Any]]] = {}
        # Binds a replayed answer's secret to this client, not to its address (which changes
        # when a phone moves from Wi-Fi to a mobile network between a request and its retry).
        self.idempotency_secret: str | None = secrets.token_urlsafe(32)

    def _fetch_keys_now(self) -> Any:  # the sync Client fetches; the async one loads ahead
        raise ReceiptError("the service's keys are not loaded")

    # --- requests (sans-IO) -------------------------------------------------------------------

    def patience(self, what: str) -> Patience:
        return Patience(what, self.retry_budget, self.retries)

    def headers(self, method: str, token: str | None) -> dict[str, str]:
        """A request's headers: a POST's new ``Idempotency-Key`` (one for every retry of it)."""
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        if method == "POST":
            headers["Idempotency-Key"] = str(uuid.uuid4())
            if self.idempotency_secret:
                headers["Idempotency-Secret"] = self.idempotency_secret
        return headers

    @staticmethod
    def pause_for(answer: httpx.Response, patience: Patience) -> float | None:
        """The pause before trying again after ``answer`` (None: it is the final answer)."""
        return patience.busy(answer) if is_busy(answer) else None

    @staticmethod
    def check(answer: httpx.Response, method: str, ok: Sequence[int]) -> None:
        if answer.status_code not in ok:
            raise refused(answer, method)

    def receipt_in(self, answer: httpx.Response) -> dict[str, Any] | None:
        """The receipt a POST's answer carries (checked against its header), if any."""
        if not answer.content:
            return None
        body = decoded(answer)
        receipt = body.get("receipt") if isinstance(body, dict) else None
        if receipt is None:
            return None
        header = answer.headers.get("Cardroom-Receipt")
        if header is not None and from_header(header) != receipt:
            raise ReceiptError("the Cardroom-Receipt header and the body's receipt differ")
        if not isinstance(receipt, dict):
            raise ReceiptError(f"not a receipt: {receipt!r}")
        return receipt

    def needs_keys(self, receipt: dict[str, Any]) -> bool:
        """Whether the keys must be fetched before ``receipt`` can be verified."""
        return self.verify_receipts and not self.keys.knows(receipt.get("kid"))

    def keep(self, receipt: dict[str, Any]) -> None:
        """Verify ``receipt`` (its key known by now) and keep it once."""
        if self.verify_receipts:
            self.keys.verify(receipt)
        kept = self._receipts.setdefault(receipt["game_id"], [])
        if receipt not in kept:  # a retry replays the first answer, receipt included
            kept.append(receipt)

    def receipts(self, game: Any) -> list[dict[str, Any]]:
        """The receipts kept for ``game`` (every seat's, in the order they came)."""
        return list(self._receipts.get(game_id_of(game), ()))


def game_id_of(game: Any) -> str:
    """A game's id from a game object, its id, or its URL (``…/games/<id>``)."""
    if not isinstance(game, str):
        return str(game.id)
    path = urlsplit(game).path.rstrip("/") if "/" in game else game
    return path.rsplit("/", 1)[-1]


def game_body(
    game: GameKind,
    players: int,
    rules: dict[str, Any] | None = None,
    bots: Sequence[BotSeat] = (),
    turn_seconds: int | None = None,
    private: bool = False,
    rated: bool = False,
) -> dict[str, Any]:
    """A game's rules as ``POST /games`` takes them (challenges and quick match too)."""
    body: dict[str, Any] = {"game": game, "players": players}
    if rules:
        body["rules"] = rules
    if bots:
        body["bots"] = [bot.to_json() for bot in bots]
    if turn_seconds is not None:
        body["turn_seconds"] = turn_seconds
    if private:
        body["visibility"] = "private"
    if rated:
        body["rated"] = True
    return body


def join_body(name: str, invitation: str | None) -> dict[str, Any]:
    return {"name": name} | ({"invitation": invitation} if invitation else {})


def wait_params(after: int, seconds: float) -> dict[str, Any]:
    return {"wait_after": after, "wait_seconds": min(seconds, POLL_SECONDS)}
