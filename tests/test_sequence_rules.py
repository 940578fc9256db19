"""A test (or a few) per ruling Q1–Q13 of shared/rules/sequence.md, plus views, replay and audit."""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from pathlib import Path

import pytest
from export_support import export_records
from sequence_support import SEED, discard, pass_turn, play, row, setup, types

from domain.audit import audit
from domain.decider import (
    SPECTATOR,
    CreateGame,
    DomainError,
    Event,
    MakeMove,
    TakeSeat,
    Viewer,
    commitment,
    fold,
)
from domain.sequence import SEQUENCE, Play, State
from domain.sequence.board import BOARD, CELLS_OF, CORNERS
from domain.sequence.cards import CANONICAL_DECK, DECK_COUNTS, ONE_EYED_JACKS, TWO_EYED_JACKS
from domain.sequence.game import execute, pile_order
from domain.sequence.randomplay import play_random_game, random_move
from domain.sequence.sequences import all_runs, sequences_in
from domain.shuffle import fisher_yates, random_words
from domain.sushigo.cards import CANONICAL_DECK as SUSHI_DECK
from domain.sushigo.shuffle import shuffled as sushi_shuffled

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "rules"


def start(players: int, seed: bytes = SEED, **rules: object) -> tuple[list[Event], State]:
    """A game created and filled through commands, as the service does it."""
    events, state = execute(State(), CreateGame({"players": players, **rules}, commitment(seed)))
    for seat in range(players):
        new, state = execute(state, TakeSeat(f"p{seat}", seed))
        events += new
    return events, state


def rejects(code: str, state: State, seat: int, move: object) -> DomainError:
    with pytest.raises(DomainError) as caught:
        execute(state, MakeMove(seat, move, SEED))
    assert caught.value.code == code, caught.value
    return caught.value


# --- Q1: the board --------------------------------------------------------------------------------


def test_q1_the_packaged_board_is_the_projects_board() -> None:
    shipped = json.loads((ROOT / "domain" / "sequence" / "board.json").read_text())
    assert [list(r) for r in BOARD] == shipped
    if (SHARED / "sequence-board.json").exists():  # beside a checkout of the project, as in CI
        assert shipped == json.loads((SHARED / "sequence-board.json").read_text())
    if (SHARED / "sequence.md").exists():
        assert (ROOT / "docs" / "rules" / "sequence.md").read_text() == (
            SHARED / "sequence.md"
        ).read_text(), "docs/rules/sequence.md is out of date: copy it again"


def test_q1_every_non_jack_card_shows_on_two_cells_jacks_on_none() -> None:
    assert len(BOARD) == 10 and all(len(r) == 10 for r in BOARD)
    assert {(0, 0), (0, 9), (9, 0), (9, 9)} == CORNERS
    assert Counter(code for r in BOARD for code in r) == {
        **{card: 2 for card in set(CANONICAL_DECK) if card[0] != "J"},
        "XX": 4,
    }


# --- Q2: two decks, the committed-seed shuffle ----------------------------------------------------


def test_q2_two_standard_decks() -> None:
    assert len(CANONICAL_DECK) == 104
    assert len(DECK_COUNTS) == 52 and set(DECK_COUNTS.values()) == {2}
    assert {"AS", "10H", "JD", "KC", "2D"} <= set(DECK_COUNTS)


def test_q2_the_deal_is_the_seeds_shuffle_from_the_top() -> None:
    events, state = start(4)
    deck = fisher_yates(CANONICAL_DECK, SEED)[0]
    assert [list(h) for h in state.hands] == [list(deck[i * 6 : (i + 1) * 6]) for i in range(4)]
    assert events[0].data["shuffle"] == "cardroom-shuffle-v1"
    assert state.hands != start(4, seed=b"\x01" * 32)[1].hands


def test_q2_the_shared_shuffle_keeps_sushi_gos_deals_and_resumes_its_stream() -> None:
    assert sushi_shuffled(bytes(32)) == fisher_yates(SUSHI_DECK, bytes(32))[0]
    words = random_words(SEED)
    first = [next(words) for _ in range(40)]
    resumed = random_words(SEED, start=13)
    assert [next(resumed) for _ in range(27)] == first[13:]
    deck, end = fisher_yates(CANONICAL_DECK, bytes(32))
    assert end >= 103  # one number per swap, more when one is rejected
    digest = hashlib.sha256(",".join(deck).encode()).hexdigest()
    assert digest == SEQUENCE_ZERO_SEED_DIGEST, deck[:10]


