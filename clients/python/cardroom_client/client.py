"""The client: one ``httpx`` session to a cardroom service, games and seats on it.

The retry rule (the service's README): every ``POST`` carries a new random ``Idempotency-Key``
(uuid4: the service refuses guessable keys), the same on each retry of that request, and the
client's ``Idempotency-Secret`` (one random value per ``Client``, never shown in an answer): an
answer that holds a secret (a seat's token, an invitation) is replayed only to the client that
sent that secret, whatever network the retry comes from. A request is retried when it timed out
or its connection dropped (it may or may not have taken effect: the key makes it take effect
once), and after ``Retry-After`` seconds when answered ``429``, ``503`` or
``409 too_many_conflicts``. Every receipt an answer carries is verified against the service's
keys as it arrives and kept (``client.receipts(game)``) for ``client.audit(game)``. A webhook
delivery is checked with the same published keys: ``client.verify_webhook(body, headers)``."""

from __future__ import annotations

import secrets
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpx

from .models import BotSeat, Event, GameKind, Move, View, parse_view
from .receipts import KeySet, ReceiptError, from_header
from .retry import CardroomError, is_busy, problem, retry_after
from .stream import follow
from .webhooks import TOLERANCE, WebhookKeys

if TYPE_CHECKING:
    from .account import Account
    from .account_models import AccountInfo

POLL_SECONDS = 30.0  # the longest long poll the service holds (wait_seconds)
# Reads wait longer than the longest long poll, and than the stream's 15 s heartbeat.
TIMEOUT = httpx.Timeout(10.0, read=POLL_SECONDS + 15.0)
RETRIES = 8


class Client:
    """A cardroom service at ``base_url``. ``sleep`` waits between tries (``time.sleep``)."""

    def __init__(
        self,
        base_url: str,
        *,
        timeout: httpx.Timeout = TIMEOUT,
        retries: int = RETRIES,
        verify_receipts: bool = True,
        sleep: Callable[[float], None] = time.sleep,
        http: httpx.Client | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.http = http or httpx.Client(base_url=self.base_url, timeout=timeout)
        self.retries = retries
        self.sleep = sleep
        self.keys = KeySet(self._published_keys)
        self.webhook_keys = WebhookKeys(self._published_keys)
        self.verify_receipts = verify_receipts
        self._receipts: dict[str, list[dict[str, Any]]] = {}
        # Binds a replayed answer's secret to this client, not to its address (which changes
        # when a phone moves from Wi-Fi to a mobile network between a request and its retry).
        self.idempotency_secret: str | None = secrets.token_urlsafe(32)

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
        ok: Sequence[int] = (200, 201, 204),
    ) -> httpx.Response:
        """One request, retried by the rule above; its answer if its status is in ``ok``, else
        CardroomError. A POST's receipt is verified and kept before the answer is returned."""
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        if method == "POST":
            headers["Idempotency-Key"] = str(uuid.uuid4())  # one key for every retry
            if self.idempotency_secret:
                headers["Idempotency-Secret"] = self.idempotency_secret
        for attempt in range(self.retries):
            try:
                answer = self.http.request(method, path, json=json, headers=headers, params=params)
            except httpx.TransportError:
                if attempt + 1 == self.retries:
                    raise
                self.sleep(min(0.2 * 2**attempt, 5.0))  # taken effect or not: the key knows
                continue
            if is_busy(answer) and attempt + 1 < self.retries:
                self.sleep(retry_after(answer))
                continue
            break
        if answer.status_code not in ok:
            raise CardroomError(answer.status_code, problem(answer), method, str(answer.url))
        if method == "POST" and answer.content:
            self._keep_receipt(answer)
        return answer

    def _published_keys(self) -> Any:
        return self.request("GET", "/.well-known/cardroom-keys").json()

    def verify_webhook(
        self, body: bytes, headers: Mapping[str, str], *, tolerance: int = TOLERANCE
    ) -> dict[str, Any]:
        """A webhook delivery's JSON body once its ``v1a`` signature verifies with the service's
        published keys (fetched once and kept; fetched again when none verifies, for a rotated
        key) and its timestamp is within ``tolerance`` seconds; else ``WebhookError``."""
        return self.webhook_keys.verify(body, headers, tolerance=tolerance)

    def _keep_receipt(self, answer: httpx.Response) -> None:
        body = answer.json()
        receipt = body.get("receipt") if isinstance(body, dict) else None
        if receipt is None:
            return
        header = answer.headers.get("Cardroom-Receipt")
        if header is not None and from_header(header) != receipt:
            raise ReceiptError("the Cardroom-Receipt header and the body's receipt differ")
        if self.verify_receipts:
            self.keys.verify(receipt)
        kept = self._receipts.setdefault(receipt["game_id"], [])
        if receipt not in kept:  # a retry replays the first answer, receipt included
            kept.append(receipt)

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
        answer = self.request("POST", "/games", json=body)
        created = answer.json()
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
        from .account import Account

        return Account.create(self, name)

    def account(self, token: str) -> Account:
        """The account a personal access token (``cardroom_pat_…``) acts for."""
        from .account import Account

        return Account(self, token)

    def account_info(self, account_id: str) -> AccountInfo:
        """``GET /accounts/{account_id}``: an account as anyone may see it."""
        from .account_models import AccountInfo

        return AccountInfo.from_json(self.request("GET", f"/accounts/{account_id}").json())

    def receipts(self, game: Game | str) -> list[dict[str, Any]]:
        """The receipts kept for ``game`` (every seat's, in the order they came)."""
        return list(self._receipts.get(game_id_of(game), ()))

    def audit(self, game: Game | str) -> dict[str, Any]:
        """``POST /games/{id}/audit`` with the receipts kept: the audit report (``ok`` false when
        a check fails or a kept receipt is refused, listed in ``receipts.refused``)."""
        gid = game_id_of(game)
        body = {"receipts": self.receipts(gid)}
        report: dict[str, Any] = self.request("POST", f"/games/{gid}/audit", json=body).json()
        return report


