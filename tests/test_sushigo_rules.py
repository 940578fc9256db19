"""A test (or a few) per ruling S1–S18 of shared/rules/sushi-go.md, and the rulebooks' examples."""

from __future__ import annotations

import hashlib
import random
from collections import Counter

import pytest
from sushigo_support import SEED, dealt, pick, play_turn, types

from domain.decider import (
    SPECTATOR,
    CreateGame,
    DomainError,
    MakeMove,
    TakeSeat,
    Viewer,
    commitment,
    fold,
)
from domain.sushigo import SUSHI_GO, Pick, State
from domain.sushigo.cards import CANONICAL_DECK, DECK_COUNTS
from domain.sushigo.game import execute
from domain.sushigo.randomplay import play_random_game
from domain.sushigo.scoring import maki_points, pudding_points, round_breakdowns, winners
from domain.sushigo.shuffle import shuffled
from domain.sushigo.state import Tableau


def start(players: int, seed: bytes = SEED, **rules: object) -> tuple[list, State]:
    """A game created and filled through commands, as the service does it."""
    events, state = execute(State(), CreateGame({"players": players, **rules}, commitment(seed)))
    for seat in range(players):
        new, state = execute(state, TakeSeat(f"p{seat}", seed))
        events += new
    return events, state


def rejects(code: str, state: State, seat: int, *cards: str, **kw: object) -> DomainError:
    with pytest.raises(DomainError) as caught:
        pick(state, seat, *cards, **kw)  # type: ignore[arg-type]
    assert caught.value.code == code, caught.value
    return caught.value


# --- S1: the deck ----------------------------------------------------------------------------


def test_s1_deck_has_108_cards_of_twelve_kinds() -> None:
    assert len(CANONICAL_DECK) == 108
    assert DECK_COUNTS == {
        "tempura": 14,
        "sashimi": 14,
        "dumpling": 14,
        "maki_2": 12,
        "maki_3": 8,
        "maki_1": 6,
        "salmon_nigiri": 10,
        "squid_nigiri": 5,
        "egg_nigiri": 5,
        "pudding": 10,
        "wasabi": 6,
        "chopsticks": 4,
    }


def test_s1_unknown_card_names_are_refused() -> None:
    state = dealt([["tempura", "sashimi"], ["dumpling", "wasabi"], ["pudding", "maki_1"]])
    error = rejects("unknown_card", state, 0, "mussels")
    assert error.kind == "rule"


# --- S2: shuffle and hand sizes ----------------------------------------------------------------


@pytest.mark.parametrize(("players", "size"), [(2, 10), (3, 9), (4, 8), (5, 7)])
def test_s2_hand_size_depends_on_player_count(players: int, size: int) -> None:
    _, state = start(players)
    assert [len(h) for h in state.hands] == [size] * players
    deck = shuffled(SEED)
    assert state.hands[0] == deck[:size]
    assert state.hands[players - 1] == deck[(players - 1) * size : players * size]


def test_s2_s17_dummy_variant_deals_three_hands_of_nine() -> None:
    _, state = start(2, dummy=True)
    # seat 0 controls the dummy on the first turn and has already drawn its top card
    assert [len(h) for h in state.hands] == [10, 9]
    assert len(state.dummy_pile) == 8
    deck = shuffled(SEED)
    assert state.hands[0] == (*deck[:9], deck[18])
    assert state.dummy_pile == deck[19:27]


def test_s2_the_deal_depends_only_on_the_seed() -> None:
    assert start(4)[1].hands == start(4)[1].hands
    assert start(4)[1].hands != start(4, seed=b"\x01" * 32)[1].hands


# --- S3: three rounds from one pile ----------------------------------------------------------


def test_s3_rounds_deal_from_the_remaining_pile_never_reshuffled() -> None:
    events, state, _ = play_random_game({"players": 3}, random.Random(3))
    deals = [e.data["hands"] for e in events if e.type == "round_dealt"]
    assert len(deals) == 3
    seed = bytes.fromhex(state.seed)  # type: ignore[arg-type]
    deck = shuffled(seed)
    for number, hands in enumerate(deals):
        flat = [card for hand in hands for card in hand]
        assert flat == list(deck[number * 27 : (number + 1) * 27])


