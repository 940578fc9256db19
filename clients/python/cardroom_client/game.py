"""A game as a spectator sees it (``Game``) and a seat taken in it (``Seat``), over a
client's session (session.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .base import POLL_SECONDS, join_body, wait_params
from .models import Event, Move, View, parse_view
from .session import Session
from .stream import follow

__all__ = ["Game", "Seat"]


class Game:
    """A game as a spectator sees it (a ``Seat`` sees its own view)."""

    token: str | None = None

    def __init__(self, client: Session, game_id: str, invitation: Any = None) -> None:
        self.client = client
        self.id = game_id
        self.invitation: dict[str, Any] | None = invitation  # a private game's, when created
        self.path = f"/games/{game_id}"

    @property
    def url(self) -> str:
        return self.client.base_url + self.path

    def view(self) -> View:
        return parse_view(self.client.json("GET", self.path, token=self.token))

    def wait(self, after: int, seconds: float = POLL_SECONDS) -> View:
        """The long poll: the view as soon as the game's version passes ``after``, or after
        ``seconds`` (at most 30) as it is."""
        params = wait_params(after, seconds)
        return parse_view(self.client.json("GET", self.path, token=self.token, params=params))

    def events(self, after: int = 0, *, follow_rematch: bool = False) -> Iterator[Event]:
        """Every event after version ``after``, live, until the game's last (see stream.py).

        A finished game's rematch, once proposed, comes last as an Event of type ``rematch``
        (``data``: ``game_id``, ``proposed_by``, ``proposed_at``; ``version``: the game's last);
        with ``follow_rematch`` the iterator waits for it after the game's end."""
        return follow(self.client, self.path, self.token, after, follow_rematch)

    def join(self, name: str, invitation: str | None = None) -> Seat:
        body = join_body(name, invitation)
        granted = self.client.json("POST", f"{self.path}/players", json=body)
        return Seat(self.client, self.id, granted["seat"], granted["name"], granted["token"])


class Seat(Game):
    """A seat taken in a game: its token reads the seat's view and makes its moves (an
    account's seat: the account's token). ``created``: a quick match created its game."""

    created = False

    def __init__(self, client: Session, game_id: str, seat: int, name: str, token: str) -> None:
        super().__init__(client, game_id)
        self.seat, self.name, self.token = seat, name, token

    def move(self, move: Move) -> View:
        """Send ``move``; the view after it. A move for a turn that is over raises
        Refused ``409 stale_move`` (read the view again)."""
        path, body = f"{self.path}/moves", move.to_json()
        return parse_view(self.client.json("POST", path, json=body, token=self.token))

    def leave(self) -> None:
        """Give the seat up before the start."""
        self.client.request("POST", f"{self.path}/leave", token=self.token)

    def rematch(self) -> Seat:
        """A seat in this finished game's rematch (same rules, bots and table), which the first
        player to ask creates: the new game's seat, under this seat's name, with its token.
        Before the end: Refused ``409 game_not_over``."""
        granted = self.client.json("POST", f"{self.path}/rematch", token=self.token)
        return Seat(
            self.client, str(granted["game_id"]), granted["seat"], granted["name"], granted["token"]
        )

    def resign(self) -> None:
        """Hand the seat to the service's greedy bot for the rest of the game."""
        self.client.request("POST", f"{self.path}/resign", token=self.token)
