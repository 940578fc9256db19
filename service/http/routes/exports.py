"""A game's export, whole or refused: every event from version 1 to the version the request
read, then (once the game is over) the signature the service stored when it finished.

The body is built and checked before the status is sent: a read that comes back short (a
standby's page, a connection cut mid-read), or any failure while the lines are built, is a
problem (``503 export_incomplete``, or ``500``), never a ``200`` with part of a game. The
answer has a ``Content-Length``, so a body cut on the wire is a short read for the client too.
So a client tells a complete export from a truncated one by the status alone.

A finished game's last line is ``{"checkpoint": <receipt>}``, the receipt stored when the game
finished (service/store/signatures.py); the service never signs it again. Without a stored one
the line is ``{"checkpoint": null}``, which an audit with the service's keys reports as a
rewrite.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import UUID

from flask import json

from domain.decider import Viewer
from service import faults
from service.http.problems import Problem
from service.http.routes.common import RECEIPT, games
from service.http.schemas import ExportLine
from service.play import Loaded
from service.store.events import CorruptEvent, StoredEvent

EXPORT_LINE = ExportLine()
RETRY_AFTER = "1"


def export_text(loaded: Loaded, viewer: Viewer) -> str:
    """The export's JSON Lines as ``viewer`` may read them, checked whole."""
    gid, game = loaded.id, loaded.adapter.game
    over = game.is_over(loaded.state)
    records = games().records(gid, 0, loaded.version, loaded.version)
    if faults.wanted("export_read") == "short":  # test-only: the read loses its tail
        records = records[: len(records) // 2]
    whole(records, loaded.version)
    lines = []
    for record in records:
        try:
            data = game.visible_event(loaded.state, record.event, viewer).data
            line = EXPORT_LINE.dump(export_line(gid, record, data, record.hash if over else None))
        except CorruptEvent.READING as exc:
            raise CorruptEvent.of(gid, record.version, exc) from exc
        lines.append(json.dumps(line) + "\n")
        if record.version * 2 > loaded.version:
            faults.point("export_half")  # test-only: a failure halfway through the lines
    if over:  # the service's signature of the finished game, stored when it finished
        lines.append(json.dumps(checkpoint_line(gid)) + "\n")
    return "".join(lines)


def whole(records: Sequence[StoredEvent], version: int) -> None:
    """503 unless ``records`` are versions 1 to ``version``, each once, in order."""
    got = [record.version for record in records]
    if got != list(range(1, version + 1)):
        missing = sorted(set(range(1, version + 1)) - set(got))
        raise Problem(
            503,
            "export_incomplete",
            f"the game's {version} events could not all be read"
            f" ({len(missing)} missing, from version {missing[0] if missing else '?'});"
            " nothing of the export was sent: retry after Retry-After seconds",
            headers={"Retry-After": RETRY_AFTER},
        )


def checkpoint_line(gid: UUID) -> dict[str, Any]:
    """The last line of a finished game's export: the receipt signed when it finished."""
    receipt = games().final_signature(gid)
    return {"checkpoint": None if receipt is None else RECEIPT.dump(receipt)}


def export_line(gid: UUID, record: StoredEvent, data: Any, digest: str | None) -> dict[str, Any]:
    return {
        "game_id": gid,
        "version": record.version,
        "type": record.type,
        "schema_version": record.schema_version,
        "data": data,
        "recorded_at": record.recorded_at,
        "hash": digest,
    }