def test_s3_played_cards_are_discarded_but_puddings_stay() -> None:
    hands = [["pudding", "tempura"], ["pudding", "pudding"], ["sashimi", "maki_1"]]
    state = dealt(hands)
    events, state = play_turn(state, ["pudding"], ["pudding"], ["sashimi"])
    # the last card of each hand is picked automatically (S5), the round is scored, round 2 dealt
    assert types(events)[-2:] == ["round_scored", "round_dealt"]
    assert state.round == 2
    # seat 1's second pudding was passed to seat 2 and auto-picked there
    assert state.puddings == (1, 1, 1)
    assert Counter(state.discard) == Counter(["tempura", "sashimi", "maki_1"])
    assert all(t == Tableau() for t in state.tableaux)


# --- S4: simultaneous secret picks, final once recorded ---------------------------------------


def test_s4_a_pick_is_final() -> None:
    state = dealt([["tempura", "sashimi", "egg_nigiri"]] * 3)
    _, state = pick(state, 1, "tempura")
    error = rejects("already_picked", state, 1, "sashimi")
    assert error.kind == "conflict"


def test_s4_nothing_is_revealed_until_everyone_picked_then_hands_pass_left() -> None:
    hands = [["tempura", "sashimi", "egg_nigiri"], ["maki_1", "maki_2", "maki_3"]]
    hands.append(["dumpling", "pudding", "wasabi"])
    state = dealt(hands)
    events, state = pick(state, 0, "tempura")
    assert types(events) == ["card_picked"]
    assert state.tableaux[0].cards == ()
    _, state = pick(state, 1, "maki_3")
    events, state = pick(state, 2, "wasabi")
    assert types(events) == ["card_picked", "turn_revealed"]
    assert [t.cards for t in state.tableaux] == [("tempura",), ("maki_3",), ("wasabi",)]
    # seat i passes to seat i + 1: seat 1 now holds what seat 0 kept
    assert state.hands == (("dumpling", "pudding"), ("sashimi", "egg_nigiri"), ("maki_1", "maki_2"))
    assert state.turn == 2


def test_s4_alternate_direction_passes_right_in_round_two() -> None:
    _, state = start(3, pass_direction="alternate")
    for _turn in range(9):  # play round 1 out with the first card of each hand
        for seat in range(3):
            if state.picks[seat] is None:
                _, state = pick(state, seat, state.hands[seat][0])
    assert state.round == 2
    before = state.hands
    _, state = play_turn(state, [before[0][0]], [before[1][0]], [before[2][0]])
    # right: seat i passes to seat i - 1, so seat 0 now holds seat 1's rest
    assert state.hands[0] == before[1][1:]
    assert state.hands[2] == before[0][1:]


# --- S5: the automatic last card -----------------------------------------------------------------


def test_s5_the_last_card_is_picked_by_the_service() -> None:
    state = dealt([["tempura", "sashimi"], ["maki_1", "maki_2"], ["egg_nigiri", "pudding"]])
    events, state = play_turn(state, ["tempura"], ["maki_1"], ["pudding"])
    auto = [e for e in events if e.type == "card_picked" and e.data["auto"]]
    # hands passed left: seat 0 now holds seat 2's egg nigiri, and so on
    assert [(e.data["seat"], e.data["cards"]) for e in auto] == [
        (0, ["egg_nigiri"]),
        (1, ["sashimi"]),
        (2, ["maki_2"]),
    ]
    assert "round_scored" in types(events)


def test_s5_zoch_last_nigiri_with_free_wasabi_is_picked_onto_it() -> None:
    """S5 with S9's default (issue 39, item 8): the round ends with the last card (S3) and a
    wasabi alone scores nothing (S10), so the service picks a last nigiri onto the free wasabi
    like any other last card; no seat is left choosing for the table to see."""
    hands = [["wasabi", "egg_nigiri"], ["egg_nigiri", "maki_2"], ["tempura", "pudding"]]
    state = dealt([hands[0], hands[2], hands[1]], edition="zoch", created={"last_card_auto": True})
    events, state = play_turn(state, ["wasabi"], ["tempura"], ["maki_2"])
    auto = [e.data for e in events if e.type == "card_picked" and e.data["auto"]]
    assert [(d["seat"], d["cards"]) for d in auto] == [
        (0, ["egg_nigiri"]),  # seat 2's, passed left: seat 0 has the free wasabi
        (1, ["egg_nigiri"]),  # no wasabi
        (2, ["pudding"]),
    ]
    assert all("use_wasabi" not in d for d in auto)  # S9's default: onto the wasabi
    scored = next(e for e in events if e.type == "round_scored")
    assert scored.data["scores"][0]["nigiri"]["points"] == 3  # egg 1, tripled (S10)
    assert state.round == 2