# Pins the Sequence deck's order for the all-zero seed (cardroom-shuffle-v1).
SEQUENCE_ZERO_SEED_DIGEST = "a3ac9976c451b2c6ea681d90d218e0ce46c891c4ff6fefcb564e58bdb1067179"


# --- Q3: the jacks --------------------------------------------------------------------------------


def test_q3_two_eyed_jacks_go_anywhere_empty_but_a_corner() -> None:
    assert {"JD", "JC"} == TWO_EYED_JACKS and {"JH", "JS"} == ONE_EYED_JACKS
    state = setup([["JC", "JD"], ["2S"]], {(0, 1): 1})
    rejects("corner_cell", state, 0, Play("JC", (0, 0)))
    rejects("cell_occupied", state, 0, Play("JD", (0, 1)))
    events, after = play(state, 0, "JC", (7, 7))
    assert after.chip((7, 7)) == 0 and events[0].data["cell"] == [7, 7]


def test_q3_one_eyed_jacks_remove_a_chip_and_place_none() -> None:
    state = setup([["JS", "2S"], ["3S"]], {(5, 5): 1, (6, 6): 0})
    rejects("no_opponent_chip", state, 0, Play("JS", (6, 6)))  # its own team's
    rejects("no_opponent_chip", state, 0, Play("JS", (7, 7)))  # empty
    rejects("no_opponent_chip", state, 0, Play("JS", (0, 0)))  # a corner
    events, after = play(state, 0, "JS", (5, 5))
    assert events[0].data["removed"] == [5, 5] and events[0].data["cell"] is None
    assert after.chip((5, 5)) == -1 and after.chips.count(0) == 1


# --- Q4: players, teams, turns --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("players", "teams"),
    [(2, 2), (3, 3), (4, 2), (6, 2), (6, 3), (8, 2), (9, 3), (10, 2), (12, 2), (12, 3)],
)
def test_q4_player_counts_and_teams(players: int, teams: int) -> None:
    _, state = start(players, teams=teams)
    assert state.rules is not None and state.rules.teams == teams
    assert [state.rules.team_of(s) for s in range(players)] == [s % teams for s in range(players)]
    # no two team-mates side by side, around the table
    assert all(s % teams != (s + 1) % players % teams for s in range(players))


@pytest.mark.parametrize(
    "options",
    [
        {"players": 5},
        {"players": 1},
        {"players": 13},
        {"players": 3, "teams": 2},
        {"players": 4, "teams": 3},
        {"players": 9, "teams": 2},
        {"players": 6, "teams": 4},
        {"players": True},
        {"players": 2, "advanced_jacks": "yes"},
        {"players": 2, "edition": "zoch"},
    ],
)
def test_q4_q11_invalid_rules(options: dict) -> None:
    with pytest.raises(DomainError) as caught:
        execute(State(), CreateGame(options, commitment(SEED)))
    assert caught.value.code == "invalid_rules" and caught.value.kind == "rule"


def test_q4_defaults_seat_zero_first_then_up_the_seats() -> None:
    assert start(6)[1].rules.teams == 2  # type: ignore[union-attr]
    assert start(9)[1].rules.teams == 3  # type: ignore[union-attr]
    state = setup([["7H"], ["2S"], ["3S"]])
    assert state.current == 0
    error = rejects("not_your_turn", state, 1, Play("2S", (0, 1)))
    assert error.kind == "conflict" and error.details == {"turn": 1, "seat_to_move": 0}
    _, state = play(state, 0, "7H", (4, 8))
    assert state.current == 1
    _, state = play(state, 1, "2S", (0, 1))
    assert state.current == 2 and state.chip((0, 1)) == 1


