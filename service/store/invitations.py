"""Private games and their invitations (migration 0009): only SHA-256 hashes of the creator's
token and of the invitations are kept, never in the events (exports publish those).

An invitation changes by appending a row with the next serial: ``token_hash`` NULL revokes it,
a new hash replaces it. The row with the highest serial is the invitation in force.
"""

from __future__ import annotations

from typing import Any, NamedTuple
from uuid import UUID

import psycopg
from psycopg import errors

from service.store import idempotency_records
from service.store.connections import Connections
from service.store.failures import KeyTaken
from service.store.idempotency_records import IdempotencyRecord

MAX_ATTEMPTS = 5  # two changes of one invitation at once: the loser takes the next serial


class PrivateGame(NamedTuple):
    creator_hash: bytes
    invitation_hash: bytes | None  # None: revoked


def insert_private(
    cur: psycopg.Cursor[Any], game_id: UUID, creator_hash: bytes, invitation_hash: bytes
) -> None:
    """The rows of a new private game (in the transaction that creates the game)."""
    cur.execute(
        "INSERT INTO private_games (game_id, creator_hash) VALUES (%s, %s)",
        (game_id, creator_hash),
    )
    cur.execute(
        "INSERT INTO invitations (game_id, serial, token_hash) VALUES (%s, 1, %s)",
        (game_id, invitation_hash),
    )


_PRIVATE = """
SELECT p.creator_hash, i.token_hash FROM private_games p
JOIN LATERAL (
    SELECT token_hash FROM invitations WHERE game_id = p.game_id ORDER BY serial DESC LIMIT 1
) i ON true
WHERE p.game_id = %s
"""

_CHANGE = """
INSERT INTO invitations (game_id, serial, token_hash)
SELECT %(game_id)s, coalesce(max(serial), 0) + 1, %(token_hash)s
FROM invitations WHERE game_id = %(game_id)s
"""


# A join into a private game and a change of its invitation exclude each other (a transaction
# advisory lock per game: the app's role may not lock rows, SELECT ... FOR SHARE needs UPDATE):
# a join holds it shared while it checks the invitation in force and appends its seat, a change
# exclusively while it writes. So a join whose invitation is revoked meanwhile is refused, and
# one that committed first happened before the revocation.
_LOCK_CLASS = 0x696E76  # "inv": the advisory locks' first key, for invitations
LOCK_SHARED = "SELECT pg_advisory_xact_lock_shared(%s, hashtext(%s::text))"
LOCK_EXCLUSIVE = "SELECT pg_advisory_xact_lock(%s, hashtext(%s::text))"


def lock_key(game_id: UUID) -> tuple[int, str]:
    return _LOCK_CLASS, str(game_id)


def in_force(cur: psycopg.Cursor[Any], game_id: UUID) -> bytes | None:
    """The hash of the game's invitation in force (None: revoked), read now."""
    row = cur.execute(_PRIVATE, (game_id,)).fetchone()
    return None if row is None or row[1] is None else bytes(row[1])


class Invitations:
    """Reads and changes of private games' invitations. Thread-safe."""

    def __init__(self, store: Connections) -> None:
        self.store = store  # its connections: an unreachable database is StoreUnavailable

    def private(self, game_id: UUID) -> PrivateGame | None:
        """The game's creator token hash and invitation in force; None for a public game."""
        with self.store.connection() as conn:
            row = conn.execute(_PRIVATE, (game_id,)).fetchone()
        if row is None:
            return None
        return PrivateGame(bytes(row[0]), None if row[1] is None else bytes(row[1]))

    def change(
        self,
        game_id: UUID,
        token_hash: bytes | None,
        record: tuple[IdempotencyRecord, int] | None = None,
    ) -> None:
        """Put ``token_hash`` in force as the game's invitation (None: revoke it); ``record``:
        the idempotency record of the keyed request that changes it, with the game's version,
        written in the same transaction."""
        for _ in range(MAX_ATTEMPTS):
            try:
                with self.store.connection() as conn, conn.transaction(), conn.cursor() as cur:
                    cur.execute(LOCK_EXCLUSIVE, lock_key(game_id))  # waits for joins checking it
                    cur.execute(_CHANGE, {"game_id": game_id, "token_hash": token_hash})
                    if record is not None:
                        cur.execute(
                            idempotency_records.INSERT, record[0].params(game_id, record[1])
                        )
                return
            except errors.UniqueViolation as exc:
                if exc.diag.constraint_name in idempotency_records.CONSTRAINTS:
                    raise KeyTaken(str(exc)) from exc  # another send of the request committed
                if exc.diag.constraint_name != "invitations_pkey":
                    raise
        raise RuntimeError(f"the invitation of {game_id} kept changing under this change")