def test_s5_zoch_nigiri_with_free_wasabi_was_a_decision_before_issue_39() -> None:
    """A game created before issue 39 (no ``last_card_auto`` in ``game_created``) is re-decided
    as it was played: its seat chose (S9), so its recorded pick and audit still hold."""
    hands = [["wasabi", "egg_nigiri"], ["maki_1", "maki_2"], ["tempura", "pudding"]]
    state = dealt(hands, edition="zoch")
    events, state = play_turn(state, ["wasabi"], ["maki_1"], ["tempura"])
    # seat 1 now holds the egg nigiri but has no wasabi: automatic; seat 2 holds maki_2: automatic;
    # seat 0 holds pudding: automatic. Nobody has a nigiri on a free wasabi here.
    assert state.round == 2
    hands = [["wasabi", "egg_nigiri"], ["egg_nigiri", "maki_2"], ["tempura", "pudding"]]
    state = dealt([hands[0], hands[2], hands[1]], edition="zoch")
    events, state = play_turn(state, ["wasabi"], ["tempura"], ["maki_2"])
    # seat 0 has a free wasabi and is passed an egg nigiri: they must choose (S9)
    assert state.picks[0] is None and state.hands[0] == ("egg_nigiri",)
    assert state.picks[1] is not None and state.picks[2] is not None
    events, state = pick(state, 0, "egg_nigiri", wasabi=[False])
    assert state.round == 2


# --- S6/S7: chopsticks ----------------------------------------------------------------------------


def chopsticks_ready(edition: str = "gamewright") -> State:
    hands = [
        ["chopsticks", "tempura", "tempura", "sashimi"],
        ["maki_1", "maki_2", "maki_3", "egg_nigiri"],
        ["dumpling", "dumpling", "pudding", "wasabi"],
    ]
    state = dealt(hands, edition=edition)
    _, state = play_turn(state, ["chopsticks"], ["maki_1"], ["dumpling"])
    return state


def test_s6_two_cards_need_chopsticks_from_an_earlier_turn() -> None:
    state = dealt([["chopsticks", "tempura", "sashimi"]] * 3)
    error = rejects("chopsticks_not_available", state, 0, "chopsticks", "tempura")
    assert "earlier turn" in error.message


def test_s6_s7_chopsticks_take_two_cards_in_order_and_go_back_into_the_hand() -> None:
    state = chopsticks_ready()
    # seat 0 now holds seat 2's rest (dumpling, pudding, wasabi)
    assert state.hands[0] == ("dumpling", "pudding", "wasabi")
    events, state = pick(state, 0, "wasabi", "dumpling")
    assert events[0].data["chopsticks"] is True
    _, state = pick(state, 1, "tempura")
    _, state = pick(state, 2, "maki_2")
    assert state.tableaux[0].cards == ("wasabi", "dumpling")
    # S7: seat 0 passed on its last card and the chopsticks: hands stay equal in size
    assert [len(h) for h in state.hands] == [2, 2, 2]
    assert "chopsticks" in state.hands[1]


def test_s6_at_most_one_chopsticks_a_turn_and_a_new_one_is_not_usable_yet() -> None:
    state = chopsticks_ready()
    three = rejects("wrong_number_of_cards", state, 0, "dumpling", "pudding", "wasabi")
    # seat 1 has no chopsticks on the table: two cards are refused
    two = rejects("chopsticks_not_available", state, 1, "tempura", "sashimi")
    assert three.message and two.message  # each says what to do instead


