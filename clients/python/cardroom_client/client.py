"""The client: one ``httpx`` session to a cardroom service, games and seats on it.

The retry rule (the service's README): every ``POST`` carries a new random ``Idempotency-Key``
(uuid4: the service refuses guessable keys), the same on each retry of that request, and the
client's ``Idempotency-Secret`` (one random value per ``Client``, never shown in an answer): an
answer that holds a secret (a seat's token, an invitation) is replayed only to the client that
sent that secret, whatever network the retry comes from. A request is retried when it timed out
or its connection dropped (it may or may not have taken effect: the key makes it take effect
once), and after ``Retry-After`` seconds when answered ``429``, ``503`` or
``409 too_many_conflicts``, for as long as the retry budget allows (``retry_budget``, 120 s by
default; then ``Unavailable`` or ``RateLimited``: retry.py, errors.py). Every receipt an
answer carries is verified against the service's keys as it arrives and kept
(``client.receipts(game)``) for ``client.audit(game)``. A webhook delivery is checked with
the same published keys: ``client.verify_webhook(body, headers)``."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import httpx

from .account import Account
from .account_models import AccountInfo
from .base import (
    OK,
    POLL_SECONDS,
    TIMEOUT,
    ClientBase,
    game_body,
    game_id_of,
)
from .game import Game, Seat
from .models import BotSeat, GameKind
from .retry import RETRY_BUDGET, decoded
from .webhooks import TOLERANCE, WebhookKeys

__all__ = ["POLL_SECONDS", "TIMEOUT", "Client", "Game", "Seat", "game_id_of"]


class Client(ClientBase):
    """A cardroom service at ``base_url``. ``sleep`` waits between tries (``time.sleep``);
    ``retry_budget`` and ``retries``: see ClientBase; ``http``: an ``httpx.Client`` of your
    own (its ``base_url`` the service's)."""

    def __init__(
        self,
        base_url: str,
        *,
        timeout: httpx.Timeout = TIMEOUT,
        retry_budget: float = RETRY_BUDGET,
        retries: int | None = None,
        verify_receipts: bool = True,
        sleep: Callable[[float], None] = time.sleep,
        http: httpx.Client | None = None,
    ) -> None:
        super().__init__(
            base_url, retry_budget=retry_budget, retries=retries, verify_receipts=verify_receipts
        )
        self.http = http or httpx.Client(base_url=self.base_url, timeout=timeout)
        self.sleep = sleep
        self.webhook_keys = WebhookKeys(self._fetch_keys_now)

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- requests -----------------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        token: str | None = None,
        params: dict[str, Any] | None = None,
        ok: Sequence[int] = OK,
    ) -> httpx.Response:
        """One request, retried by the rule above; its answer if its status is in ``ok``, else
        Refused (RateLimited, Unavailable: see errors.py). A POST's receipt is verified and
        kept before the answer is returned."""
        headers = self.headers(method, token)
        patience = self.patience(f"{method} {self.base_url}{path}")
        while True:
            try:
                answer = self.http.request(method, path, json=json, headers=headers, params=params)
            except httpx.TransportError as exc:
                self.sleep(patience.transport_failed(exc))  # taken effect or not: the key knows
                continue
            pause = self.pause_for(answer, patience)
            if pause is None:
                break
            self.sleep(pause)
        self.check(answer, method, ok)
        if method == "POST":
            receipt = self.receipt_in(answer)
            if receipt is not None:
                if self.needs_keys(receipt):
                    self.keys.load(self._fetch_keys_now())
                self.keep(receipt)
        return answer

    def json(self, method: str, path: str, **kwargs: Any) -> Any:
        """``request``'s answer as JSON (ProtocolError if it is not)."""
        return decoded(self.request(method, path, **kwargs))

    def _fetch_keys_now(self) -> Any:
        return self.json("GET", "/.well-known/cardroom-keys")

    def verify_webhook(
        self, body: bytes, headers: Mapping[str, str], *, tolerance: int = TOLERANCE
    ) -> dict[str, Any]:
        """A webhook delivery's JSON body once its ``v1a`` signature verifies with the service's
        published keys (fetched once and kept; fetched again when none verifies, for a rotated
        key) and its timestamp is within ``tolerance`` seconds; else ``WebhookError``."""
        return self.webhook_keys.verify(body, headers, tolerance=tolerance)

    # --- games --------------------------------------------------------------------------------

    def create_game(
        self,
        game: GameKind,
        players: int,
        *,
        rules: dict[str, Any] | None = None,
        bots: Sequence[BotSeat] = (),
        turn_seconds: int | None = None,
        private: bool = False,
        rated: bool = False,
    ) -> Game:
        """A new game (``rules``: the game's options besides ``players``; ``rated``: it counts
        for its players' ratings, and every person joins it as an account)."""
        body = game_body(game, players, rules, bots, turn_seconds, private, rated)
        created = self.json("POST", "/games", json=body)
        return Game(self, str(created["game_id"]), created.get("invitation"))

    def game(self, game: str) -> Game:
        """A game by its id or its URL (``…/games/<id>``)."""
        return Game(self, game_id_of(game))

    # --- ratings (issue 37) --------------------------------------------------------------------

    def ratings(self, account_id: str) -> list[dict[str, Any]]:
        """``GET /accounts/{id}/ratings``: the account's rating in each pool, as JSON (floats
        exactly as stored: ``cardroom_client.ratings.check`` compares them with a rebuild)."""
        body: dict[str, Any] = self.request("GET", f"/accounts/{account_id}/ratings").json()
        return list(body["ratings"])

    def pool_games(self, pool: str, *, page: int = 1000) -> Iterator[dict[str, Any]]:
        """``GET /leaderboards/{pool}/games``, every page: the pool's rated games in finish
        order (``game_id``, ``finished_at``, ``url``, ``export``), the order a rebuild folds."""
        params: dict[str, Any] = {"limit": page}
        while True:
            body = self.request("GET", f"/leaderboards/{pool}/games", params=params).json()
            yield from body["games"]
            if body["next_after"] is None:
                return
            params = {"limit": page, "after": body["next_after"]}

    def rating_after(self, account_id: str, pool: str, games: int) -> dict[str, Any] | None:
        """The account's rating in ``pool`` after its ``games``-th rated game of it (``GET
        /accounts/{id}/ratings/history``), or None if it has not played that many."""
        params = {"pool": pool, "order": "oldest", "limit": 1, "after": games - 1}
        path = f"/accounts/{account_id}/ratings/history"
        changes = self.request("GET", path, params=params).json()["changes"]
        found = changes[0]["after"] if changes else None
        return found if found is not None and found["games"] == games else None

    def export_text(self, game: str) -> str:
        """``GET /games/{id}/export``: a game's export (JSON Lines), whole."""
        answer = self.request("GET", f"/games/{game_id_of(game)}/export")
        return answer.text

    # --- accounts -----------------------------------------------------------------------------

    def create_account(self, name: str) -> Account:
        """``POST /accounts``: a new account, acting with its first token (``.token``, every
        scope; shown only once: keep it to act as the account again)."""
        return Account.create(self, name)

    def account(self, token: str) -> Account:
        """The account a personal access token (``cardroom_pat_…``) acts for."""
        return Account(self, token)

    def account_info(self, account_id: str) -> AccountInfo:
        """``GET /accounts/{account_id}``: an account as anyone may see it."""
        return AccountInfo.from_json(self.json("GET", f"/accounts/{account_id}"))

    def audit(self, game: Game | str) -> dict[str, Any]:
        """``POST /games/{id}/audit`` with the receipts kept: the audit report (``ok`` false when
        a check fails or a kept receipt is refused, listed in ``receipts.refused``)."""
        gid = game_id_of(game)
        body = {"receipts": self.receipts(gid)}
        report: dict[str, Any] = self.json("POST", f"/games/{gid}/audit", json=body)
        return report
