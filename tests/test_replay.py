"""Replaying recorded games: the state at every version is the fold of the events up to it, the
commands behind a log give the log back, and a game recorded in the older event format (v1
``round_dealt``, before ``deck_offset``) still replays and audits (S18)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from export_support import VARIANTS, finished_game

from domain.audit import audit_export, parse_export
from domain.decider import Event, fold
from domain.sushigo import SUSHI_GO
from domain.sushigo.randomplay import play_random_game

V1_GAME = Path(__file__).parent / "fixtures" / "sushi-go-v1-game.jsonl"


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_state_at_every_version_is_the_fold_of_its_prefix(variant: str) -> None:
    events, final, states = play_random_game(dict(VARIANTS[variant]), random.Random(7))
    for state in states:  # the state after each command, as the service keeps it
        assert state == fold(SUSHI_GO, events[: state.version])
    stepwise = SUSHI_GO.initial_state()
    for version, event in enumerate(events, start=1):
        stepwise = SUSHI_GO.evolve(stepwise, event)
        assert stepwise.version == version
    assert stepwise == final == fold(SUSHI_GO, events)


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_commands_behind_a_log_give_the_log_back(variant: str) -> None:
    events = finished_game(variant, 8)
    seed = bytes.fromhex(events[-1].data["seed"])
    state, replayed = SUSHI_GO.initial_state(), []
    for index, command in SUSHI_GO.commands(events, seed):
        assert index == len(replayed)  # each command produced the events up to the next one
        produced, state = SUSHI_GO.execute(state, command)
        replayed += produced
        assert state == fold(SUSHI_GO, events[: len(replayed)])
    assert replayed == events


# --- the older format --------------------------------------------------------------------------


def v1_records() -> list[dict]:
    return parse_export(V1_GAME.read_text())


def v1_events() -> list[Event]:
    return [Event(r["type"], r["data"], r["schema_version"]) for r in v1_records()]


def test_the_fixture_is_in_the_older_format() -> None:
    deals = [r for r in v1_records() if r["type"] == "round_dealt"]
    assert len(deals) == 3
    assert all(d["schema_version"] == 1 and "deck_offset" not in d["data"] for d in deals)


def test_a_v1_game_upcasts_to_v2_with_its_deck_offset() -> None:
    deals = [SUSHI_GO.upcast(e) for e in v1_events() if e.type == "round_dealt"]
    assert [d.schema_version for d in deals] == [2, 2, 2]
    assert [d.data["deck_offset"] for d in deals] == [0, 32, 64]  # 4 players x 8 cards (S2)
    upcast = {"round_dealt", "round_scored", "game_ended"}
    unchanged = [e for e in v1_events() if e.type not in upcast]
    assert [SUSHI_GO.upcast(e) for e in unchanged] == unchanged


def test_v1_scores_upcast_to_v2_naming_each_seat() -> None:
    """round_scored/game_ended v1 listed the seats by position; v2 names them."""
    events = v1_events()
    scored = [SUSHI_GO.upcast(e) for e in events if e.type == "round_scored"]
    ended_v1, ended = events[-1].data, SUSHI_GO.upcast(events[-1])
    assert [e.schema_version for e in scored] == [2, 2, 2] and ended.schema_version == 2
    for v1, v2 in zip([e for e in events if e.type == "round_scored"], scored, strict=True):
        assert [s["seat"] for s in v2.data["scores"]] == [0, 1, 2, 3]
        assert [{k: v for k, v in s.items() if k != "seat"} for s in v2.data["scores"]] == (
            v1.data["scores"]
        )
    assert ended.data["totals"] == [
        {"seat": seat, "total": total} for seat, total in enumerate(ended_v1["totals"])
    ]
    assert ended.data["puddings"] == [
        {"seat": seat, **p} for seat, p in enumerate(ended_v1["puddings"])
    ]
    assert ended.data["winners"] == ended_v1["winners"] and ended.data["seed"] == ended_v1["seed"]


def test_a_v1_game_replays() -> None:
    events = v1_events()
    state = fold(SUSHI_GO, events)
    ended = events[-1].data
    assert state.over and list(state.totals) == ended["totals"]  # v1: by position
    assert list(state.winners) == ended["winners"]
    assert state == fold(SUSHI_GO, [SUSHI_GO.upcast(e) for e in events])


def test_a_v1_game_audits_ok() -> None:
    report = audit_export(V1_GAME.read_text())
    assert report["ok"], json.dumps(report)[:2000]
    recorded = v1_records()[-1]["data"]["totals"]  # v1: by position
    assert report["totals"] == [{"seat": s, "total": t} for s, t in enumerate(recorded)]
    assert report["recorded_totals"] == report["totals"]