# --- Q5: hand sizes -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("players", "teams", "size"),
    [
        (2, 2, 7),
        (4, 2, 6),
        (6, 2, 5),
        (8, 2, 4),
        (10, 2, 3),
        (12, 2, 3),
        (3, 3, 6),
        (6, 3, 5),
        (9, 3, 4),
        (12, 3, 3),
    ],
)
def test_q5_hand_size(players: int, teams: int, size: int) -> None:
    _, state = start(players, teams=teams)
    assert [len(h) for h in state.hands] == [size] * players


# --- Q6: a turn -----------------------------------------------------------------------------------


def test_q6_a_card_goes_on_an_empty_cell_showing_it_then_the_service_draws() -> None:
    state = setup([["7H", "7H", "KS"], ["2S"]], {(4, 8): 1})
    rejects("card_does_not_match_cell", state, 0, Play("7H", (0, 1)))
    rejects("card_does_not_match_cell", state, 0, Play("7H", (0, 0)))
    rejects("cell_occupied", state, 0, Play("7H", (4, 8)))
    rejects("card_not_in_hand", state, 0, Play("2S", (0, 1)))
    rejects("unknown_card", state, 0, Play("1S", (0, 1)))
    rejects("invalid_cell", state, 0, Play("7H", (10, 3)))
    top = pile_order(SEED, None, 0)[0][state.pile_taken]
    events, after = play(state, 0, "7H", (5, 3))
    assert types(events) == ["card_played"]
    assert events[0].data == {
        "seat": 0,
        "turn": state.turn,
        "team": 0,
        "card": "7H",
        "cell": [5, 3],
        "removed": None,
        "drawn": top,
    }
    assert sorted(after.hands[0]) == sorted(["7H", "KS", top]) and after.chip((5, 3)) == 0
    assert after.discard[-1] == "7H" and after.pile_size == state.pile_size - 1


# --- Q7: dead cards -------------------------------------------------------------------------------


def test_q7_a_dead_card_is_swapped_once_per_turn_and_the_turn_goes_on() -> None:
    chips = {(4, 8): 1, (5, 3): 1, (0, 1): 0, (8, 6): 1}  # 7H and 2S are dead
    state = setup([["7H", "2S", "JD", "QS"], ["3S"]], chips, pile=["3S", "4S", "5S"])
    view = SEQUENCE.view(state, Viewer(0))["you"]
    assert view["dead_cards"] == ["7H", "2S"] and view["can_discard"]
    plays = {play["card"]: play["cells"] for play in view["plays"]}
    assert plays["7H"] == [] and plays["2S"] == []  # a dead card has nowhere to go
    assert sorted(plays["QS"]) == [[2, 9], [4, 1]]
    assert len(plays["JD"]) == 96 - len(chips)  # Q6: a two-eyed jack goes on any empty cell
    with pytest.raises(DomainError, match="card_not_dead"):
        discard(state, 0, "QS")  # QS can still be played
    with pytest.raises(DomainError, match="card_not_dead"):
        discard(state, 0, "JD")  # jacks are never dead
    drawn = fisher_yates(["3S", "4S", "5S"], SEED, 500)[0][0]
    events, after = discard(state, 0, "7H")
    assert types(events) == ["dead_card_discarded"]
    assert events[0].data == {"seat": 0, "turn": state.turn, "card": "7H", "drawn": drawn}
    assert after.current == 0 and after.turn == state.turn and after.discarded
    with pytest.raises(DomainError, match="already_discarded"):
        discard(after, 0, "2S")
    cell = next(c for c in CELLS_OF[drawn] if after.chip(c) == -1)
    _, after = play(after, 0, drawn, cell)  # the replacement is played the same turn
    assert after.current == 1 and not after.discarded


# --- Q8: reshuffles, smaller hands, passes, the draw ----------------------------------------------


