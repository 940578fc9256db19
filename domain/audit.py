"""Audit a game's export offline: prove its log untouched, its deals fair and its scores right.

An export is JSON Lines, one recorded event per line in version order: ``{"game_id", "version",
"type", "schema_version", "data", "recorded_at", "hash"}``. ``audit(records)`` checks, for any
game in ``domain.games.GAMES``:

- ``chain``: every ``hash`` follows from the one before (``domain.chain``);
- ``seed``: the seed ``game_ended`` reveals hashes to the ``seed_commitment`` of ``game_created``
  (S18);
- ``replay``: re-deciding the commands behind the log (``Game.commands``) from the initial state,
  with that seed, gives back every recorded event (upcast first). Each command is decided on the
  state the recorded events before it lead to, so every kind of mismatch is found:
  ``deals`` (``round_dealt``) and ``scores`` (``round_scored``, ``game_ended``) report their own
  first bad version;
- ``points``: every point traced to a rule and to the cards that earned it (``Game.provenance``,
  listed in the report's ``provenance``) adds up to the recorded round scores and totals.

Given the service's public keys and the receipts players kept (domain/receipts.py), it also checks:

- ``signature``: the checkpoint that ends a finished game's export (``{"checkpoint": receipt}``)
  is the service's signature on the export's last version and hash;
- ``receipts``: no receipt the service signed contradicts the export; one that does is reported
  as "the service signed a different history at version v" (the evidence of a rewrite, which the
  unkeyed hash chain alone cannot give: whoever can write the rows can recompute it). A receipt
  that proves nothing (forged or altered, another game's, signed by a key not given) is listed
  in ``refused`` and fails the check too: a verdict is never "ok" over refused evidence.

A check that could not be made has ``ok: None`` and says why in ``detail``. The report's ``ok`` is
true only for a complete export (game over, nothing redacted) that passes every check. Nothing
raises: malformed input gives ``ok: False`` and an ``error``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from .chain import first_break
from .decider import GAME_CANCELLED, GAME_CREATED, GAME_ENDED, SEAT_LEFT, SEAT_TAKEN, Event, Game
from .games import GAMES
from .receipts import check_checkpoint, check_receipts
from .replay import replay, why

FIELDS: dict[str, type] = {
    "game_id": str,
    "version": int,
    "type": str,
    "schema_version": int,
    "data": Mapping,
    "hash": str,  # null in an export made before the end (nothing to verify then)
}
_KIND = {str: "a string", int: "an integer", Mapping: "a JSON object"}
CHECKS = ("chain", "deals", "scores", "replay", "points")  # each {"ok", "first_bad_version", …}


class MalformedExport(ValueError):
    """The input is not an export: not JSON Lines, or a record lacks a field."""


def parse_export(text: str) -> list[dict[str, Any]]:
    """The records of an export's JSON Lines (blank lines are skipped)."""
    records = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise MalformedExport(f"line {number} is not JSON: {exc.msg}") from None
        if not isinstance(record, dict):
            raise MalformedExport(f"line {number} is not a JSON object")
        records.append(record)
    return records


Keys = Mapping[str, Ed25519PublicKey]


def audit_export(
    text: str, keys: Keys | None = None, receipts: Sequence[Any] = ()
) -> dict[str, Any]:
    """``audit`` of an export's text."""
    try:
        records = parse_export(text)
    except MalformedExport as exc:
        return failed_report(str(exc))
    return audit(records, keys, receipts)


def failed_report(error: str) -> dict[str, Any]:
    """The report of an export that could not be read at all."""
    report = _blank_report(0)
    report["error"] = error
    return report


def audit(
    records: Sequence[Mapping[str, Any]], keys: Keys | None = None, receipts: Sequence[Any] = ()
) -> dict[str, Any]:
    """The audit report of one game's export (see the module docstring); never raises. With
    ``keys`` (public keys by id), its signed checkpoint and the ``receipts`` are checked."""
    records, checkpoint = split_checkpoint(records)
    report = _blank_report(len(records))
    try:
        _audit(records, report)
        seed = report["seed"]
        revealed = bytes.fromhex(seed["revealed"]) if seed["matches_commitment"] else None
        report["signature"] = check_checkpoint(checkpoint, records, keys or {}, revealed)
        if receipts:
            report["receipts"] = check_receipts(receipts, records, keys or {}, revealed)
    except MalformedExport as exc:
        report["error"] = str(exc)
    except Exception as exc:  # a report, never a crash: the input may be anything
        report["error"] = f"cannot audit this export: {type(exc).__name__}: {exc}"
    report["ok"] = (
        report["error"] is None
        and report["complete"]
        and all(report[check]["ok"] is True for check in CHECKS)
        and report["seed"]["matches_commitment"] is True
        and report["signature"]["ok"] is not False
        and report["receipts"]["ok"] is not False
    )
    return report


