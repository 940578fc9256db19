"""An account (issue 35): one identity across games, acting with its personal access token.

``client.create_account(name)`` makes one (the answer's token, with every scope, is kept in
``account.token``: the service shows it only once); ``client.account(token)`` wraps a token
you kept. The account then joins games (``account.join(game)``: the seat is the account's and
its token acts for it), follows every game it sits in on one stream (``account.stream()``),
reads its history (``account.games(...)``, ``account.export(...)``), challenges other accounts
and answers their challenges, and asks for a quick match (``account.quick(...)``). Every
``POST`` goes through ``Client.request``: a new ``Idempotency-Key`` kept across its retries,
the client's ``Idempotency-Secret``, receipts verified and kept."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any

import httpx

from .account_models import (
    AccountGame,
    AccountInfo,
    Challenge,
    Challenges,
    Item,
    NewToken,
    Result,
    Scope,
    TokenInfo,
)
from .account_stream import follow_account
from .base import game_body, game_id_of
from .errors import Unavailable
from .game import Game, Seat
from .models import BotSeat, GameKind, Status
from .retry import decoded, describe, refused
from .session import Session

PAGE = 100  # the most games a history page holds


class Account:
    """An account acting with ``token`` on ``client``'s service."""

    def __init__(self, client: Session, token: str, info: AccountInfo | None = None) -> None:
        self.client = client
        self.token = token
        self.info = info

    @classmethod
    def create(cls, client: Session, name: str) -> Account:
        """``POST /accounts``: a new account; its first token (every scope) in ``.token``."""
        created = client.json("POST", "/accounts", json={"name": name})
        return cls(client, created["token"], AccountInfo.from_json(created))

    # --- who ---------------------------------------------------------------------------------

    def me(self) -> AccountInfo:
        """``GET /accounts/me``: the account (``raw["token"]``: the token asking, summarised)."""
        self.info = AccountInfo.from_json(self._get("/accounts/me").json())
        return self.info

    @property
    def id(self) -> str:
        return (self.info or self.me()).account_id

    @property
    def name(self) -> str:
        return (self.info or self.me()).name

    # --- tokens ------------------------------------------------------------------------------

    def mint_token(self, scopes: Sequence[Scope], label: str = "") -> NewToken:
        """``POST /accounts/me/tokens``: another token with ``scopes`` (at most this token's);
        its secret is in the answer only. ``client.account(new.token)`` acts with it."""
        body = {"scopes": list(scopes), "label": label}
        return NewToken.from_json(self._post("/accounts/me/tokens", body).json())

    def tokens(self) -> list[TokenInfo]:
        """``GET /accounts/me/tokens``: every token of the account (never a secret)."""
        listed = self._get("/accounts/me/tokens").json()["tokens"]
        return [TokenInfo.from_json(token) for token in listed]

    def revoke(self, token: TokenInfo | NewToken | str) -> None:
        """``DELETE /accounts/me/tokens/{token_id}``: the token works nowhere any more."""
        token_id = token if isinstance(token, str) else token.token_id
        self.client.request("DELETE", f"/accounts/me/tokens/{token_id}", token=self.token)

    # --- games -------------------------------------------------------------------------------

    def join(self, game: Game | str, invitation: str | None = None) -> Seat:
        """``POST /games/{id}/players`` as the account: a seat under the account's name, for
        which the account's token acts (``409 already_seated`` if it sits there already)."""
        gid = game_id_of(game)
        body = {"invitation": invitation} if invitation else {}
        granted = self._post(f"/games/{gid}/players", body).json()
        return self._seat(granted)

    def seat(self, game: Game | str, seat: int | None = None) -> Seat:
        """The account's seat in ``game`` (its number read from the view when not given)."""
        gid = game_id_of(game)
        if seat is None:
            you = Seat(self.client, gid, 0, self.name, self.token).view().you
            if you is None:
                raise ValueError(f"the account sits in no seat of game {gid}")
            seat = you.seat
        return Seat(self.client, gid, seat, self.name, self.token)

    def quick(
        self,
        game: GameKind,
        players: int,
        *,
        rules: dict[str, Any] | None = None,
        bots: Sequence[BotSeat] = (),
        turn_seconds: int | None = None,
        rated: bool = False,
    ) -> Seat:
        """``POST /games/quick``: a seat in the waiting public game with exactly these rules,
        or in a new one (``seat.created``). Races are the service's: however many ask at once,
        a game is created only once the one before it is full. ``rated``: a rated game, with
        accounts that asked for one of the same pool and rules only."""
        body = game_body(game, players, rules, bots, turn_seconds, rated=rated)
        granted = self._post("/games/quick", body).json()
        seat = self._seat(granted)
        seat.created = bool(granted.get("created"))
        return seat

    def stream(self, after: str | None = None) -> Iterator[Item]:
        """The account's stream (see account_stream.py): every item, live, reconnecting with
        ``Last-Event-ID`` and skipping repeats; ``after``: an ``Item.event_id`` to resume
        from (None: a new stream, which starts with a ``your_turn`` for each game waiting for
        the account now). It does not end by itself."""
        return follow_account(self.client, self.token, after)

    # --- history -----------------------------------------------------------------------------

    def games(
        self,
        *,
        account_id: str | None = None,
        game: GameKind | None = None,
        status: Status | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        vs: str | None = None,
        result: Result | None = None,
        order: str = "oldest",
        limit: int = PAGE,
    ) -> Iterator[AccountGame]:
        """``GET /accounts/{id}/games`` (this account's by default), every page: each game
        once, following ``next_after`` (a keyset walk: games that start or finish meanwhile
        keep their place). Private games are listed only to their own players (this token
        needs ``history:read`` for them)."""
        after: str | None = None
        while True:
            games, after = self.games_page(
                account_id=account_id, game=game, status=status, since=since, until=until,
                vs=vs, result=result, order=order, limit=limit, after=after,
            )  # fmt: skip
            yield from games
            if after is None:
                return

    def games_page(
        self, *, account_id: str | None = None, after: str | None = None, **filters: Any
    ) -> tuple[list[AccountGame], str | None]:
        """One page of the history: its games, and the ``after`` of the next (None: last)."""
        path = f"/accounts/{account_id or self.id}/games"
        params = _history_params(filters) | ({"after": after} if after else {})
        page = self._get(path, params).json()
        return [AccountGame.from_json(g) for g in page["games"]], page.get("next_after")

    def export(self, *, account_id: str | None = None, **filters: Any) -> Iterator[AccountGame]:
        """The history as ``application/x-ndjson``, streamed (up to the service's cap of
        10,000 games; continue with ``since`` = the last game's ``created_at``). Filters as
        ``games``."""
        path = f"/accounts/{account_id or self.id}/games"
        params = _history_params(filters)
        headers = {"Accept": "application/x-ndjson", "Authorization": f"Bearer {self.token}"}
        try:
            with self.client.http.stream("GET", path, params=params, headers=headers) as answer:
                if answer.status_code != 200:
                    answer.read()
                    raise refused(answer, "GET")
                for line in answer.iter_lines():
                    if line.strip():
                        yield AccountGame.from_json(json.loads(line))
        except httpx.TransportError as exc:  # not retried: the caller resumes with ``since``
            raise Unavailable(f"GET {self.client.base_url}{path}", describe(exc), 0.0) from exc

    # --- challenges --------------------------------------------------------------------------

    def challenge(
        self,
        account_id: str,
        game: GameKind,
        players: int = 2,
        *,
        rules: dict[str, Any] | None = None,
        bots: Sequence[BotSeat] = (),
        turn_seconds: int | None = None,
        private: bool = False,
        rated: bool = False,
    ) -> Challenge:
        """``POST /accounts/{account_id}/challenges``: offer that account a game. Two accounts
        play it (this one in the first seat no bot holds, theirs in the next): any other seat
        is a bot's (``players`` = 2 + ``len(bots)``). It comes on their stream; unanswered, it
        expires (``expires_at``). ``rated``: the game counts for both accounts' ratings."""
        body = game_body(game, players, rules, bots, turn_seconds, private, rated)
        return Challenge.from_json(self._post(f"/accounts/{account_id}/challenges", body).json())

    def challenges(self) -> Challenges:
        """``GET /accounts/me/challenges``: those waiting for an answer, to and by the account."""
        return Challenges.from_json(self._get("/accounts/me/challenges").json())

    def get_challenge(self, challenge: Challenge | str) -> Challenge:
        """``GET /challenges/{id}``: as it is now (``game_id`` once accepted)."""
        return Challenge.from_json(self._get(f"/challenges/{_challenge_id(challenge)}").json())

    def accept(self, challenge: Challenge | str) -> Seat:
        """Accept a challenge offered to the account: the game is created with both accounts
        seated and starts; the account's seat in it (``409`` if answered already)."""
        cid = _challenge_id(challenge)
        return self._seat(self._post(f"/challenges/{cid}/accept", None).json())

    def decline(self, challenge: Challenge | str) -> Challenge:
        cid = _challenge_id(challenge)
        return Challenge.from_json(self._post(f"/challenges/{cid}/decline", None).json())

    def cancel(self, challenge: Challenge | str) -> Challenge:
        """Withdraw a challenge this account offered."""
        cid = _challenge_id(challenge)
        return Challenge.from_json(self._post(f"/challenges/{cid}/cancel", None).json())

    # --- requests ----------------------------------------------------------------------------

    def _get(self, path: str, params: dict[str, Any] | None = None) -> Any:
        return _Answer(self.client.request("GET", path, token=self.token, params=params))

    def _post(self, path: str, body: Any) -> Any:
        return _Answer(self.client.request("POST", path, json=body, token=self.token))

    def _seat(self, granted: dict[str, Any]) -> Seat:
        """The seat an answer grants, acted for by the account's token."""
        return Seat(
            self.client, str(granted["game_id"]), granted["seat"], granted["name"], self.token
        )


def _challenge_id(challenge: Challenge | str) -> str:
    return challenge if isinstance(challenge, str) else challenge.challenge_id


def _history_params(filters: dict[str, Any]) -> dict[str, Any]:
    params = {}
    for key, value in filters.items():
        if value is None:
            continue
        params[key] = value.isoformat() if isinstance(value, datetime) else value
    return params


class _Answer:
    """An answer whose ``json()`` raises ProtocolError (a CardroomError), not ValueError."""

    def __init__(self, answer: httpx.Response) -> None:
        self.answer = answer

    def json(self) -> Any:
        return decoded(self.answer)
