"""Replay a recorded game (S18): decide again every command behind its log, and compare.

Each command (``Game.commands``) is decided on the state the recorded events before it lead to,
and what it produces is compared with the events recorded after it, up to the next command. So
every mismatch is found, not only the first: ``deals`` reports the first bad ``round_dealt``,
``scores`` the first bad ``round_scored`` or ``game_ended``, ``replay`` the first bad event of
any kind. The totals and winners are recomputed by a pure replay: the commands alone, from the
initial state.
"""

from __future__ import annotations

import json
from typing import Any

from .decider import GAME_ENDED, Command, Event, Game

CHECKS = ("replay", "deals", "scores")
# Events that deal cards from the seed, and events that score, in any hosted game (Sushi Go!:
# round_dealt, round_scored; Sequence: cards_dealt, deck_reshuffled (Q2/Q8), sequence_completed).
DEAL_TYPES = frozenset({"round_dealt", "cards_dealt", "deck_reshuffled"})
SCORE_TYPES = frozenset({"round_scored", "sequence_completed", GAME_ENDED})


def replay(game: Game[Any], events: list[Event], seed: bytes) -> dict[str, Any]:
    """The ``replay``, ``deals`` and ``scores`` checks of ``events`` (upcast, in version order)
    and the recomputed ``totals`` and ``winners``. Each check is ``{"ok", "first_bad_version",
    "detail"}``; ``ok`` is None when the replay had to stop before finding a mismatch of its
    kind."""
    result: dict[str, Any] = {
        check: {"ok": None, "first_bad_version": None, "detail": None} for check in CHECKS
    }
    try:
        commands = list(game.commands(events, seed))
    except Exception as exc:
        result["replay"].update(ok=False, detail=f"cannot read the commands: {why(exc)}")
        return result
    found: dict[str, tuple[int, str]] = {}
    stopped = _compare(game, events, commands, found)
    for check in CHECKS:
        if check in found:
            version, detail = found[check]
            result[check].update(ok=False, first_bad_version=version, detail=detail)
        elif stopped is not None:
            result[check]["detail"] = f"not checked after version {stopped}"
        else:
            result[check]["ok"] = True
    result["totals"], result["winners"] = _recomputed(game, commands)
    return result


def _compare(
    game: Game[Any],
    events: list[Event],
    commands: list[tuple[int, Command]],
    found: dict[str, tuple[int, str]],
) -> int | None:
    """Fill ``found`` with the first mismatch of each kind; the version the replay had to stop
    at (a recorded event the game cannot apply), or None."""

    def mismatch(version: int, detail: str, *types: str) -> None:
        kinds = ["replay"]
        kinds += ["deals"] if DEAL_TYPES.intersection(types) else []
        kinds += ["scores"] if SCORE_TYPES.intersection(types) else []
        for kind in kinds:
            found.setdefault(kind, (version, detail))

    if not commands or commands[0][0] != 0:
        mismatch(1, f"version 1 ({events[0].type}) does not come from a command")
    state, folded = game.initial_state(), 0

    def fold_to(stop: int) -> bool:
        nonlocal state, folded
        while folded < stop:
            try:
                state = game.evolve(state, events[folded])
            except Exception as exc:
                version = folded + 1
                mismatch(version, f"version {version} cannot be applied: {why(exc)}")
                return False
            folded += 1
        return True

    bounds = [index for index, _ in commands[1:]] + [len(events)]
    for (start, command), end in zip(commands, bounds[: len(commands)], strict=True):
        if not fold_to(start):  # the state this command is decided on
            return folded + 1
        recorded = events[start:end]
        try:
            produced = [_plain(e) for e in game.execute(state, command)[0]]
        except Exception as exc:
            detail = f"the rules refuse it: {why(exc)}"
            mismatch(start + 1, f"version {start + 1} ({events[start].type}): {detail}")
            continue
        for offset in range(max(len(recorded), len(produced))):
            ours = produced[offset] if offset < len(produced) else None
            theirs = recorded[offset] if offset < len(recorded) else None
            if ours is None or theirs is None or not _same(ours, theirs):
                version = start + offset + 1
                types = [e.type for e in (ours, theirs) if e is not None]
                mismatch(version, _difference(version, theirs, ours), *types)
                break
    return None if fold_to(len(events)) else folded + 1


def _plain(event: Event) -> Event:
    """``event`` as it reads back from JSON (tuples become lists)."""
    return Event(event.type, json.loads(json.dumps(event.data)), event.schema_version)


def _same(ours: Event, theirs: Event) -> bool:
    return (ours.type, ours.schema_version, ours.data) == (
        theirs.type,
        theirs.schema_version,
        theirs.data,
    )


def _difference(version: int, recorded: Event | None, replayed: Event | None) -> str:
    if recorded is None:
        assert replayed is not None
        return f"the replay gives a {replayed.type} as version {version}; it is not recorded"
    if replayed is None:
        return f"version {version} ({recorded.type}) does not follow from any command"
    if recorded.type != replayed.type:
        return f"version {version} is a {recorded.type}; the replay gives a {replayed.type}"
    keys = sorted(
        k
        for k in set(recorded.data) | set(replayed.data)
        if recorded.data.get(k) != replayed.data.get(k)
    )
    what = ", ".join(keys) or f"its schema version ({recorded.schema_version})"
    return f"version {version} ({recorded.type}) differs from the replay in {what}"


def _recomputed(
    game: Game[Any], commands: list[tuple[int, Command]]
) -> tuple[list[int] | None, list[int] | None]:
    """Totals and winners of a pure replay: the commands alone, from the initial state."""
    state, last = game.initial_state(), None
    try:
        for _, command in commands:
            produced, state = game.execute(state, command)
            last = produced[-1] if produced else last
    except Exception:
        return None, None
    if last is None or last.type != GAME_ENDED:
        return None, None
    return list(last.data["totals"]), list(last.data["winners"])


def why(exc: Exception) -> str:
    return str(exc) or type(exc).__name__