def split_checkpoint(
    records: Sequence[Mapping[str, Any]],
) -> tuple[Sequence[Mapping[str, Any]], Any]:
    """The events, and the signed checkpoint that ends a finished game's export (if any)."""
    if records and isinstance(records[-1], Mapping) and "checkpoint" in records[-1]:
        return records[:-1], records[-1]["checkpoint"]
    return records, None


def _blank_report(events: int) -> dict[str, Any]:
    def unchecked() -> dict[str, Any]:
        return {"ok": None, "first_bad_version": None, "detail": None}

    return {
        "ok": False,
        "complete": False,
        "reason": None,
        "error": None,
        "game_id": None,
        "game": None,
        "events": events,
        "seats": [],
        "redacted": [],
        "chain": unchecked(),
        "seed": {"revealed": None, "matches_commitment": None, "version": None},
        "deals": unchecked(),
        "scores": unchecked(),
        "replay": unchecked(),
        "points": unchecked(),
        "provenance": None,
        "totals": None,
        "winners": None,
        "recorded_totals": None,
        "recorded_winners": None,
        "signature": {"ok": None, "kid": None, "version": None, "detail": None},
        "receipts": {
            "ok": None,
            "first_bad_version": None,
            "detail": "no receipts given",
            "checked": 0,
            "refused": [],
        },
    }


def _audit(records: Sequence[Mapping[str, Any]], report: dict[str, Any]) -> None:
    _check_fields(records)
    report["game_id"] = records[0]["game_id"]
    redacted = [r["version"] for r in records if "redacted" in r["data"]]
    report["redacted"] = redacted
    report["chain"] = _chain(records, redacted)

    created = records[0]
    if created["type"] != GAME_CREATED:
        raise MalformedExport(f"the first event is {created['type']!r}, not {GAME_CREATED!r}")
    name = created["data"].get("game")
    game = GAMES.get(name)
    if game is None:
        raise MalformedExport(f"unknown game {name!r}; this audit knows {sorted(GAMES)}")
    report["game"] = name
    report["seats"] = _seats(records)
    events = [_upcast(game, r) for r in records]

    # The last event of a game: its end, or its cancellation before the start (both reveal the
    # seed); the replay checks that nothing follows it.
    at = next((i for i, r in enumerate(records) if r["type"] in (GAME_ENDED, GAME_CANCELLED)), None)
    ended = None if at is None else records[at]
    report["seed"] = seed = _seed(created, ended)
    report["complete"] = ended is not None and not redacted
    if at is not None:  # as the game's current schema reads it (upcast): seats named
        report["recorded_totals"] = events[at].data.get("totals")
        report["recorded_winners"] = events[at].data.get("winners")
    if redacted:
        not_replayed = (
            "the export is redacted (exported before the game ended, as one viewer sees it)"
        )
    elif ended is None:
        not_replayed = "the game is not over: its seed is not revealed yet"
    elif not seed["matches_commitment"]:
        not_replayed = "the revealed seed does not match the commitment of game_created"
    else:
        not_replayed = None
    report["reason"] = None if report["complete"] else not_replayed
    if not_replayed is None:
        report.update(replay(game, events, bytes.fromhex(seed["revealed"])))
    else:
        report["replay"]["detail"] = f"not replayed: {not_replayed}"
        report["deals"]["detail"] = report["scores"]["detail"] = "not replayed"
    report["points"], report["provenance"] = _provenance(game, events, redacted)
    names = [s["name"] for s in (report["provenance"] or [{}])[-1].get("seats", [])]
    if len(names) > len(report["seats"]):
        report["seats"] = names  # with the seats that do not sit (a dummy, S17)


def _seats(records: Sequence[Mapping[str, Any]]) -> list[Any]:
    """Who holds each seat in the end: a seat left before the start may be taken again."""
    seats: list[Any] = []
    for record in records:
        data, kind = record["data"], record["type"]
        if kind not in (SEAT_TAKEN, SEAT_LEFT) or not isinstance(data.get("seat"), int):
            continue
        seat = data["seat"]
        seats += [None] * (seat + 1 - len(seats))
        seats[seat] = data.get("name") if kind == SEAT_TAKEN else None
    return seats


