"""The async client (issue 38, item 5): ``AsyncClient`` on ``httpx.AsyncClient``, with the sync
client's surface: games, seats, moves, ``events()`` (an async iterator), receipts verified and
kept, the audit, webhook checks, and ``Bot.play_async``.

It shares the sync client's logic rather than repeating it: the headers a request carries, the
retry rule and budget (retry.py), what an answer means and the receipts kept (base.py), the
stream's parser and its messages (stream.py). What is here only sends and sleeps.

    async with AsyncClient("http://127.0.0.1:8000") as client:
        game = await client.create_game("sushi-go", 2, bots=[BotSeat(1, "greedy")])
        final = await FirstMoveBot().play_async(await game.join("Robo"))
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any

import httpx

from .base import OK, TIMEOUT, ClientBase, game_body, game_id_of, join_body, wait_params
from .errors import CardroomError
from .models import BotSeat, Event, GameKind, Move, View, parse_view
from .retry import RETRY_BUDGET, decoded, refused, retry_after
from .stream import SSE, STREAM_TIMEOUT, done, message
from .webhooks import TOLERANCE, WebhookError, verify

Sleep = Callable[[float], Awaitable[None]]


class AsyncClient(ClientBase):
    """As ``Client``, every call awaited; ``sleep``: ``asyncio.sleep`` by default."""

    def __init__(
        self,
        base_url: str,
        *,
        timeout: httpx.Timeout = TIMEOUT,
        retry_budget: float = RETRY_BUDGET,
        retries: int | None = None,
        verify_receipts: bool = True,
        sleep: Sleep = asyncio.sleep,
        http: httpx.AsyncClient | None = None,
    ) -> None:
        super().__init__(
            base_url, retry_budget=retry_budget, retries=retries, verify_receipts=verify_receipts
        )
        self.http = http or httpx.AsyncClient(base_url=self.base_url, timeout=timeout)
        self.sleep = sleep
        self._jwks: Mapping[str, Any] | None = None

    async def aclose(self) -> None:
        await self.http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        token: str | None = None,
        params: dict[str, Any] | None = None,
        ok: Sequence[int] = OK,
    ) -> httpx.Response:
        """``Client.request``, awaited: the same retry rule, budget and receipts."""
        headers = self.headers(method, token)
        patience = self.patience(f"{method} {self.base_url}{path}")
        while True:
            try:
                send = self.http.request(method, path, json=json, headers=headers, params=params)
                answer = await send
            except httpx.TransportError as exc:
                await self.sleep(patience.transport_failed(exc))
                continue
            pause = self.pause_for(answer, patience)
            if pause is None:
                break
            await self.sleep(pause)
        self.check(answer, method, ok)
        if method == "POST":
            receipt = self.receipt_in(answer)
            if receipt is not None:
                if self.needs_keys(receipt):
                    self.keys.load(await self.published_keys(fresh=True))
                self.keep(receipt)
        return answer

    async def json(self, method: str, path: str, **kwargs: Any) -> Any:
        return decoded(await self.request(method, path, **kwargs))

    async def published_keys(self, fresh: bool = False) -> Mapping[str, Any]:
        """The service's JWK Set (fetched once and kept; again with ``fresh``)."""
        if self._jwks is None or fresh:
            self._jwks = await self.json("GET", "/.well-known/cardroom-keys")
        assert self._jwks is not None
        return self._jwks

    async def verify_webhook(
        self, body: bytes, headers: Mapping[str, str], *, tolerance: int = TOLERANCE
    ) -> dict[str, Any]:
        """``Client.verify_webhook``, awaited (the keys fetched again once if none verifies)."""
        try:
            return verify(body, headers, await self.published_keys(), tolerance=tolerance)
        except WebhookError as error:
            if error.reason != "signature":
                raise
        return verify(body, headers, await self.published_keys(fresh=True), tolerance=tolerance)

    async def create_game(
        self,
        game: GameKind,
        players: int,
        *,
        rules: dict[str, Any] | None = None,
        bots: Sequence[BotSeat] = (),
        turn_seconds: int | None = None,
        private: bool = False,
        rated: bool = False,
    ) -> AsyncGame:
        body = game_body(game, players, rules, bots, turn_seconds, private, rated)
        created = await self.json("POST", "/games", json=body)
        return AsyncGame(self, str(created["game_id"]), created.get("invitation"))

    def game(self, game: str) -> AsyncGame:
        """A game by its id or its URL (``…/games/<id>``)."""
        return AsyncGame(self, game_id_of(game))

    async def audit(self, game: Any) -> dict[str, Any]:
        gid = game_id_of(game)
        body = {"receipts": self.receipts(gid)}
        report: dict[str, Any] = await self.json("POST", f"/games/{gid}/audit", json=body)
        return report