def test_q8_an_empty_pile_is_refilled_from_the_discard_pile_with_the_seeds_stream() -> None:
    for rng_seed in range(50):  # the first of these games long enough to reshuffle
        events, state = play_random_game({"players": 2}, random.Random(rng_seed))
        reshuffles = [e for e in events if e.type == "deck_reshuffled"]
        if reshuffles:
            break
    assert reshuffles
    seed = bytes.fromhex(state.seed)  # type: ignore[arg-type]
    base, offset = None, 0
    for number, event in enumerate(reshuffles, start=1):
        assert event.data["reshuffle"] == number
        assert event.data["stream_offset"] == pile_order(seed, base, offset)[1]
        base, offset = tuple(event.data["cards"]), event.data["stream_offset"]
    # the draws after the first reshuffle follow its shuffle
    first = events.index(reshuffles[0])
    later = [
        e.data["drawn"]
        for e in events[first:]
        if e.type in ("card_played", "dead_card_discarded") and e.data["drawn"]
    ]
    pile = fisher_yates(reshuffles[0].data["cards"], seed, reshuffles[0].data["stream_offset"])[0]
    assert later[:5] == list(pile[:5])


def test_q8_with_no_card_to_draw_hands_shrink_and_the_played_card_is_reshuffled() -> None:
    state = setup([["7H", "KS"], ["2S"]], pile=[])
    events, after = play(state, 0, "7H", (4, 8))
    assert events[0].data["drawn"] is None and after.hands[0] == ("KS",)
    assert types(events) == ["card_played", "deck_reshuffled"]
    assert events[1].data["cards"] == ["7H"] and after.pile_size == 1 and after.discard == ()


def test_q8_a_seat_that_cannot_play_is_passed_and_everyone_passing_is_a_draw() -> None:
    state = setup([["JS", "2S"], ["JH"]], {(5, 5): 1})
    events, after = play(state, 0, "JS", (5, 5))
    # seat 1 holds only a one-eyed jack and the board has no chip of another team: passed
    assert types(events) == ["card_played", "turn_passed"]
    assert events[1].data == {"seat": 1, "turn": state.turn + 1, "auto": True}
    assert after.current == 0 and after.passes == 1

    state = setup([["JH"], ["JS"]])
    with pytest.raises(DomainError, match="legal_play_exists"):
        pass_turn(setup([["7H"], ["JS"]]), 0)
    events, after = pass_turn(state, 0)
    assert types(events) == ["turn_passed", "turn_passed", "game_ended"]
    assert events[0].data["auto"] is False and events[1].data["auto"] is True
    assert events[-1].data["result"] == "draw" and events[-1].data["winners"] == []
    assert after.over and after.result == "draw"


# --- Q9: sequences, corners -----------------------------------------------------------------------


def test_q9_five_in_a_row_column_or_diagonal_corners_counting_for_everyone() -> None:
    chips = {**row(0, range(1, 4), 0), **{(r, 0): 1 for r in range(1, 5)}}
    state = setup([["5S"], ["KS"]], chips)
    assert state.sequences() == (0, 1)  # column 0 with the corner (0, 0): team 1's
    events, after = play(state, 0, "5S", (0, 4))
    assert types(events) == ["card_played", "sequence_completed"]
    assert events[1].data == {
        "seat": 0,
        "team": 0,
        "count": 1,
        "sequences": [{"team": 0, "cells": [[0, c] for c in range(5)], "count": 1}],
    }
    assert after.sequences() == (1, 1)  # the same corner serves both teams
    diagonal = {(i, i): 0 for i in range(1, 6)}
    assert setup([["2S"], ["3S"]], diagonal).sequences() == (1, 0)
    anti = {(i, 9 - i): 1 for i in range(2, 7)}
    assert setup([["2S"], ["3S"]], anti).sequences() == (0, 1)
    assert setup([["2S"], ["3S"]], row(5, range(1, 5), 0)).sequences() == (0, 0)


# --- Q10: locked chips, shared cells, long lines, any order ---------------------------------------


def test_q10_chips_of_a_sequence_are_locked() -> None:
    state = setup([["JH"], ["2S"]], {**row(0, range(1, 5), 1), (5, 5): 1})
    error = rejects("chip_locked", state, 0, Play("JH", (0, 2)))
    assert "Q10" in error.message
    _, after = play(state, 0, "JH", (5, 5))  # a chip outside the sequence can go
    assert after.chip((5, 5)) == -1