def test_s6_taking_a_chopsticks_card_as_one_of_the_two_is_allowed() -> None:
    hands = [
        ["chopsticks", "tempura", "sashimi"],
        ["maki_1", "maki_2", "maki_3"],
        ["dumpling", "chopsticks", "pudding"],
    ]
    state = dealt(hands)
    _, state = play_turn(state, ["chopsticks"], ["maki_1"], ["dumpling"])
    assert state.hands[0] == ("chopsticks", "pudding")
    _, state = pick(state, 0, "pudding", "chopsticks")
    _, state = pick(state, 1, "tempura")
    events, state = pick(state, 2, "maki_2")
    revealed = next(e for e in events if e.type == "turn_revealed").data["picks"][0]
    assert revealed["cards"] == ["pudding", "chopsticks"]
    # the new chopsticks stays on the table; the used one went into the hand passed to seat 1,
    # whose last card it then was (S5)
    auto = [e.data for e in events if e.type == "card_picked" and e.data["auto"]]
    assert {"seat": 1, "cards": ["chopsticks"]}.items() <= auto[1].items()


def test_s6_chopsticks_need_two_distinct_cards_in_hand() -> None:
    state = chopsticks_ready()
    refused = rejects("card_not_in_hand", state, 0, "dumpling", "dumpling")
    assert refused.message  # says which card the hand lacks a second of


# --- S8/S9: wasabi ------------------------------------------------------------------------------


def wasabi_game(edition: str) -> State:
    hands = [
        ["chopsticks", "tempura", "tempura", "tempura"],
        ["maki_1", "maki_2", "maki_3", "dumpling"],
        ["tempura", "wasabi", "squid_nigiri", "salmon_nigiri"],
    ]
    state = dealt(hands, edition=edition)
    _, state = play_turn(state, ["chopsticks"], ["maki_1"], ["tempura"])
    assert state.hands[0] == ("wasabi", "squid_nigiri", "salmon_nigiri")
    return state  # seat 0 holds the wasabi hand and may use chopsticks


def test_s8_wasabi_then_nigiri_in_one_pick_triples_the_nigiri() -> None:
    state = wasabi_game("gamewright")
    _, state = pick(state, 0, "wasabi", "squid_nigiri")
    _, state = pick(state, 1, "tempura")
    _, state = pick(state, 2, "maki_2")
    assert state.tableaux[0].dipped == ("squid_nigiri",)
    assert round_breakdowns(state.tableaux, True)[0]["nigiri"]["points"] == 9


def test_s8_nigiri_then_wasabi_leaves_the_nigiri_plain() -> None:
    state = wasabi_game("gamewright")
    _, state = pick(state, 0, "squid_nigiri", "wasabi")
    _, state = pick(state, 1, "tempura")
    _, state = pick(state, 2, "maki_2")
    assert state.tableaux[0].dipped == ()
    assert state.tableaux[0].free_wasabi == 1
    assert round_breakdowns(state.tableaux, True)[0]["nigiri"]["points"] == 3


def test_s8_one_nigiri_per_wasabi_and_mandatory_in_gamewright() -> None:
    tableau = Tableau(("wasabi", "squid_nigiri", "salmon_nigiri"), ("squid_nigiri",))
    assert round_breakdowns([tableau], True)[0]["nigiri"]["points"] == 9 + 2
    state = wasabi_game("gamewright")
    rejects("wasabi_choice_not_allowed", state, 0, "wasabi", "squid_nigiri", wasabi=[True, False])


def test_s9_zoch_may_decline_wasabi_per_nigiri() -> None:
    state = wasabi_game("zoch")
    rejects("wrong_number_of_wasabi_choices", state, 0, "squid_nigiri", wasabi=[True, False])
    _, state = pick(state, 0, "wasabi", "salmon_nigiri", wasabi=[True, False])
    _, state = pick(state, 1, "tempura")
    _, state = pick(state, 2, "maki_2")
    assert state.tableaux[0].dipped == ()
    assert state.tableaux[0].free_wasabi == 1


def test_s9_zoch_default_is_to_use_the_wasabi() -> None:
    state = wasabi_game("zoch")
    _, state = pick(state, 0, "wasabi", "salmon_nigiri")
    _, state = pick(state, 1, "tempura")
    _, state = pick(state, 2, "maki_2")
    assert state.tableaux[0].dipped == ("salmon_nigiri",)


# --- S10: set scores ----------------------------------------------------------------------------


