"""The offline audit (domain/audit.py): honest games pass in every edition and variant; every
kind of tampering is caught at the right version; points are traced to rules S8–S17 (S18)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from export_support import (
    VARIANTS,
    Record,
    edited,
    export_records,
    finished_export,
    finished_game,
    rechain,
    to_jsonl,
    versions_of,
)

from domain.audit import audit, audit_export
from domain.decider import Viewer, fold
from domain.sushigo import SUSHI_GO

CHECKS = ("chain", "deals", "scores", "replay", "points")


def all_ok(report: dict[str, Any]) -> bool:
    return all(report[check]["ok"] is True for check in CHECKS)


# --- honest games -----------------------------------------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("seed", [1, 2])
def test_an_honest_finished_game_audits_ok(variant: str, seed: int) -> None:
    records = finished_export(variant, seed)
    report = audit(records)
    assert report["ok"], report
    assert report["complete"] and report["error"] is None and all_ok(report)
    assert report["seed"]["matches_commitment"] is True
    assert report["seed"]["version"] == len(records)
    assert report["events"] == len(records)
    assert report["game"] == "sushi-go" and report["game_id"] == records[0]["game_id"]
    ended = records[-1]["data"]
    assert report["totals"] == report["recorded_totals"] == ended["totals"]
    assert report["winners"] == ended["winners"]
    json.dumps(report)  # the report is plain JSON


def test_the_dummy_is_a_scored_seat_of_the_report() -> None:
    report = audit(finished_export("gamewright-dummy"))
    assert report["seats"] == ["p0", "p1", "dummy"] and len(report["totals"]) == 3


# --- tampering that breaks the hash chain ------------------------------------------------------


def test_a_changed_payload_breaks_the_chain_at_its_version() -> None:
    records = finished_export()
    scored = versions_of(records, "round_scored")[0]
    tampered = edited(records, scored, lambda r: r["data"]["scores"][0].update(total=99))
    report = audit(tampered)
    assert report["chain"] == {
        "ok": False,
        "first_bad_version": scored,
        "detail": f"the hash chain breaks at version {scored}",
    }
    assert not report["ok"]


@pytest.mark.parametrize("version", [2, 30, 60])
def test_a_deleted_event_breaks_the_chain_where_it_was(version: int) -> None:
    records = finished_export()
    report = audit(records[: version - 1] + records[version:])
    assert report["chain"]["first_bad_version"] == version and not report["ok"]


@pytest.mark.parametrize("version", [2, 30, 60])
def test_two_swapped_events_break_the_chain_at_the_first(version: int) -> None:
    records = finished_export()
    swapped = [*records]
    swapped[version - 1], swapped[version] = swapped[version], swapped[version - 1]
    report = audit(swapped)
    assert report["chain"]["first_bad_version"] == version and not report["ok"]


@pytest.mark.parametrize("version", [3, 30, 60])
def test_an_inserted_event_breaks_the_chain_where_it_went(version: int) -> None:
    records = finished_export()
    extra = {**records[version - 2], "version": version}  # a copy of the event before
    later = [{**r, "version": r["version"] + 1} for r in records[version - 1 :]]
    report = audit([*records[: version - 1], extra, *later])
    assert report["chain"]["first_bad_version"] == version and not report["ok"]


# --- tampering re-chained: the attacker recomputes every hash ----------------------------------


def first_choice(records: list[Record]) -> tuple[int, int, str, str]:
    """The first seat's own pick (not auto) made from a hand of exactly two different cards:
    (its version, the version of that turn's reveal, the card picked, the other card)."""
    game = fold(SUSHI_GO, [])
    for record in records:
        data = record["data"]
        if record["type"] == "card_picked" and not data["auto"] and len(data["cards"]) == 1:
            hand = game.hands[data["seat"]]
            if len(hand) == 2 and hand[0] != hand[1] and "dummy_card" not in data:
                other = next(k for k in hand if k != data["cards"][0])
                reveal = versions_of(records, "turn_revealed", round=data["round"])
                turn = next(v for v in reveal if v > record["version"])
                return record["version"], turn, data["cards"][0], other
        game = SUSHI_GO.evolve(game, SUSHI_GO.upcast(_event(record)))
    raise AssertionError("no such pick")


def _event(record: Record) -> Any:
    from domain.decider import Event

    return Event(record["type"], record["data"], record["schema_version"])


def test_a_changed_pick_is_caught_at_the_reveal_that_contradicts_it() -> None:
    records = finished_export("gamewright-4", 3)
    version, reveal, _, other = first_choice(records)
    tampered = rechain(edited(records, version, lambda r: r["data"].update(cards=[other])))
    report = audit(tampered)
    assert report["chain"]["ok"] and report["seed"]["matches_commitment"]
    assert report["replay"]["first_bad_version"] == reveal
    assert "turn_revealed" in report["replay"]["detail"] and not report["ok"]


def test_a_changed_pick_and_reveal_is_caught_at_the_first_event_it_affects() -> None:
    """The attacker changes a pick and its reveal consistently: the hand passed on is then not
    the one recorded, and the next seat's forced last pick (S5) gives it away."""
    records = finished_export("gamewright-4", 3)
    version, reveal, picked, other = first_choice(records)
    seat, round_ = records[version - 1]["data"]["seat"], records[version - 1]["data"]["round"]

    def change_reveal(record: Record) -> None:
        for pick in record["data"]["picks"]:
            if pick["seat"] == seat:
                pick["cards"] = [other]

    tampered = edited(records, version, lambda r: r["data"].update(cards=[other]))
    tampered = rechain(edited(tampered, reveal, change_reveal))
    receiver = (seat + 1) % 4  # passes go left in round 1 (seat i to seat i + 1)
    forced = versions_of(tampered, "card_picked", seat=receiver, round=round_, auto=True)
    report = audit(tampered)
    assert report["chain"]["ok"]
    assert report["replay"]["first_bad_version"] == forced[0] > reveal
    assert not report["ok"]


def test_a_replaced_seed_does_not_match_the_commitment() -> None:
    records = finished_export()
    end = len(records)
    tampered = rechain(edited(records, end, lambda r: r["data"].update(seed="ab" * 32)))
    report = audit(tampered)
    assert report["chain"]["ok"] is True
    assert report["seed"] == {"revealed": "ab" * 32, "matches_commitment": False, "version": end}
    assert report["replay"]["ok"] is None and "not replayed" in report["replay"]["detail"]
    assert "commitment" in report["replay"]["detail"]
    assert report["complete"] and not report["ok"]


def test_a_changed_deal_breaks_the_deals_at_its_version() -> None:
    records = finished_export("gamewright-3", 4)
    deal = versions_of(records, "round_dealt", round=2)[0]

    def swap_cards(record: Record) -> None:
        hands = record["data"]["hands"]
        j = next(j for j, k in enumerate(hands[1]) if k != hands[0][0])
        hands[0][0], hands[1][j] = hands[1][j], hands[0][0]

    report = audit(rechain(edited(records, deal, swap_cards)))
    assert report["chain"]["ok"]
    assert report["deals"]["ok"] is False and report["deals"]["first_bad_version"] == deal
    assert report["replay"]["first_bad_version"] == deal
    assert "hands" in report["deals"]["detail"] and not report["ok"]


@pytest.mark.parametrize("round_", [1, 3])
def test_a_changed_round_score_breaks_the_scores_at_its_version(round_: int) -> None:
    records = finished_export()
    scored = versions_of(records, "round_scored", round=round_)[0]

    def more_tempura(record: Record) -> None:
        score = record["data"]["scores"][0]
        score["tempura"]["points"] += 5
        score["total"] += 5

    report = audit(rechain(edited(records, scored, more_tempura)))
    assert report["chain"]["ok"] and report["deals"]["ok"]
    assert report["scores"]["first_bad_version"] == scored
    assert report["points"]["first_bad_version"] == scored
    assert "tempura" in report["points"]["detail"] and "S10" in report["points"]["detail"]
    assert report["totals"] == records[-1]["data"]["totals"]  # recomputed: the honest totals
    assert not report["ok"]


def test_changed_totals_break_the_scores_at_the_end() -> None:
    records = finished_export()
    end = len(records)
    tampered = rechain(edited(records, end, lambda r: r["data"]["totals"][0].update(total=999)))
    report = audit(tampered)
    assert report["scores"]["first_bad_version"] == end
    assert report["points"]["first_bad_version"] == end
    assert report["recorded_totals"][0] == {"seat": 0, "total": 999} != report["totals"][0]


def test_a_deleted_event_re_chained_breaks_the_replay() -> None:
    records = finished_export()
    deal = versions_of(records, "round_dealt", round=2)[0]
    report = audit(rechain(records[: deal - 1] + records[deal:]))
    assert report["chain"]["ok"] and report["replay"]["first_bad_version"] == deal
    assert report["deals"]["first_bad_version"] == deal and not report["ok"]


# --- provenance -------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS)
def test_provenance_adds_up_to_every_round_and_total(variant: str) -> None:
    records = finished_export(variant, 5)
    sections = audit(records)["provenance"]
    # events name their seats (round_scored/game_ended v2)
    rounds = [
        {s["seat"]: s for s in r["data"]["scores"]} for r in records if r["type"] == "round_scored"
    ]
    assert [s["kind"] for s in sections] == ["round", "round", "round", "end"]
    totals = [0] * len(rounds[0])
    for section, scores in zip(sections, rounds, strict=False):
        for seat in section["seats"]:
            points = sum(c["points"] for c in seat["categories"])
            assert points == seat["points"] == scores[seat["seat"]]["total"]
            totals[seat["seat"]] += points
    end = sections[-1]
    ended = records[-1]["data"]
    puddings = {p["seat"]: p for p in ended["puddings"]}
    for seat in end["seats"]:
        assert seat["points"] == puddings[seat["seat"]]["points"]
        totals[seat["seat"]] += seat["points"]
    recorded = {t["seat"]: t["total"] for t in ended["totals"]}
    assert dict(enumerate(totals)) == recorded == {s["seat"]: s["total"] for s in end["seats"]}
    assert end["winners"] == ended["winners"]


def rules_named(sections: list[dict[str, Any]]) -> set[str]:
    named = set()
    for section in sections:
        for seat in section["seats"]:
            named.update(seat["rules"])
            for category in seat["categories"]:
                named.update(category["rules"])
    return named


def test_provenance_names_the_rules_of_each_edition() -> None:
    def named(variant: str) -> set[str]:
        found: set[str] = set()
        for seed in range(1, 4):
            found |= rules_named(audit(finished_export(variant, seed))["provenance"])
        return found

    gamewright, zoch, dummy = named("gamewright-4"), named("zoch-3"), named("gamewright-dummy")
    assert {"S8", "S10", "S11", "S13", "S14"} <= gamewright
    assert not {"S9", "S12", "S15", "S17"} & gamewright
    assert {"S9", "S10", "S12", "S13", "S15"} <= zoch and not {"S8", "S11", "S14"} & zoch
    assert {"S11", "S14", "S17"} <= dummy


def test_every_traced_card_was_picked_and_placed_by_the_versions_named() -> None:
    records = finished_export("gamewright-dummy", 2)
    checked = 0
    for section in audit(records)["provenance"]:
        for seat in section["seats"]:
            for category in seat["categories"]:
                for card in category["cards"] + category.get("unused", []):
                    picked, revealed = records[card["picked"] - 1], records[card["revealed"] - 1]
                    assert picked["type"] == "card_picked" and revealed["type"] == "turn_revealed"
                    taken = [*picked["data"]["cards"], picked["data"].get("dummy_card")]
                    assert card["card"] in taken
                    assert picked["version"] < revealed["version"]
                    if "wasabi" in card:
                        assert (
                            card["points"]
                            == 3 * {"egg": 1, "salmon": 2, "squid": 3}[card["card"].split("_")[0]]
                        )
                        assert card["wasabi"]["revealed"] <= revealed["version"]
                    checked += 1
    assert checked > 60


def test_a_nigiri_kept_off_a_free_wasabi_says_so() -> None:
    """Zoch (S9): the owner may decline a free wasabi; the provenance says so, so that a replay
    can explain a nigiri at its plain value beside an empty wasabi. Gamewright (S8) never does."""
    declined = 0
    for variant in ("zoch-3", "gamewright-4"):
        for seed in range(1, 6):
            records = finished_export(variant, seed)
            picks = {r["version"]: r["data"] for r in records if r["type"] == "card_picked"}
            for section in audit(records)["provenance"]:
                for seat in section["seats"]:
                    for category in seat["categories"]:
                        for card in category.get("cards", []):
                            if not card.get("declined_wasabi"):
                                continue
                            assert variant.startswith("zoch") and "wasabi" not in card
                            pick = picks[card["picked"]]
                            chosen = dict(zip(pick["cards"], pick["use_wasabi"], strict=True))
                            assert chosen[card["card"]] is False
                            assert (
                                card["points"]
                                == {"egg": 1, "salmon": 2, "squid": 3}[card["card"].split("_")[0]]
                            )
                            declined += 1
    assert declined > 0


# --- incomplete and malformed exports ----------------------------------------------------------


def redacted_export(viewer: Viewer, cut: int) -> list[Record]:
    """The export of a game stopped after ``cut`` events, redacted for ``viewer``; the hashes are
    those of the events as recorded."""
    events = finished_game("gamewright-dummy", 3)[:cut]
    state = fold(SUSHI_GO, events)
    records = export_records(events)
    for record, event in zip(records, events, strict=True):
        record["data"] = json.loads(json.dumps(SUSHI_GO.visible_event(state, event, viewer).data))
    return records


@pytest.mark.parametrize("viewer", [Viewer(0), Viewer(None)])
def test_a_redacted_export_is_reported_incomplete(viewer: Viewer) -> None:
    records = redacted_export(viewer, 50)
    report = audit(records)
    assert report["error"] is None and not report["ok"] and not report["complete"]
    first = report["redacted"][0]
    assert records[first - 1]["type"] == "round_dealt"
    assert report["chain"]["first_bad_version"] == first
    assert "redacted" in report["chain"]["detail"] and "redacted" in report["reason"]
    assert report["replay"]["ok"] is None and report["seed"]["revealed"] is None
    assert report["points"]["ok"] is True  # the rounds scored so far add up
    assert [s["kind"] for s in report["provenance"]] == ["round"]


def test_an_export_made_before_the_end_without_hashes_is_reported_incomplete() -> None:
    """The service's export of a game not over yet: redacted, and every hash null."""
    records = [{**r, "hash": None} for r in redacted_export(Viewer(1), 70)]
    report = audit_export(to_jsonl(records))
    assert report["error"] is None and not report["ok"] and not report["complete"]
    assert report["chain"]["ok"] is None and "no hashes" in report["chain"]["detail"]
    assert "redacted" in report["reason"] and report["replay"]["ok"] is None


def test_an_unfinished_export_is_reported_incomplete() -> None:
    records = finished_export()[:4]  # created, seats taken: nothing hidden yet
    report = audit(records)
    assert report["chain"]["ok"] and report["error"] is None
    assert not report["ok"] and not report["complete"] and "not over" in report["reason"]


def test_a_truncated_export_is_reported_incomplete() -> None:
    report = audit(finished_export()[:-1])
    assert report["chain"]["ok"] and not report["complete"] and not report["ok"]
    assert report["seed"]["revealed"] is None


def _lines(records: list[Record]) -> str:
    return to_jsonl(records)


@pytest.mark.parametrize(
    ("make", "error"),
    [
        (lambda r: "not json\n", "line 1 is not JSON"),
        (lambda r: _lines(r[:3]) + "{oops\n", "line 4 is not JSON"),
        (lambda r: "[1, 2]\n", "line 1 is not a JSON object"),
        (lambda r: "", "empty"),
        (lambda r: _lines([{k: v for k, v in r[0].items() if k != "hash"}]), "no 'hash'"),
        (lambda r: _lines([{**r[0], "version": "1"}]), "'version' must be an integer"),
        (lambda r: _lines([{**r[0], "data": []}]), "'data' must be a JSON object"),
        (lambda r: _lines([r[0], {**r[1], "game_id": "other"}]), "another game"),
        (lambda r: _lines(r[1:]), "the first event is 'seat_taken'"),
        (
            lambda r: _lines(rechain([{**r[0], "data": {**r[0]["data"], "game": "chess"}}])),
            "unknown game 'chess'",
        ),
        (
            lambda r: _lines(rechain([*r[:5], {**r[5], "type": "cards_burnt"}, *r[6:]])),
            "unknown Sushi Go! event type 'cards_burnt'",
        ),
    ],
)
def test_malformed_input_gives_a_report_with_an_error(make: Any, error: str) -> None:
    report = audit_export(make(finished_export()))
    assert report["ok"] is False and error in report["error"]
    json.dumps(report)


def test_any_input_gives_a_report() -> None:
    records = finished_export()
    broken = edited(records, 6, lambda r: r["data"].clear())  # a deal without hands
    for bad in ([1, 2], [{}], rechain(broken), [None]):
        report = audit(bad)  # type: ignore[arg-type]
        assert report["ok"] is False
