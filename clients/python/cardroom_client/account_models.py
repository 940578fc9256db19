"""Typed accounts, tokens, account stream items, history games and challenges, read from the
service's JSON (issue 35). As in models.py, every object keeps the JSON it was read from in
``raw``, so that a field this version does not name is still at hand."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from .models import GameKind, Status

Scope: TypeAlias = Literal["play", "history:read", "webhooks:write", "tokens:write"]
Result: TypeAlias = Literal["win", "loss", "draw"]

# The account stream's item types (GET /accounts/me/stream).
GAME_STARTED = "game_started"
YOUR_TURN = "your_turn"
GAME_FINISHED = "game_finished"
REMATCH = "rematch"
CHALLENGE = "challenge"
CHALLENGE_ANSWERED = "challenge_answered"


@dataclass(frozen=True)
class AccountInfo:
    """An account as anyone may see it (``bot``: a built-in bot's kind, else None); read
    with ``Account.me()``, ``token`` is the token asking."""

    account_id: str
    name: str
    bot: str | None
    created_at: str
    raw: dict[str, Any] = field(repr=False)
    token: TokenInfo | None = None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AccountInfo:
        token = data.get("token")
        return cls(
            str(data["account_id"]), data["name"], data.get("bot"), data["created_at"], data,
            TokenInfo.from_json(token) if isinstance(token, dict) else None,
        )  # fmt: skip


@dataclass(frozen=True)
class TokenInfo:
    """A personal access token as listed: never its secret (``revoked_at``: None while it
    works; ``last_used_at`` to the minute)."""

    token_id: str
    scopes: tuple[Scope, ...]
    label: str
    created_at: str
    last_used_at: str | None
    revoked_at: str | None
    raw: dict[str, Any] = field(repr=False)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TokenInfo:
        return cls(
            str(data["token_id"]), tuple(data["scopes"]), data.get("label", ""),
            data["created_at"], data.get("last_used_at"), data.get("revoked_at"), data,
        )  # fmt: skip


@dataclass(frozen=True)
class NewToken:
    """A token just minted: its secret (``token``, shown only this once) and what it may do."""

    token: str
    token_id: str
    scopes: tuple[Scope, ...]
    label: str
    raw: dict[str, Any] = field(repr=False)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> NewToken:
        return cls(
            data["token"], str(data["token_id"]), tuple(data["scopes"]), data.get("label", ""), data
        )


@dataclass(frozen=True)
class Item:
    """One item of the account stream: ``type`` (``game_started``, ``your_turn``,
    ``game_finished``, ``rematch``, ``challenge``, ``challenge_answered``, or a newer one),
    ``id`` (a number, or None for the turns a new stream starts with: the key to skip an item
    sent twice), ``event_id`` (the message's id, to resume from: ``Account.stream(after=…)``)
    and the rest of the item in ``data``."""

    type: str
    id: int | None
    event_id: str
    game_id: str | None
    data: dict[str, Any] = field(repr=False)

    @property
    def seat(self) -> int | None:
        seat = self.data.get("seat")
        return seat if isinstance(seat, int) else None

    @property
    def game(self) -> GameKind | None:
        game: GameKind | None = self.data.get("game")
        return game

    @property
    def version(self) -> int | None:
        return self.data.get("version")

    @property
    def round(self) -> int | None:
        """Sushi Go!'s round a ``your_turn`` opens (a pick names it)."""
        return self.data.get("round")

    @property
    def turn(self) -> int | None:
        """The turn a ``your_turn`` opens (a move names it)."""
        return self.data.get("turn")

    @classmethod
    def from_json(cls, event_id: str, data: dict[str, Any]) -> Item:
        item_id = data.get("id")
        game_id = data.get("game_id")
        return cls(
            str(data["type"]),
            item_id if isinstance(item_id, int) else None,
            event_id,
            None if game_id is None else str(game_id),
            data,
        )


@dataclass(frozen=True)
class HistorySeat:
    """A seat of a game in a history: who sat there (``account_id``: ``bot:<kind>`` for a
    built-in bot, None for a seat taken without an account)."""

    seat: int
    name: str | None
    bot: str | None
    account_id: str | None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> HistorySeat:
        return cls(data["seat"], data.get("name"), data.get("bot"), data.get("account_id"))


@dataclass(frozen=True)
class AccountGame:
    """A game of an account's history (``GET /accounts/{id}/games``): public facts only. A
    finished game has its ``totals``, ``winners`` and the account's ``result``."""

    game_id: str
    game: GameKind
    status: Status
    seat: int
    seats: tuple[HistorySeat, ...]
    rules: dict[str, Any]
    created_at: str
    started_at: str | None
    finished_at: str | None
    totals: tuple[dict[str, Any], ...] | None
    winners: tuple[int, ...] | None
    result: Result | None
    raw: dict[str, Any] = field(repr=False)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AccountGame:
        totals, winners = data.get("totals"), data.get("winners")
        return cls(
            game_id=str(data["game_id"]),
            game=data["game"],
            status=data["status"],
            seat=data["seat"],
            seats=tuple(HistorySeat.from_json(s) for s in data.get("seats") or ()),
            rules=data.get("rules") or {},
            created_at=data["created_at"],
            started_at=data.get("started_at"),
            finished_at=data.get("finished_at"),
            totals=None if totals is None else tuple(totals),
            winners=None if winners is None else tuple(winners),
            result=data.get("result"),
            raw=data,
        )


@dataclass(frozen=True)
class Challenge:
    """A game one account offers another (``status``: ``offered``, then ``accepted`` with its
    ``game_id``, ``declined``, ``cancelled`` or ``expired`` once ``expires_at`` has passed).
    ``from_account`` and ``to_account`` are account ids (their names in ``raw``)."""

    challenge_id: str
    status: str
    game: GameKind
    players: int
    rules: dict[str, Any]
    from_account: str
    to_account: str
    game_id: str | None
    expires_at: str
    raw: dict[str, Any] = field(repr=False)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Challenge:
        game_id = data.get("game_id")
        return cls(
            challenge_id=str(data["challenge_id"]),
            status=data["status"],
            game=data["game"],
            players=data["players"],
            rules=data.get("rules") or {},
            from_account=str(data["from"]["account_id"]),
            to_account=str(data["to"]["account_id"]),
            game_id=None if game_id is None else str(game_id),
            expires_at=data["expires_at"],
            raw=data,
        )

    @property
    def rated(self) -> bool:
        """The game offered is rated (issue 37)."""
        return bool(self.raw.get("rated", False))


@dataclass(frozen=True)
class Challenges:
    """The challenges waiting for an answer: offered to the account and by it, newest first."""

    incoming: tuple[Challenge, ...]
    outgoing: tuple[Challenge, ...]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Challenges:
        return cls(
            tuple(Challenge.from_json(c) for c in data["incoming"]),
            tuple(Challenge.from_json(c) for c in data["outgoing"]),
        )