def test_s10_card_scores() -> None:
    cards = (
        ["tempura"] * 5  # two pairs: 10
        + ["sashimi"] * 7  # two triples: 20
        + ["dumpling"] * 6  # 5 or more: 15
        + ["egg_nigiri", "salmon_nigiri", "squid_nigiri", "wasabi", "chopsticks"]
    )
    sheet = round_breakdowns([Tableau(tuple(cards))], True)[0]
    assert sheet["tempura"] == {"count": 5, "points": 10}
    assert sheet["sashimi"] == {"count": 7, "points": 20}
    assert sheet["dumpling"] == {"count": 6, "points": 15}
    assert sheet["nigiri"]["points"] == 6
    assert sheet["wasabi"]["points"] == 0
    assert sheet["total"] == 10 + 20 + 15 + 6


@pytest.mark.parametrize(("count", "points"), [(0, 0), (1, 1), (2, 3), (3, 6), (4, 10), (5, 15)])
def test_s10_dumplings(count: int, points: int) -> None:
    sheet = round_breakdowns([Tableau(("dumpling",) * count)], True)[0]
    assert sheet["dumpling"]["points"] == points


# --- S11/S12: maki ------------------------------------------------------------------------------


def test_s11_gamewright_maki_rulebook_example() -> None:
    assert maki_points([5, 3, 3, 2], split=True) == [6, 1, 1, 0]


def test_s11_a_tie_for_most_splits_and_leaves_no_second_place() -> None:
    assert maki_points([4, 4, 4, 2], split=True) == [2, 2, 2, 0]
    assert maki_points([4, 4, 2, 1], split=True) == [3, 3, 0, 0]


def test_s11_only_seats_with_maki_take_part() -> None:
    assert maki_points([3, 0, 0], split=True) == [6, 0, 0]
    assert maki_points([0, 0, 0], split=True) == [0, 0, 0]


def test_s12_zoch_maki_rulebook_example_and_full_points_on_ties() -> None:
    assert maki_points([5, 3, 3, 2], split=False) == [6, 3, 3, 0]
    assert maki_points([4, 4, 2, 1], split=False) == [6, 6, 3, 0]


def test_s11_s12_maki_icons_come_from_the_cards() -> None:
    tableaux = [Tableau(("maki_3", "maki_2")), Tableau(("maki_3",)), Tableau(("maki_1",))]
    assert [s["maki"] for s in round_breakdowns(tableaux, True)] == [
        {"icons": 5, "points": 6},
        {"icons": 3, "points": 3},
        {"icons": 1, "points": 0},
    ]


# --- S13–S15: puddings at the end ----------------------------------------------------------------


def test_s13_puddings_are_scored_after_round_three_then_the_game_ends() -> None:
    events, state, _ = play_random_game({"players": 4}, random.Random(13))
    assert types(events)[-2:] == ["round_scored", "game_ended"]
    assert [e.data["round"] for e in events if e.type == "round_scored"] == [1, 2, 3]
    end = events[-1].data
    assert [p["count"] for p in end["puddings"]] == list(state.puddings)
    assert (
        [p["seat"] for p in end["puddings"]] == [t["seat"] for t in end["totals"]] == [0, 1, 2, 3]
    )
    round_totals = [sum(r[s]["total"] for r in state.round_scores) for s in range(4)]
    assert [t["total"] for t in end["totals"]] == [
        t + p["points"] for t, p in zip(round_totals, end["puddings"], strict=True)
    ]


def test_s14_gamewright_pudding_rulebook_example() -> None:
    assert pudding_points([4, 3, 0, 0], split=True, penalty=True) == [6, 0, -3, -3]


def test_s14_each_loses_six_floor_divided_not_floor_of_negative() -> None:
    # 6 // 4 == 1, whereas -6 // 4 == -2: each of four tied for fewest loses 1
    assert pudding_points([5, 0, 0, 0, 0], split=True, penalty=True) == [6, -1, -1, -1, -1]
    assert pudding_points([2, 2, 0, 0, 0], split=True, penalty=True) == [3, 3, -2, -2, -2]


def test_s14_all_equal_scores_nothing_and_two_players_lose_nothing() -> None:
    assert pudding_points([2, 2, 2], split=True, penalty=True) == [0, 0, 0]
    assert pudding_points([3, 1], split=True, penalty=False) == [6, 0]


