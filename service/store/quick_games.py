"""Quick match's open games (issue 35, migration 0020): per key (the SHA-256 of a game's rules in
canonical JSON, service/play/quick.py), the public game quick match seats people in while it
waits for players.

The row changes by compare-and-set only: a new game takes the key's place in the transaction
that creates it, and only if the key still names the game the creator found full (or none):
:func:`claim`, an ``INSERT ... ON CONFLICT DO UPDATE ... WHERE``, whose row lock makes
concurrent claims wait and then re-check. The loser's creation rolls back whole, and it joins
the winner's game. So a key names at most one waiting game at a time, on any number of hosts.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from service.store.connections import Connections
from service.store.failures import StoreError

CLAIM = (
    "INSERT INTO quick_games (key, game_id) VALUES (%s, %s)"
    " ON CONFLICT (key) DO UPDATE SET game_id = EXCLUDED.game_id, updated_at = now()"
    " WHERE quick_games.game_id IS NOT DISTINCT FROM %s RETURNING 1"
)


class ClaimLost(StoreError):
    """Another request put its game in the key's place first."""

    def __init__(self, key: str) -> None:
        super().__init__(f"quick match key {key} names another game now")
        self.key = key


def claim(cur: Any, key: str, game_id: UUID, found: UUID | None) -> None:
    """In the transaction that creates ``game_id``: it becomes ``key``'s open game if the key
    still names ``found`` (the game found full or cancelled; None: no game); else
    :class:`ClaimLost`, which undoes the creation."""
    cur.execute(CLAIM, (key, game_id, found))
    if cur.fetchone() is None:
        raise ClaimLost(key)


class QuickGames:
    """Reads of the open games, and their release once full. Thread-safe."""

    def __init__(self, store: Connections) -> None:
        self.store = store

    def open_game(self, key: str) -> UUID | None:
        with self.store.connection() as conn:
            row = conn.execute("SELECT game_id FROM quick_games WHERE key = %s", (key,)).fetchone()
        return None if row is None else row[0]

    def release(self, key: str, game_id: UUID) -> None:
        """``game_id`` is full: the key names no game until the next request creates one (a
        hint only: a request that finds a full game there creates the next one all the same)."""
        with self.store.connection() as conn:
            conn.execute(
                "UPDATE quick_games SET game_id = NULL, updated_at = now()"
                " WHERE key = %s AND game_id = %s",
                (key, game_id),
            )