@pytest.mark.parametrize(("length", "count"), [(4, 0), (5, 1), (6, 1), (8, 1), (9, 2), (10, 2)])
def test_q10_a_line_of_six_to_eight_is_one_sequence_nine_or_ten_two(
    length: int, count: int
) -> None:
    assert sequences_in(length) == count
    chips = row(5, range(length), 0)
    assert setup([["2S"], ["3S"]], chips).sequences() == (count, 0)


def test_q10_two_sequences_may_share_one_cell_and_a_long_line_wins() -> None:
    cross = {**row(2, range(1, 6), 0), **{(r, 3): 0 for r in range(0, 5)}}
    assert setup([["2S"], ["3S"]], cross).sequences() == (2, 0)  # sharing (2, 3)
    state = setup([["9S", "KS"], ["3S"]], row(0, range(1, 8), 0))  # 8 with the corner: one
    assert state.sequences() == (1, 0)
    events, after = play(state, 0, "9S", (0, 8))  # the whole row with both corners: two
    assert types(events) == ["card_played", "sequence_completed", "game_ended"]
    assert events[1].data["count"] == 2 and after.winners == (0,)


def test_q10_counting_does_not_depend_on_the_order_of_placement() -> None:
    chips = {**row(3, range(0, 9), 0), **{(r, 4): 0 for r in range(4, 9)}, **row(9, range(1, 5), 1)}
    forward = setup([["2S"], ["3S"]], chips)
    backward = setup([["2S"], ["3S"]], dict(reversed(list(chips.items()))))
    assert forward.runs == backward.runs == all_runs(forward.chips)
    assert forward.sequences() == (3, 1)


# --- Q11: advanced jacks --------------------------------------------------------------------------


def test_q11_advanced_jacks_break_a_sequence() -> None:
    state = setup([["JS"], ["2S"]], row(0, range(1, 5), 1), advanced_jacks=True)
    assert state.sequences() == (0, 1)
    events, after = play(state, 0, "JS", (0, 2))
    assert events[0].data["removed"] == [0, 2] and after.sequences() == (0, 0)
    assert SEQUENCE.view(after, SPECTATOR)["sequences"] == []


# --- Q12: winning ---------------------------------------------------------------------------------


def test_q12_two_teams_need_two_sequences() -> None:
    state = setup([["5S", "KS"], ["3S"]], row(0, range(1, 4), 0))
    events, after = play(state, 0, "5S", (0, 4))
    assert after.sequences() == (1, 0) and not after.over
    assert types(events) == ["card_played", "sequence_completed"]


@pytest.mark.parametrize("players", [3, 6])
def test_q12_three_teams_need_one_and_the_game_ends_at_once(players: int) -> None:
    hands = [["2S"] for _ in range(players)]
    hands[2] = ["5S", "KS"]
    state = setup(hands, row(0, range(1, 4), 2), to_move=2, teams=3)
    events, after = play(state, 2, "5S", (0, 4))
    assert types(events) == ["card_played", "sequence_completed", "game_ended"]
    end = events[-1].data
    assert end["result"] == "win" and end["team"] == 2
    assert end["winners"] == list(range(2, players, 3)) and end["totals"] == [
        {"team": 0, "total": 0},
        {"team": 1, "total": 0},
        {"team": 2, "total": 1},
    ]
    assert commitment(bytes.fromhex(end["seed"])) == state.seed_commitment
    assert after.over and after.current is None
    with pytest.raises(DomainError, match="game_over"):
        play(after, 0, "2S", (0, 1))


# --- Q13: no table talk ---------------------------------------------------------------------------


def test_q13_table_talk_is_not_modelled() -> None:
    with pytest.raises(DomainError, match="invalid_rules"):
        execute(State(), CreateGame({"players": 4, "no_table_talk": True}, commitment(SEED)))
    events, _ = play_random_game({"players": 4}, random.Random(13))
    assert {e.type for e in events} <= {
        "game_created",
        "seat_taken",
        "game_started",
        "cards_dealt",
        "card_played",
        "dead_card_discarded",
        "turn_passed",
        "sequence_completed",
        "deck_reshuffled",
        "game_ended",
    }


# --- views, replay, audit -------------------------------------------------------------------------