def _check_fields(records: Sequence[Mapping[str, Any]]) -> None:
    if not records:
        raise MalformedExport("the export is empty")
    for position, record in enumerate(records, start=1):
        if not isinstance(record, Mapping):
            raise MalformedExport(f"record {position} is not a JSON object")
        for field, kind in FIELDS.items():
            if field not in record:
                raise MalformedExport(f"record {position} has no {field!r}")
            value = record[field]
            if value is None and field == "hash":
                continue
            if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
                raise MalformedExport(f"record {position}: {field!r} must be {_KIND[kind]}")
        if record["game_id"] != records[0]["game_id"]:
            raise MalformedExport(f"record {position} belongs to another game")


def _chain(records: Sequence[Mapping[str, Any]], redacted: list[int]) -> dict[str, Any]:
    if all(r["hash"] is None for r in records):
        unhashed = "the export carries no hashes (it was made before the game ended)"
        return {"ok": None, "first_bad_version": None, "detail": unhashed}
    bad = first_break(records)
    detail: str | None = None
    if bad is not None:
        detail = f"the hash chain breaks at version {bad}"
        if redacted and bad >= redacted[0]:
            detail += (
                f" (version {redacted[0]} is redacted, and a redacted event cannot verify: "
                "export the game after its end)"
            )
    return {"ok": bad is None, "first_bad_version": bad, "detail": detail}


def _upcast(game: Game[Any], record: Mapping[str, Any]) -> Event:
    event = Event(record["type"], record["data"], record["schema_version"])
    if "redacted" in record["data"]:
        return event  # hidden parts cannot be upcast; such an export is never replayed
    try:
        return game.upcast(event)
    except (ValueError, KeyError, TypeError) as exc:
        raise MalformedExport(f"version {record['version']}: {exc}") from None


def _seed(created: Mapping[str, Any], ended: Mapping[str, Any] | None) -> dict[str, Any]:
    """S18: the seed revealed at the end must be the one committed to at the start."""
    if ended is None:
        return {"revealed": None, "matches_commitment": None, "version": None}
    revealed = ended["data"].get("seed")
    try:
        matches = hashlib.sha256(bytes.fromhex(revealed)).hexdigest() == created["data"].get(
            "seed_commitment"
        )
    except (TypeError, ValueError):
        matches = False  # not hex
    return {"revealed": revealed, "matches_commitment": matches, "version": ended["version"]}


# --- provenance -------------------------------------------------------------------------------


def _provenance(
    game: Game[Any], events: list[Event], redacted: list[int]
) -> tuple[dict[str, Any], list[dict[str, Any]] | None]:
    """Every point traced (``Game.provenance``), and the check that the points add up to what
    the log records."""
    result: dict[str, Any] = {"ok": None, "first_bad_version": None, "detail": None}
    try:
        sections = game.provenance(events)
    except Exception as exc:
        result.update(ok=False, detail=f"cannot trace the points: {why(exc)}")
        return result, None
    running: dict[int, int] = {}
    for section in sections:
        version = section["version"]
        for seat in section["seats"]:
            running[seat["seat"]] = running.get(seat["seat"], 0) + seat["points"]
            problem = _adds_up(seat, running[seat["seat"]])
            if problem is not None:
                detail = f"version {version}, seat {seat['seat']}: {problem}"
                result.update(ok=False, first_bad_version=version, detail=detail)
                return result, sections
    result["ok"] = True
    if redacted:
        result["detail"] = "the rounds scored so far"
    return result, sections


def _adds_up(seat: Mapping[str, Any], running: int) -> str | None:
    parts = sum(c["points"] for c in seat["categories"])
    if parts != seat["points"]:
        return f"categories add up to {parts}, not {seat['points']}"
    for category in seat["categories"]:
        if category.get("recorded", category["points"]) != category["points"]:
            return (
                f"{category['category']} earns {category['points']} by "
                f"{', '.join(category['rules'])}; {category['recorded']} recorded"
            )
    if seat.get("recorded", seat["points"]) != seat["points"]:
        return f"the cards earn {seat['points']}; {seat['recorded']} recorded"
    if "recorded_total" in seat and seat["recorded_total"] != running:
        return f"the points add up to a total of {running}; {seat['recorded_total']} recorded"
    return None