class AsyncGame:
    """``Game``, awaited."""

    token: str | None = None

    def __init__(self, client: AsyncClient, game_id: str, invitation: Any = None) -> None:
        self.client = client
        self.id = game_id
        self.invitation: dict[str, Any] | None = invitation
        self.path = f"/games/{game_id}"

    @property
    def url(self) -> str:
        return self.client.base_url + self.path

    async def view(self) -> View:
        return parse_view(await self.client.json("GET", self.path, token=self.token))

    async def wait(self, after: int, seconds: float = 30.0) -> View:
        params = wait_params(after, seconds)
        return parse_view(await self.client.json("GET", self.path, token=self.token, params=params))

    def events(self, after: int = 0, *, follow_rematch: bool = False) -> AsyncIterator[Event]:
        """``Game.events``: every event after ``after``, live, until the game's last."""
        return follow(self.client, self.path, self.token, after, follow_rematch)

    async def join(self, name: str, invitation: str | None = None) -> AsyncSeat:
        body = join_body(name, invitation)
        granted = await self.client.json("POST", f"{self.path}/players", json=body)
        return AsyncSeat(self.client, self.id, granted["seat"], granted["name"], granted["token"])


class AsyncSeat(AsyncGame):
    """``Seat``, awaited."""

    def __init__(self, client: AsyncClient, game_id: str, seat: int, name: str, token: str) -> None:
        super().__init__(client, game_id)
        self.seat, self.name, self.token = seat, name, token

    async def move(self, move: Move) -> View:
        path, body = f"{self.path}/moves", move.to_json()
        return parse_view(await self.client.json("POST", path, json=body, token=self.token))

    async def leave(self) -> None:
        await self.client.request("POST", f"{self.path}/leave", token=self.token)

    async def rematch(self) -> AsyncSeat:
        granted = await self.client.json("POST", f"{self.path}/rematch", token=self.token)
        gid = str(granted["game_id"])
        return AsyncSeat(self.client, gid, granted["seat"], granted["name"], granted["token"])

    async def resign(self) -> None:
        await self.client.request("POST", f"{self.path}/resign", token=self.token)


async def follow(
    client: AsyncClient, path: str, token: str | None, after: int, follow_rematch: bool
) -> AsyncIterator[Event]:
    """stream.follow, awaited: the stream resumed with ``Last-Event-ID`` within the retry
    budget; while it is refused (429, 503), the events are read by the long poll."""
    last = after
    patience = client.patience(f"GET {client.base_url}{path}/stream")
    headers = {"Accept": "text/event-stream"} | (
        {"Authorization": f"Bearer {token}"} if token else {}
    )
    params = {"follow_rematch": "true"} if follow_rematch else None
    while True:
        resume = {"Last-Event-ID": str(last)} if last else {}
        request = client.http.build_request(
            "GET", f"{path}/stream", headers=headers | resume, params=params, timeout=STREAM_TIMEOUT
        )
        try:
            answer = await client.http.send(request, stream=True)
        except httpx.TransportError as exc:
            await client.sleep(patience.transport_failed(exc))
            continue
        dropped: httpx.TransportError | None = None
        try:
            if answer.status_code == 204:
                return
            if answer.status_code == 200:
                patience.ok()
                parser = SSE()
                try:
                    async for line in answer.aiter_lines():
                        sent = parser.feed(line)
                        event = None if sent is None else message(*sent)
                        if event is None:
                            continue
                        last = event.version
                        yield event
                        if done(event, follow_rematch):
                            return
                except httpx.TransportError as exc:
                    dropped = exc
            elif answer.status_code not in (429, 503):
                await answer.aread()
                raise refused(answer, "GET")
            else:
                wait = patience.busy(answer) if answer.status_code == 503 else retry_after(answer)
        finally:
            await answer.aclose()
        if dropped is not None:
            await client.sleep(patience.transport_failed(dropped))
        elif answer.status_code != 200:
            async for event in _poll(client, path, token, last, wait):
                last = event.version
                patience.ok()
                yield event
                if done(event, follow_rematch):
                    return


async def _poll(
    client: AsyncClient, path: str, token: str | None, last: int, wait: float
) -> AsyncIterator[Event]:
    """The events after ``last`` for the next ``wait`` seconds (the stream's Retry-After), by
    the long poll and the event log; a refused long poll is waited out."""
    deadline = time.monotonic() + wait
    while (remaining := deadline - time.monotonic()) > 0:
        try:
            await client.request(
                "GET", path, token=token, params=wait_params(last, max(1.0, remaining))
            )
            page = await client.json("GET", f"{path}/events", token=token, params={"after": last})
        except CardroomError:  # refused or unreachable: the stream is asked again at the deadline
            await client.sleep(max(0.0, min(1.0, deadline - time.monotonic())))
            continue
        for record in page["events"]:
            event = Event.from_json(record)
            last = event.version
            yield event