def game_id_of(game: Game | str) -> str:
    if isinstance(game, Game):
        return game.id
    path = urlsplit(game).path.rstrip("/") if "/" in game else game
    return path.rsplit("/", 1)[-1]


class Game:
    """A game as a spectator sees it (a ``Seat`` sees its own view)."""

    token: str | None = None

    def __init__(self, client: Client, game_id: str, invitation: Any = None) -> None:
        self.client = client
        self.id = game_id
        self.invitation: dict[str, Any] | None = invitation  # a private game's, when created
        self.path = f"/games/{game_id}"

    @property
    def url(self) -> str:
        return self.client.base_url + self.path

    def view(self) -> View:
        return parse_view(self.client.request("GET", self.path, token=self.token).json())

    def wait(self, after: int, seconds: float = POLL_SECONDS) -> View:
        """The long poll: the view as soon as the game's version passes ``after``, or after
        ``seconds`` (at most 30) as it is."""
        params = {"wait_after": after, "wait_seconds": min(seconds, POLL_SECONDS)}
        answer = self.client.request("GET", self.path, token=self.token, params=params)
        return parse_view(answer.json())

    def events(self, after: int = 0, *, follow_rematch: bool = False) -> Iterator[Event]:
        """Every event after version ``after``, live, until the game's last (see stream.py).

        A finished game's rematch, once proposed, comes last as an Event of type ``rematch``
        (``data``: ``game_id``, ``proposed_by``, ``proposed_at``; ``version``: the game's last);
        with ``follow_rematch`` the iterator waits for it after the game's end."""
        return follow(self.client, self.path, self.token, after, follow_rematch)

    def join(self, name: str, invitation: str | None = None) -> Seat:
        body = {"name": name} | ({"invitation": invitation} if invitation else {})
        granted = self.client.request("POST", f"{self.path}/players", json=body).json()
        return Seat(self.client, self.id, granted["seat"], granted["name"], granted["token"])


class Seat(Game):
    """A seat taken in a game: its token reads the seat's view and makes its moves (an
    account's seat: the account's token). ``created``: a quick match created its game."""

    created = False

    def __init__(self, client: Client, game_id: str, seat: int, name: str, token: str) -> None:
        super().__init__(client, game_id)
        self.seat, self.name, self.token = seat, name, token

    def move(self, move: Move) -> View:
        """Send ``move``; the view after it. A move for a turn that is over raises
        CardroomError ``409 stale_move`` (read the view again)."""
        answer = self.client.request(
            "POST", f"{self.path}/moves", json=move.to_json(), token=self.token
        )
        return parse_view(answer.json())

    def leave(self) -> None:
        """Give the seat up before the start."""
        self.client.request("POST", f"{self.path}/leave", token=self.token)

    def rematch(self) -> Seat:
        """A seat in this finished game's rematch (same rules, bots and table), which the first
        player to ask creates: the new game's seat, under this seat's name, with its token.
        Before the end: CardroomError ``409 game_not_over``."""
        answer = self.client.request("POST", f"{self.path}/rematch", token=self.token)
        granted = answer.json()
        return Seat(
            self.client, str(granted["game_id"]), granted["seat"], granted["name"], granted["token"]
        )

    def resign(self) -> None:
        """Hand the seat to the service's greedy bot for the rest of the game."""
        self.client.request("POST", f"{self.path}/resign", token=self.token)