def test_views_show_a_seat_its_own_hand_only_and_hide_what_others_drew() -> None:
    events, state = start(2)
    seat0 = SEQUENCE.view(state, Viewer(0))
    assert seat0["you"]["hand"] == list(state.hands[0]) and "hand" not in seat0["seats"][1]
    assert "you" not in SEQUENCE.view(state, SPECTATOR) and "draw_pile" not in seat0
    new, state = execute(state, MakeMove(0, random_move(state, 0, random.Random(0)), SEED))
    for viewer in (Viewer(1), SPECTATOR):
        dealt = SEQUENCE.visible_event(state, events[-1], viewer).data
        assert dealt["hands"][0] is None and dealt["hand_sizes"] == [7, 7]
        played = SEQUENCE.visible_event(state, new[0], viewer).data
        assert played["drawn"] is None and played["redacted"] == ["drawn"]
    assert SEQUENCE.visible_event(state, new[0], Viewer(0)) == new[0]


def test_after_the_end_everything_is_public_and_the_audit_passes() -> None:
    events, state = play_random_game({"players": 6, "teams": 3}, random.Random(6))
    assert state.over
    spectator = SEQUENCE.view(state, SPECTATOR)
    assert all("hand" in seat for seat in spectator["seats"]) and "draw_pile" in spectator
    hands = [c for seat in spectator["seats"] for c in seat["hand"]]
    every = hands + spectator["draw_pile"] + spectator["discard_pile"]
    assert Counter(every) == DECK_COUNTS
    assert all(SEQUENCE.visible_event(state, e, SPECTATOR) == e for e in events)
    sheet = SEQUENCE.score_sheet(state)
    assert [t["sequences"] for t in sheet["teams"]] == list(state.totals)
    assert sheet["winners"] == list(state.winners)

    records = [
        {"game_id": "g", "version": v, "type": e.type, "schema_version": 1, "data": e.data}
        for v, e in enumerate(events, start=1)
    ]
    report = audit(export_records(events))
    assert report["ok"], report
    assert report["winners"] == list(state.winners)
    assert [t["total"] for t in report["totals"]] == list(state.totals)
    end = report["provenance"][-1]
    assert end["kind"] == "end" and [s["points"] for s in end["seats"]] == list(state.totals)
    for team in end["seats"]:
        for run in team["categories"]:
            for chip in run["cards"]:
                played = records[chip["played"] - 1]
                assert played["type"] == "card_played" and played["data"]["cell"] == chip["cell"]


def test_upcast_is_the_identity_for_known_events() -> None:
    events, _ = start(2)
    assert all(SEQUENCE.upcast(e) == e for e in events)
    with pytest.raises(ValueError):
        SEQUENCE.upcast(Event("round_dealt", {}))
    with pytest.raises(ValueError):
        SEQUENCE.upcast(Event("card_played", {}, 2))


def test_a_game_ended_v1_names_its_teams_once_upcast_and_still_audits() -> None:
    """game_ended v1 listed the sequences per team by position (Q12); v2 names each team."""
    events, state = play_random_game({"players": 6, "teams": 3}, random.Random(6))
    end = events[-1]
    assert end.schema_version == 2 and [t["team"] for t in end.data["totals"]] == [0, 1, 2]
    v1 = Event(end.type, {**end.data, "totals": [t["total"] for t in end.data["totals"]]}, 1)
    assert SEQUENCE.upcast(v1) == end
    old = [*events[:-1], v1]
    assert fold(SEQUENCE, old) == state
    records = export_records(old)  # hashed as recorded: v1
    assert records[-1]["schema_version"] == 1
    report = audit(records)
    assert report["ok"], report
    assert report["recorded_totals"] == report["totals"] == end.data["totals"]


def test_a_wrong_seed_cannot_deal_or_draw() -> None:
    _, state = execute(State(), CreateGame({"players": 2}, commitment(SEED)))
    _, state = execute(state, TakeSeat("a", SEED))
    with pytest.raises(ValueError, match="commitment"):
        execute(state, TakeSeat("b", bytes(32)))


def test_fold_of_the_events_is_the_state() -> None:
    events, state = play_random_game({"players": 4, "advanced_jacks": True}, random.Random(4))
    assert fold(SEQUENCE, events) == state