def test_s15_zoch_ties_get_full_points() -> None:
    assert pudding_points([4, 4, 0, 0], split=False, penalty=True) == [6, 6, -6, -6]


# --- S16: winners -------------------------------------------------------------------------------


def test_s16_highest_total_wins() -> None:
    assert winners([30, 40, 35], [0, 0, 5], players=3) == [1]


def test_s16_a_tie_goes_to_the_most_puddings_else_the_win_is_shared() -> None:
    assert winners([40, 40, 35], [1, 3, 5], players=3) == [1]
    assert winners([40, 40, 35], [2, 2, 5], players=3) == [0, 1]


# --- S17: the 2-player dummy variant ----------------------------------------------------------


def dummy_game() -> State:
    return dealt(
        [
            ["tempura", "sashimi", "chopsticks"],
            ["maki_1", "maki_2", "maki_3"],
        ],
        dummy_pile=["pudding", "wasabi", "egg_nigiri"],
    )


def test_s17_only_for_two_player_gamewright() -> None:
    for options in (
        {"players": 3, "dummy": True},
        {"players": 3, "edition": "zoch", "dummy": True},
    ):
        with pytest.raises(DomainError) as caught:
            execute(State(), CreateGame(options, "c"))
        assert caught.value.code == "invalid_rules"


def test_s17_the_controller_draws_and_names_the_dummys_card() -> None:
    state = dummy_game()
    assert state.controller == 0
    assert state.hands[0] == ("tempura", "sashimi", "chopsticks", "pudding")
    rejects("dummy_card_missing", state, 0, "tempura")
    rejects("dummy_card_not_allowed", state, 1, "maki_1", dummy="maki_2")
    rejects("card_not_in_hand", state, 0, "tempura", dummy="tempura")
    _, state = pick(state, 0, "tempura", dummy="pudding")
    _, state = pick(state, 1, "maki_1")
    assert state.tableaux[2].cards == ("pudding",)
    # hands swap; control alternates; seat 1 drew the next top card
    assert state.controller == 1
    assert state.hands == (("maki_2", "maki_3"), ("sashimi", "chopsticks", "wasabi"))


def test_s17_control_alternates_across_rounds_and_the_dummy_is_scored_but_never_wins() -> None:
    events, state, _ = play_random_game({"players": 2, "dummy": True}, random.Random(17))
    deals = [i for i, e in enumerate(events) if e.type == "round_dealt"]
    assert len(deals) == 3
    turns = [e.data for e in events if e.type == "turn_revealed"]
    assert len(turns) == 27
    controllers = [next(p["seat"] for p in t["picks"] if "dummy_card" in p) for t in turns]
    assert controllers == [i % 2 for i in range(27)]
    end = events[-1].data
    assert len(end["totals"]) == 3 and len(end["puddings"]) == 3
    assert 2 not in end["winners"]


def test_s17_three_scored_seats_bring_the_pudding_penalty() -> None:
    events, state, _ = play_random_game({"players": 2, "dummy": True}, random.Random(5))
    counts = [p["count"] for p in events[-1].data["puddings"]]
    assert [p["points"] for p in events[-1].data["puddings"]] == pudding_points(
        counts, split=True, penalty=True
    )


# --- S18: the fair shuffle ------------------------------------------------------------------------


def test_s18_the_first_event_commits_to_the_seed_and_the_last_reveals_it() -> None:
    events, state, _ = play_random_game({"players": 2}, random.Random(18))
    assert events[0].type == "game_created"
    seed = bytes.fromhex(events[-1].data["seed"])
    assert hashlib.sha256(seed).hexdigest() == events[0].data["seed_commitment"]
    assert events[0].data["shuffle"] == "cardroom-shuffle-v1"
    assert all("seed" not in e.data for e in events[:-1])


def test_s18_shuffle_known_answer() -> None:
    """Pins cardroom-shuffle-v1: a change to the algorithm must get a new version name."""
    deck = shuffled(bytes(32))
    assert Counter(deck) == DECK_COUNTS
    digest = hashlib.sha256(",".join(deck).encode()).hexdigest()
    assert digest == SHUFFLE_V1_ZERO_SEED_DIGEST, deck[:10]


