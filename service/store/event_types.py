"""What the event store hands out and takes in: the rows it returns (``StoredEvent``, ``GameRow``,
``SeatToken``, the lobby's ``GameCursor``), the deadline an append writes (``NewDeadline``), the
lobby's filters, and the errors it raises. Apart from the store so that its callers' types read
in one place."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple
from uuid import UUID

from domain.decider import Event
from service.store.failures import StoreError

STATUSES = ("waiting", "playing", "over", "cancelled")
# Orders of ``list_games``: by (created_at, id) ascending or descending.
ORDERS = ("oldest", "newest")


class GameNotFound(StoreError):
    def __init__(self, game_id: UUID) -> None:
        super().__init__(f"no game {game_id}")
        self.game_id = game_id


class GameExists(StoreError):
    def __init__(self, game_id: UUID) -> None:
        super().__init__(f"game {game_id} already exists")
        self.game_id = game_id


class CorruptEvent(StoreError):
    """A stored event this code cannot read: its data is not what its type holds (a disk fault,
    or a row changed by hand). A read that meets it answers ``500 corrupt_event`` naming the
    game and version; the audit reports it as a finding (issue 39, item 12)."""

    # What reading malformed data raises (a missing key, a wrong type, an unknown card name).
    READING = (LookupError, TypeError, ValueError, AttributeError)

    def __init__(self, game_id: UUID, version: int, reason: str) -> None:
        super().__init__(f"event {version} of game {game_id} cannot be read: {reason}")
        self.game_id = game_id
        self.version = version
        self.reason = reason

    @classmethod
    def of(cls, game_id: UUID, version: int, exc: Exception) -> CorruptEvent:
        return cls(game_id, version, f"{type(exc).__name__}: {exc}")


class InvitationRevoked(StoreError):
    """The invitation a join presented is no longer the private game's invitation in force."""

    def __init__(self, game_id: UUID) -> None:
        super().__init__(f"the invitation of game {game_id} changed")
        self.game_id = game_id


class VersionConflict(StoreError):
    """The game is no longer at ``expected_version``: re-read it and decide again."""

    def __init__(self, game_id: UUID, expected_version: int) -> None:
        super().__init__(f"game {game_id} is no longer at version {expected_version}")
        self.game_id = game_id
        self.expected_version = expected_version


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """An event as recorded: its place in its game (``version``) and in the store (``position``)."""

    version: int
    type: str
    schema_version: int
    data: Mapping[str, Any]
    recorded_at: datetime
    position: int
    hash: str  # the chain of domain/chain.py

    @property
    def event(self) -> Event:
        return Event(self.type, self.data, self.schema_version)


class GameCursor(NamedTuple):
    """Where a page of ``list_games`` ended; pass it as ``after`` to get the next page.

    A cursor is a position, not tied to an order: with either order, ``after`` lists the games
    that come after that position in the order asked for.
    """

    created_at: datetime
    id: UUID

    def encode(self) -> str:
        """An opaque, URL-safe token for APIs."""
        raw = f"{self.created_at.isoformat()}|{self.id}".encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    @classmethod
    def decode(cls, token: str) -> GameCursor:
        """Inverse of :meth:`encode`; raises ``ValueError`` for a malformed token."""
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
            created_at, game_id = raw.split("|")
            cursor = cls(datetime.fromisoformat(created_at), UUID(game_id))
        except (ValueError, UnicodeDecodeError) as exc:
            raise ValueError(f"malformed cursor {token!r}") from exc
        if cursor.created_at.tzinfo is None:
            raise ValueError(f"malformed cursor {token!r}")
        return cursor


@dataclass(frozen=True, slots=True)
class GameRow:
    id: UUID
    game: str
    created_at: datetime
    status: str
    version: int
    private: bool = False  # not listed unless asked for by id (migration 0009)

    @property
    def cursor(self) -> GameCursor:
        return GameCursor(self.created_at, self.id)


class SeatToken(NamedTuple):
    seat: int
    token_hash: bytes
    taken_at: int | None  # the version of the seat's seat_taken; None: written before 0010


# A deadline to write with an append: (the version it counts from, seconds, kind), kind one of
# ``turn`` (the turn clock), ``stall`` (a turn nobody moves in) or ``fill`` (a waiting game).
NewDeadline = tuple[int, int, str]
