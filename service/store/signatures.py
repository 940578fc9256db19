"""A finished game's signature, made once (migration 0014): the service's receipt for the event
that finishes a game (its end, or its cancellation; both reveal the seed the receipt's
commitment is keyed by, domain/receipts.py), written in the same statement as that event.

Exports and audits carry this stored receipt and the service never signs a finished game again:
whoever rewrites a finished game's rows afterwards, even recomputing the hash chain with the
triggers lifted, cannot make the stored signature match the new history without the signing
key, which is kept outside the database (service/keys.py). A finished game without its row is
reported as tampered, not signed anew. Games finished before this table existed are signed, as
their rows are at that moment, by ``cardroom sign-finished`` (:func:`sign_unsigned`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any
from uuid import UUID

from psycopg.types.json import Jsonb

from domain.decider import FINAL_EVENTS
from service.store.connections import Connections

INSERT = "INSERT INTO game_signatures (game_id, version, kid, receipt) VALUES (%s, %s, %s, %s)"
ROW = f"final_signature AS ({INSERT})"  # a CTE of the append that finishes the game

# Signs a game's event: (game id, version, hash, seed) -> a receipt (domain/receipts.py).
Signer = Callable[[UUID, int, str, bytes], dict[str, Any]]


def row(
    signer: Signer, game_id: UUID, version: int, digest: str, data: Mapping[str, Any]
) -> list[Any]:
    """The values of :data:`INSERT` for the event ``version`` (hash ``digest``, its ``data``
    revealing the seed) that finishes the game."""
    receipt = signer(game_id, version, digest, bytes.fromhex(data["seed"]))
    return [game_id, version, receipt["kid"], Jsonb(receipt)]


def stored(store: Connections, game_id: UUID) -> dict[str, Any] | None:
    """The receipt signed when the game finished; None if none is stored."""
    with store.connection() as conn:
        found = conn.execute(
            "SELECT receipt FROM game_signatures WHERE game_id = %s", (game_id,)
        ).fetchone()
    return None if found is None else dict(found[0])


def unsigned(store: Connections) -> list[UUID]:
    """Finished games without a stored signature (finished before migration 0014)."""
    with store.connection() as conn:
        rows = conn.execute(
            "SELECT DISTINCT e.game_id FROM events e WHERE e.type = ANY(%s) AND NOT EXISTS"
            " (SELECT 1 FROM game_signatures s WHERE s.game_id = e.game_id) ORDER BY 1",
            (sorted(FINAL_EVENTS),),
        ).fetchall()
    return [game_id for (game_id,) in rows]


def sign_unsigned(store: Connections, signer: Signer, game_id: UUID) -> bool:
    """Sign a finished game that has no signature, as its rows are now; whether it did."""
    with store.connection() as conn, conn.transaction():
        last = conn.execute(
            "SELECT version, type, data, hash FROM events WHERE game_id = %s"
            " ORDER BY version DESC LIMIT 1",
            (game_id,),
        ).fetchone()
        if last is None or last[1] not in FINAL_EVENTS:
            return False
        version, _, data, digest = last
        values = row(signer, game_id, version, digest, data)
        inserted = conn.execute(INSERT + " ON CONFLICT (game_id) DO NOTHING", values)
        return bool(inserted.rowcount)