SHUFFLE_V1_ZERO_SEED_DIGEST = "4c4c35114876c2abf42d737daea4b667dddf22efafba09f91d4f7e8afaf22cec"


def test_s18_a_wrong_seed_cannot_deal() -> None:
    _, state = execute(State(), CreateGame({"players": 2}, commitment(SEED)))
    _, state = execute(state, TakeSeat("a", SEED))
    with pytest.raises(ValueError, match="commitment"):
        execute(state, TakeSeat("b", b"\x00" * 32))


# --- lifecycle and errors -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [
        {"players": 1},
        {"players": 6},
        {"players": 2, "edition": "zoch"},
        {"players": 3, "edition": "deluxe"},
        {"players": 3, "pass_direction": "up"},
        {"players": "3"},
        {"players": 3, "colour": "red"},
    ],
)
def test_invalid_rules_are_refused_with_a_reason(options: dict) -> None:
    with pytest.raises(DomainError) as caught:
        execute(State(), CreateGame(options, "c"))
    assert caught.value.code == "invalid_rules" and caught.value.message


def test_moves_before_the_start_and_after_the_end_conflict() -> None:
    _, state = execute(State(), CreateGame({"players": 3}, commitment(SEED)))
    with pytest.raises(DomainError) as caught:
        execute(state, MakeMove(0, Pick(("tempura",)), SEED))
    assert (caught.value.code, caught.value.kind) == ("game_not_started", "conflict")
    _, final, _ = play_random_game({"players": 2}, random.Random(1))
    with pytest.raises(DomainError) as caught:
        execute(final, MakeMove(0, Pick(("tempura",)), SEED))
    assert caught.value.code == "game_over"
    with pytest.raises(DomainError) as caught:
        execute(final, TakeSeat("late", SEED))
    assert caught.value.code == "game_full"


def test_seats_fill_in_order_and_the_last_one_starts_the_game() -> None:
    events, state = start(3)
    assert types(events) == [
        "game_created",
        "seat_taken",
        "seat_taken",
        "seat_taken",
        "game_started",
        "round_dealt",
    ]
    assert state.names == ("p0", "p1", "p2")
    assert state.status == "playing"


# --- views --------------------------------------------------------------------------------------


def test_a_seat_sees_its_own_hand_and_pick_only() -> None:
    _, state = start(3)
    _, state = pick(state, 1, state.hands[1][0])
    mine = SUSHI_GO.view(state, Viewer(1))
    assert mine["you"]["hand"] == list(state.hands[1])
    assert mine["you"]["pick"]["cards"] == [state.picks[1].cards[0]]
    other = SUSHI_GO.view(state, Viewer(0))
    assert other["you"]["pick"] is None
    assert other["seats"][1]["picked"] is True
    assert all("hand" not in seat for seat in other["seats"])
    assert "you" not in SUSHI_GO.view(state, SPECTATOR)
    assert "seed" not in SUSHI_GO.view(state, SPECTATOR)


def test_event_redaction_hides_other_hands_and_unrevealed_picks() -> None:
    events, state = start(3)
    new, state = pick(state, 1, state.hands[1][0])
    deal = SUSHI_GO.visible_event(state, events[-1], Viewer(2))
    assert deal.data["hands"][0] is None and deal.data["hands"][2] is not None
    assert deal.data["hand_sizes"] == [9, 9, 9]
    hidden_pick = SUSHI_GO.visible_event(state, new[0], Viewer(0))
    assert "cards" not in hidden_pick.data and hidden_pick.data["seat"] == 1
    own_pick = SUSHI_GO.visible_event(state, new[0], Viewer(1))
    assert own_pick.data["cards"] == new[0].data["cards"]


def test_everything_is_public_once_the_game_is_over() -> None:
    events, state, _ = play_random_game({"players": 3}, random.Random(2))
    for event in events:
        assert SUSHI_GO.visible_event(state, event, SPECTATOR) == event
    assert SUSHI_GO.view(state, SPECTATOR)["seed"] == state.seed


def test_state_is_the_fold_of_the_events() -> None:
    events, state, _ = play_random_game({"players": 5, "edition": "zoch"}, random.Random(9))
    assert fold(SUSHI_GO, events) == state
