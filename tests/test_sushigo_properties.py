"""Property tests of the Sushi Go! decider over random legal play (rulings S1-S18 of
``shared/rules/sushi-go.md``).

Every test is parametrised over all 16 rule sets (edition x player count x pass direction, and
the 2-player dummy variant) and lets hypothesis draw the seed of a ``random.Random`` that drives
``domain.sushigo.randomplay.random_pick``. The driver below takes ``randomplay.random_steps`` (as
``play_random_game`` does; ``test_driver_is_play_random_game`` checks they play the very same games)
and keeps what the checks need: the secret seed (the rng's first draw), the events each command
caused, and a bound on the number of commands.

The invariants are checked at every step: after every command, and where the property is about a
single event (card conservation, passing, hand sizes), after every event.

Set ``CARDROOM_PROPERTY_SCALE`` (default 1) to multiply the number of examples.
"""

from __future__ import annotations

import json
import os
import random
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from domain.decider import (
    GAME_CREATED,
    GAME_ENDED,
    GAME_STARTED,
    SEAT_TAKEN,
    SPECTATOR,
    Command,
    Event,
    MakeMove,
    TakeSeat,
    Viewer,
    commitment,
    fold,
)
from domain.sushigo import SUSHI_GO, State
from domain.sushigo.cards import (
    CHOPSTICKS,
    DECK_COUNTS,
    DUMPLING,
    MAKI_ICONS,
    NIGIRI_POINTS,
    PUDDING,
    SASHIMI,
    TEMPURA,
    WASABI,
)
from domain.sushigo.game import CARD_PICKED, ROUND_DEALT, ROUND_SCORED, TURN_REVEALED, execute
from domain.sushigo.randomplay import play_random_game, random_steps
from domain.sushigo.rules import DUMMY_HAND_SIZE, HAND_SIZE, ROUNDS
from domain.sushigo.shuffle import shuffled

# --- rule sets and settings -------------------------------------------------------------------

CONFIGS: list[dict[str, Any]] = [
    *(
        {"players": n, "edition": "gamewright", "pass_direction": d}
        for n in (2, 3, 4, 5)
        for d in ("left", "alternate")
    ),
    *({"players": 2, "dummy": True, "pass_direction": d} for d in ("left", "alternate")),
    *(
        {"players": n, "edition": "zoch", "pass_direction": d}
        for n in (3, 4, 5)
        for d in ("left", "alternate")
    ),
]


def _config_id(options: dict[str, Any]) -> str:
    edition = "dummy" if options.get("dummy") else options.get("edition", "gamewright")
    return f"{edition}-{options['players']}p-{options['pass_direction']}"


each_rule_set = pytest.mark.parametrize("options", CONFIGS, ids=[_config_id(c) for c in CONFIGS])

_SCALE = max(1, int(os.environ.get("CARDROOM_PROPERTY_SCALE", "1")))


def examples(n: int) -> settings:
    """``n`` games per rule set (x CARDROOM_PROPERTY_SCALE). No deadline: a game and its checks
    take milliseconds to a few tenths of a second. No shrinking: a smaller rng seed is just
    another game, not a simpler one; the failing seed is reported as drawn."""
    return settings(
        max_examples=n * _SCALE,
        deadline=None,
        phases=(Phase.explicit, Phase.reuse, Phase.generate),
    )


rng_seeds = st.integers(min_value=0, max_value=2**64 - 1)

# --- the driver -------------------------------------------------------------------------------


@dataclass
class Step:
    """One command, the events it caused and the state they led to."""

    command: Command
    events: list[Event]
    state: State


@dataclass
class Played:
    options: dict[str, Any]
    seed: bytes  # the game's secret (S18)
    steps: list[Step]

    @property
    def events(self) -> list[Event]:
        return [e for step in self.steps for e in step.events]

    @property
    def final(self) -> State:
        return self.steps[-1].state

    @property
    def hand_size(self) -> int:
        return hand_size(self.options)


def hand_size(options: dict[str, Any]) -> int:
    return DUMMY_HAND_SIZE if options.get("dummy") else HAND_SIZE[options["players"]]  # S2, S17


def max_commands(options: dict[str, Any]) -> int:
    """Create, one seat each, and at most one pick per seat per turn: H turns a round (S2-S4)."""
    players = options["players"]
    return 1 + players + ROUNDS * hand_size(options) * players


def play(options: dict[str, Any], rng: random.Random) -> Played:
    """``random_steps``, kept, failing if the game does not end in time (S3/S13)."""
    probe = random.Random()
    probe.setstate(rng.getstate())
    seed = probe.randbytes(32)  # the rng's first draw: the game's secret seed
    bound = max_commands(options)
    steps: list[Step] = []
    for command, events, state in random_steps(options, rng):
        assert len(steps) < bound, f"no end after {bound} commands (S3/S13)"
        steps.append(Step(command, events, state))
    return Played(options, seed, steps)


def game(options: dict[str, Any], rng_seed: int) -> Played:
    return play(options, random.Random(rng_seed))


def event_states(events: list[Event]) -> Iterator[tuple[State, Event, State]]:
    """(state before, event, state after) for every event, by evolving one event at a time."""
    state = SUSHI_GO.initial_state()
    for event in events:
        after = SUSHI_GO.evolve(state, event)
        yield state, event, after
        state = after


def viewers(state: State) -> list[Viewer]:
    return [Viewer(seat) for seat in range(len(state.names))] + [SPECTATOR]


def passes_left(options: dict[str, Any], round_no: int) -> bool:
    return options["pass_direction"] == "left" or round_no != 2


# --- the driver is randomplay -----------------------------------------------------------------


@each_rule_set
@examples(2)
@given(rng_seed=rng_seeds)
def test_driver_is_play_random_game(options: dict[str, Any], rng_seed: int) -> None:
    """The driver plays the same game as ``play_random_game`` for the same rng, and its seed is
    the one the game committed to and revealed (S18)."""
    played = game(options, rng_seed)
    events, final, states = play_random_game(options, random.Random(rng_seed))
    assert events == played.events
    assert states == [step.state for step in played.steps]
    assert final == played.final
    assert played.events[0].data["seed_commitment"] == commitment(played.seed)
    assert final.seed == played.seed.hex()


# --- S1/S3/S17: every card in exactly one place -----------------------------------------------


def card_places(state: State, seed: bytes) -> list[str]:
    """Every card the state accounts for, plus the rest of the draw pile (S1, S3, S17)."""
    cards: list[str] = [c for hand in state.hands for c in hand]
    for pick in state.picks:
        if pick is not None:
            cards.extend(pick.cards)
            if pick.dummy_card is not None:
                cards.append(pick.dummy_card)
    for tableau in state.tableaux:
        cards.extend(tableau.cards)
    cards.extend(state.dummy_pile)
    cards.extend(state.discard)
    cards.extend([PUDDING] * sum(state.puddings))
    cards.extend(shuffled(seed)[state.dealt :])
    return cards


@each_rule_set
@examples(12)
@given(rng_seed=rng_seeds)
def test_s1_s3_every_card_is_in_exactly_one_place(options: dict[str, Any], rng_seed: int) -> None:
    """S1/S3/S17: after every event, hands + unrevealed picks + tableaux + dummy pile + discard
    + pudding piles + the undealt rest of the shuffled deck is exactly the 108-card deck."""
    played = game(options, rng_seed)
    assert sum(DECK_COUNTS.values()) == 108
    for _, event, state in event_states(played.events):
        cards = card_places(state, played.seed)
        assert len(cards) == 108, (event.type, len(cards))
        assert Counter(cards) == DECK_COUNTS, event.type
        assert 0 <= state.dealt <= 108
    assert all(t.cards == () for t in played.final.tableaux)  # S3: all discarded or kept
    # S3: three deals from the top, never reshuffled: 3 x (hands [+ dummy pile]) cards used.
    seats = options["players"] + (1 if options.get("dummy") else 0)
    assert played.final.dealt == ROUNDS * seats * played.hand_size


# --- S2/S4/S5/S6/S7/S17: hands, picks and passing ---------------------------------------------


def expected_hand(state: State, seat: int, size: int) -> int:
    """S2: a hand of ``size`` shrinks by one a turn; S17: the controller holds one more while the
    dummy pile lasted long enough to draw from."""
    cards = size - (state.turn - 1)
    if state.controller == seat and state.turn <= size:
        cards += 1
    return cards


@each_rule_set
@examples(12)
@given(rng_seed=rng_seeds)
def test_s2_s5_s7_s17_hand_sizes_after_every_event(options: dict[str, Any], rng_seed: int) -> None:
    """S2: 10/9/8/7 cards (dummy variant 9, S17); every hand shrinks by one a turn, picks
    included (a used chopsticks card comes back, S7); the controller holds one card more; the
    dummy pile shrinks by one a turn; S5: nobody waits to pick the last card of a hand."""
    played = game(options, rng_seed)
    size = played.hand_size
    players = options["players"]
    for _, event, state in event_states(played.events):
        if event.type == ROUND_DEALT:
            assert [len(h) for h in event.data["hands"]] == [size] * players  # S2
            if options.get("dummy"):
                assert len(event.data["dummy_pile"]) == size  # S17
            else:
                assert "dummy_pile" not in event.data
        if not state.started or state.over or state.round == 0:
            continue
        assert 1 <= state.turn <= size + 1
        for seat in range(players):
            held = len(state.hands[seat])
            pick = state.picks[seat]
            if pick is not None:
                held += len(pick.cards) + (pick.dummy_card is not None)
            assert held == expected_hand(state, seat, size), (event.type, seat, state.turn)
        if options.get("dummy"):
            assert len(state.dummy_pile) == max(size - state.turn, 0)  # S17: one draw a turn
    for step in played.steps[1 + players :]:  # S5, after every pick
        state = step.state
        if state.over:
            continue
        for seat in range(players):
            hand = state.hands[seat]
            if state.picks[seat] is not None or len(hand) != 1 or state.controller == seat:
                continue
            zoch_wasabi = (
                options.get("edition") == "zoch"
                and hand[0] in NIGIRI_POINTS
                and state.tableaux[seat].free_wasabi > 0
            )
            assert zoch_wasabi, f"seat {seat} waits to pick its last card {hand} (S5)"


@each_rule_set
@examples(12)
@given(rng_seed=rng_seeds)
def test_s4_s6_s7_reveal_places_picks_and_passes_hands(
    options: dict[str, Any], rng_seed: int
) -> None:
    """S4: every seat picks exactly once a turn and the reveal places every pick at once; S6:
    chopsticks need a chopsticks card from an earlier turn; S7: the used chopsticks leave the
    tableau and go into the hand passed on; hands go left (or right in round 2 when alternating);
    S17: the dummy's card goes to the dummy, the next controller draws the pile's top card."""
    played = game(options, rng_seed)
    players = options["players"]
    dummy = players if options.get("dummy") else None
    picked_this_turn: set[int] = set()
    for before, event, after in event_states(played.events):
        if event.type == CARD_PICKED:
            seat = event.data["seat"]
            assert seat not in picked_this_turn, "two picks in one turn (S4)"
            picked_this_turn.add(seat)
            assert (event.data["round"], event.data["turn"]) == (before.round, before.turn)
            if event.data["auto"]:
                assert len(before.hands[seat]) == 1  # S5
        if event.type != TURN_REVEALED:
            continue
        assert picked_this_turn == set(range(players)), "reveal before every seat picked (S4)"
        picked_this_turn.clear()
        left = passes_left(options, before.round)
        for seat in range(players):
            pick = before.picks[seat]
            assert pick is not None
            placed = Counter(after.tableaux[seat].cards)
            expected = Counter(before.tableaux[seat].cards) + Counter(pick.cards)
            passed_on = Counter(before.hands[seat])
            if len(pick.cards) == 2:
                assert before.tableaux[seat].chopsticks >= 1, "chopsticks from earlier turn (S6)"
                expected[CHOPSTICKS] -= 1  # S7
                passed_on[CHOPSTICKS] += 1
            assert placed == +expected, seat
            receiver = (seat + 1) % players if left else (seat - 1) % players
            received = Counter(after.hands[receiver])
            if receiver == after.controller and before.dummy_pile:
                received[before.dummy_pile[0]] -= 1  # S17: the controller's draw
                assert after.dummy_pile == before.dummy_pile[1:]
            assert +received == passed_on, (seat, receiver)
            assert (pick.dummy_card is not None) == (seat == before.controller)  # S17
        if dummy is not None:
            card = next(p.dummy_card for p in before.picks if p and p.dummy_card is not None)
            assert Counter(after.tableaux[dummy].cards) == Counter(
                before.tableaux[dummy].cards
            ) + Counter([card])
            assert after.controller == 1 - before.controller  # S17: control alternates


# --- S3/S13: termination ----------------------------------------------------------------------


@each_rule_set
@examples(10)
@given(rng_seed=rng_seeds)
def test_s3_s13_every_game_ends_after_three_rounds(options: dict[str, Any], rng_seed: int) -> None:
    """S3/S13: a bounded number of commands; the events follow created, seats, started, then
    three times (dealt, H x (a pick per seat, revealed), scored), then game_ended, the last."""
    played = game(options, rng_seed)  # fails if the bound of commands is exceeded
    players, size = options["players"], played.hand_size
    assert len(played.steps) <= max_commands(options)
    assert played.final.over and SUSHI_GO.is_over(played.final)
    types = [e.type for e in played.events]
    grammar = [GAME_CREATED, *[SEAT_TAKEN] * players, GAME_STARTED]
    for _ in range(ROUNDS):
        grammar += [ROUND_DEALT, *([CARD_PICKED] * players + [TURN_REVEALED]) * size]
        grammar.append(ROUND_SCORED)
    grammar.append(GAME_ENDED)
    assert types == grammar
    scored = [e.data["round"] for e in played.events if e.type == ROUND_SCORED]
    dealt = [e.data["round"] for e in played.events if e.type == ROUND_DEALT]
    assert scored == dealt == [1, 2, 3]
    for step in played.steps[:-1]:
        assert not step.state.over
    assert played.final.round == ROUNDS


# --- folding ----------------------------------------------------------------------------------


@each_rule_set
@examples(4)
@given(rng_seed=rng_seeds)
def test_fold_of_every_prefix_is_the_state_reached(options: dict[str, Any], rng_seed: int) -> None:
    """The state is the fold of its events: folding all events gives the final state, folding the
    prefix up to each command gives the state that command reached; events survive a JSON round
    trip (as the store keeps them) and fold to the same state."""
    played = game(options, rng_seed)
    events = played.events
    assert fold(SUSHI_GO, events) == played.final
    count = 0
    for step in played.steps:
        count += len(step.events)
        assert step.state.version == count
        assert fold(SUSHI_GO, events[:count]) == step.state
    stored = [json.loads(json.dumps(e.to_json())) for e in events]
    reloaded = [Event(e["type"], e["data"], e["schema_version"]) for e in stored]
    assert fold(SUSHI_GO, reloaded) == played.final


# --- scoring: S8-S16 --------------------------------------------------------------------------


def _share(points: int, tied: int, split: bool) -> int:
    return points // tied if split else points


def maki_oracle(icons: list[int], split: bool) -> list[int]:
    """S11 (gamewright, split) and S12 (zoch, full points), from the rule text."""
    counts = sorted({n for n in icons if n > 0}, reverse=True)
    points = [0] * len(icons)
    if counts:
        most = [i for i, n in enumerate(icons) if n == counts[0]]
        for i in most:
            points[i] = _share(6, len(most), split)
        second_scored = len(counts) > 1 and (not split or len(most) == 1)
        if second_scored:
            second = [i for i, n in enumerate(icons) if n == counts[1]]
            for i in second:
                points[i] = _share(3, len(second), split)
    return points


def pudding_oracle(counts: list[int], split: bool, penalty: bool) -> list[int]:
    """S14 (gamewright) and S15 (zoch); no penalty in a 2-player game without the dummy."""
    if len(set(counts)) == 1:
        return [0] * len(counts)
    most = [i for i, n in enumerate(counts) if n == max(counts)]
    fewest = [i for i, n in enumerate(counts) if n == min(counts)]
    points = [_share(6, len(most), split) if i in most else 0 for i in range(len(counts))]
    if penalty:
        for i in fewest:
            points[i] -= _share(6, len(fewest), split)
    return points


def winners_oracle(totals: list[int], puddings: list[int], players: int) -> list[int]:
    """S16: highest total, then most puddings, else a shared win; S17: the dummy cannot win."""
    best = max(totals[:players])
    tied = [i for i in range(players) if totals[i] == best]
    most = max(puddings[i] for i in tied)
    return [i for i in tied if puddings[i] == most]


class Table:
    """An independent tally of one round's tableaux, from the turn_revealed events (S7-S9)."""

    def __init__(self, seats: int) -> None:
        self.cards: list[list[str]] = [[] for _ in range(seats)]
        self.free_wasabi = [0] * seats
        self.on_wasabi: list[Counter[str]] = [Counter() for _ in range(seats)]

    def place(self, seat: int, cards: list[str], use_wasabi: list[bool] | None) -> None:
        for i, kind in enumerate(cards):
            self.cards[seat].append(kind)
            if kind == WASABI:
                self.free_wasabi[seat] += 1
            elif (
                kind in NIGIRI_POINTS
                and self.free_wasabi[seat]
                and (use_wasabi is None or use_wasabi[i])  # S8; S9 may decline
            ):
                self.free_wasabi[seat] -= 1
                self.on_wasabi[seat][kind] += 1

    def reveal(self, picks: list[dict[str, Any]], dummy: int | None) -> None:
        for pick in picks:
            seat = pick["seat"]
            self.place(seat, pick["cards"], pick.get("use_wasabi"))
            if pick["chopsticks"]:
                self.cards[seat].remove(CHOPSTICKS)  # S7
            if pick.get("dummy_card") is not None:
                assert dummy is not None
                self.place(dummy, [pick["dummy_card"]], None)  # S17: the dummy follows S8

    def expected_scores(self, split: bool) -> list[dict[str, Any]]:
        icons = [sum(MAKI_ICONS.get(k, 0) for k in cards) for cards in self.cards]
        maki = maki_oracle(icons, split)
        sheets = []
        for seat, cards in enumerate(self.cards):
            count = Counter(cards)
            dipped = self.on_wasabi[seat]
            plain = {k: count[k] - dipped[k] for k in NIGIRI_POINTS}
            dumplings = (0, 1, 3, 6, 10, 15)[min(count[DUMPLING], 5)]
            nigiri = sum(v * (plain[k] + 3 * dipped[k]) for k, v in NIGIRI_POINTS.items())
            sheet = {
                "maki": (icons[seat], maki[seat]),
                "tempura": (count[TEMPURA], 5 * (count[TEMPURA] // 2)),
                "sashimi": (count[SASHIMI], 10 * (count[SASHIMI] // 3)),
                "dumpling": (count[DUMPLING], dumplings),
                "nigiri": (plain, {k: dipped[k] for k in NIGIRI_POINTS}, nigiri),
                "wasabi": (count[WASABI], self.free_wasabi[seat], 0),
                "pudding": (count[PUDDING], 0),
            }
            sheet["total"] = maki[seat] + sheet["tempura"][1] + sheet["sashimi"][1]
            sheet["total"] += dumplings + nigiri
            sheets.append(sheet)
        return sheets


def _as_tally(score: dict[str, Any]) -> dict[str, Any]:
    """A round_scored entry in the shape of ``Table.expected_scores``."""
    return {
        "maki": (score["maki"]["icons"], score["maki"]["points"]),
        "tempura": (score["tempura"]["count"], score["tempura"]["points"]),
        "sashimi": (score["sashimi"]["count"], score["sashimi"]["points"]),
        "dumpling": (score["dumpling"]["count"], score["dumpling"]["points"]),
        "nigiri": (
            score["nigiri"]["plain"],
            score["nigiri"]["on_wasabi"],
            score["nigiri"]["points"],
        ),
        "wasabi": (score["wasabi"]["count"], score["wasabi"]["unused"], score["wasabi"]["points"]),
        "pudding": (score["pudding"]["count"], score["pudding"]["points"]),
        "total": score["total"],
    }


@each_rule_set
@examples(15)
@given(rng_seed=rng_seeds)
def test_s8_s15_scores_match_an_independent_tally(options: dict[str, Any], rng_seed: int) -> None:
    """S8/S9: nigiri go onto a free wasabi (zoch: unless declined) and score triple (S10);
    S10-S12: every round_scored entry equals a tally of the revealed picks; S13-S15: the
    puddings kept across rounds score once, at the end (penalty only with 3+ scored seats)."""
    played = game(options, rng_seed)
    players = options["players"]
    dummy = players if options.get("dummy") else None
    seats = players + (dummy is not None)
    split = options.get("edition", "gamewright") == "gamewright"
    table = Table(seats)
    puddings = [0] * seats
    for before, event, _ in event_states(played.events):
        if event.type == TURN_REVEALED:
            table.reveal(event.data["picks"], dummy)
        elif event.type == ROUND_SCORED:
            for seat in range(seats):
                assert Counter(before.tableaux[seat].cards) == Counter(table.cards[seat])
            expected = table.expected_scores(split)
            got = [_as_tally(score) for score in event.data["scores"]]
            for seat in range(seats):
                assert got[seat] == expected[seat], (event.data["round"], seat)
            for seat in range(seats):
                puddings[seat] += table.cards[seat].count(PUDDING)  # S3: kept
            table = Table(seats)
        elif event.type == GAME_ENDED:
            assert [p["count"] for p in event.data["puddings"]] == puddings
            points = pudding_oracle(puddings, split, penalty=seats > 2)
            assert [p["points"] for p in event.data["puddings"]] == points


@each_rule_set
@examples(8)
@given(rng_seed=rng_seeds)
def test_s10_s13_score_sheet_adds_up(options: dict[str, Any], rng_seed: int) -> None:
    """After every command: each round total is the sum of its category points (wasabi and
    chopsticks 0, pudding 0 until the end, S10/S13); the running total per seat is the sum of its
    round totals (plus pudding points once the game is over), in the sheet, state and view."""
    played = game(options, rng_seed)
    players = options["players"]
    seats = players + (1 if options.get("dummy") else 0)
    for step in played.steps:
        state = step.state
        sheet = SUSHI_GO.score_sheet(state)
        if not state.started:
            continue
        categories = sheet["categories"]
        assert set(categories) == {"maki", "tempura", "sashimi", "dumpling", "nigiri", "pudding"}
        assert len(sheet["rounds"]) == len(state.round_scores) <= ROUNDS
        running = [0] * seats
        for number, round_sheet in enumerate(sheet["rounds"], start=1):
            assert round_sheet["round"] == number
            assert [s["seat"] for s in round_sheet["seats"]] == list(range(seats))
            for entry in round_sheet["seats"]:
                parts = {k: v for k, v in entry.items() if isinstance(v, dict) and "points" in v}
                assert set(categories) <= set(parts)
                assert sum(parts[c]["points"] for c in categories) == entry["total"]
                assert sum(p["points"] for p in parts.values()) == entry["total"]
                assert entry["wasabi"]["points"] == 0 and entry["pudding"]["points"] == 0
                running[entry["seat"]] += entry["total"]
        if state.over:
            assert sheet["puddings"] is not None and len(sheet["puddings"]) == seats
            for entry in sheet["puddings"]:
                running[entry["seat"]] += entry["points"]
        else:
            assert sheet["puddings"] is None and sheet["winners"] is None
        assert [t["total"] for t in sheet["totals"]] == running == list(state.totals)
        shown = SUSHI_GO.view(state, SPECTATOR)
        assert [s["score"] for s in shown["seats"]] == running[:players]
        if "dummy" in shown:
            assert shown["dummy"]["score"] == running[players]
    ended = played.events[-1]
    assert [t["total"] for t in ended.data["totals"]] == list(played.final.totals)


@each_rule_set
@examples(15)
@given(rng_seed=rng_seeds)
def test_s16_s17_winners(options: dict[str, Any], rng_seed: int) -> None:
    """S16: the highest total wins; a tie goes to the most puddings; still tied, a shared win.
    S17: the dummy, scored like a player, never wins."""
    played = game(options, rng_seed)
    final = played.final
    players = options["players"]
    expected = winners_oracle(list(final.totals), list(final.puddings), players)
    assert list(final.winners) == expected
    assert played.events[-1].data["winners"] == expected
    assert SUSHI_GO.score_sheet(final)["winners"] == expected
    assert SUSHI_GO.view(final, SPECTATOR)["winners"] == expected
    assert expected and all(0 <= w < players for w in expected)
    best = max(final.totals[:players])
    for seat in range(players):
        if seat not in expected:
            assert final.totals[seat] < best or final.puddings[seat] < max(
                final.puddings[w] for w in expected
            )


# --- S2/S3/S18: deals come from the seed ------------------------------------------------------


def deals(played: Played) -> list[Event]:
    return [e for e in played.events if e.type == ROUND_DEALT]


@each_rule_set
@examples(3)
@given(rng_seed=rng_seeds, other=rng_seeds)
def test_s18_same_seed_same_deals(options: dict[str, Any], rng_seed: int, other: int) -> None:
    """S18: the same seed and moves give the same game; every deal can be recomputed from the
    revealed seed (S3: from the top of the pile, seat 0 first, then the dummy pile); the seed
    matches its commitment; different seeds give different deals."""
    first, again = game(options, rng_seed), game(options, rng_seed)
    assert first.events == again.events
    assert deals(first) == deals(again)
    seed = bytes.fromhex(first.final.seed or "")
    assert seed == first.seed
    assert commitment(seed) == first.events[0].data["seed_commitment"]
    deck, size, at = shuffled(seed), first.hand_size, 0
    for number, deal in enumerate(deals(first), start=1):
        assert deal.data["round"] == number
        for hand in deal.data["hands"]:
            assert tuple(hand) == deck[at : at + size]
            at += size
        if options.get("dummy"):
            assert tuple(deal.data["dummy_pile"]) == deck[at : at + size]
            at += size
    if other != rng_seed:
        different = game(options, other)
        assert different.seed != first.seed
        assert deals(different)[0] != deals(first)[0]


# --- S4/S18: what viewers may see -------------------------------------------------------------

_SECRET_KEYS = {"hand", "hands", "pick", "picks", "dummy_pile", "seed", "deck", "draw_pile"}


def _secret_keys(data: Any, path: str = "") -> list[str]:
    """Paths of keys that name a secret anywhere in ``data``."""
    found = []
    if isinstance(data, dict):
        for key, value in data.items():
            if key in _SECRET_KEYS and value is not None:
                found.append(f"{path}.{key}")
            found.extend(_secret_keys(value, f"{path}.{key}"))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            found.extend(_secret_keys(value, f"{path}[{i}]"))
    return found


def check_view(state: State, seed: bytes, viewer: Viewer, view: Callable[..., Any]) -> None:
    """Before the end, the view shows the viewer's own hand and pick (under ``you``) and nothing
    else secret: no other hand, no pick, no dummy pile, no seed."""
    shown = view(state, viewer)
    assert seed.hex() not in json.dumps(shown), "the seed shows before the end (S18)"
    mine = shown.pop("you", None)
    assert _secret_keys(shown) == [], f"secrets outside 'you' for {viewer}"
    if viewer.seat is None or not state.started:
        assert mine is None, "a spectator (or a seat before the deal) has no 'you'"
        return
    assert mine is not None and mine["seat"] == viewer.seat
    assert mine["hand"] == list(state.hands[viewer.seat])
    pick = state.picks[viewer.seat] if state.picks else None
    assert mine["pick"] == (pick.to_json() if pick else None)
    # What the seat may do (awaiting_pick, chopsticks_usable) is about its own hand and pick;
    # free_wasabi is on its table, which everyone sees.
    assert set(mine) <= {
        "seat",
        "hand",
        "pick",
        "controls_dummy",
        "chopsticks_available",
        "awaiting_pick",
        "chopsticks_usable",
        "free_wasabi",
    }


def check_events(
    state: State,
    events: list[Event],
    seed: bytes,
    viewer: Viewer,
    visible: Callable[..., Event],
) -> None:
    """Before the end, every event as ``viewer`` reads it hides the other seats' hands, the dummy
    pile, the unrevealed picks of other seats (S4) and the seed (S18); everything else is as
    recorded."""
    unrevealed = set()  # indexes of card_picked events no turn_revealed has followed yet
    for i, event in enumerate(events):
        if event.type == CARD_PICKED:
            unrevealed.add(i)
        elif event.type == TURN_REVEALED:
            unrevealed.clear()
    shown = [visible(state, event, viewer) for event in events]
    assert seed.hex() not in json.dumps([e.data for e in shown]), "the seed shows (S18)"
    for i, (event, seen) in enumerate(zip(events, shown, strict=True)):
        assert seen.type == event.type
        if event.type == ROUND_DEALT:
            for seat, hand in enumerate(seen.data["hands"]):
                if seat == viewer.seat:
                    assert hand == event.data["hands"][seat]
                else:
                    assert hand is None, f"{viewer} sees hand {seat} of round_dealt"
            if "dummy_pile" in event.data:
                assert seen.data.get("dummy_pile") is None, f"{viewer} sees the dummy pile"
            assert set(seen.data) <= {
                "round",
                "deck_offset",
                "hands",
                "dummy_pile",
                "hand_sizes",
                "redacted",
            }
        elif event.type == CARD_PICKED and i in unrevealed and event.data["seat"] != viewer.seat:
            assert set(seen.data) <= {"seat", "round", "turn", "redacted"}, (
                f"{viewer} sees an unrevealed pick: {seen.data}"
            )
            assert seen.data["seat"] == event.data["seat"]
        else:
            assert seen == event


def hidden_data(state: State, events: list[Event]) -> None:
    """The unredacted events and state do hold what the checks say must be hidden."""
    players = len(state.names)
    sizes = [len(h) for e in events if e.type == ROUND_DEALT for h in e.data["hands"]]
    assert sizes and all(sizes) and len(sizes) % players == 0
    if state.rules is not None and state.rules.dummy:
        assert all(e.data["dummy_pile"] for e in events if e.type == ROUND_DEALT)
    for e in events:
        if e.type == CARD_PICKED:
            assert e.data["cards"]
    assert any(state.hands) or any(state.picks)


@each_rule_set
@examples(2)
@given(rng_seed=rng_seeds)
def test_s4_s18_views_and_events_hide_what_a_viewer_may_not_see(
    options: dict[str, Any], rng_seed: int
) -> None:
    """After every command before the end, for every seat and the spectator: the view and every
    event so far, as that viewer reads them, hide other hands, unrevealed picks of other seats,
    the dummy pile and the seed (S4, S17, S18) while that data is there unredacted; once the game
    is over everything is public."""
    played = game(options, rng_seed)
    events: list[Event] = []
    for step in played.steps:
        events.extend(step.events)
        state = step.state
        if state.over:
            break
        if state.started:
            hidden_data(state, events)
        for viewer in viewers(state):
            check_view(state, played.seed, viewer, SUSHI_GO.view)
            check_events(state, events, played.seed, viewer, SUSHI_GO.visible_event)
    final = played.final
    for viewer in viewers(final):
        shown = SUSHI_GO.view(final, viewer)
        assert shown["seed"] == played.seed.hex()
        assert all("hand" in seat for seat in shown["seats"])
        assert all(SUSHI_GO.visible_event(final, e, viewer) == e for e in played.events)


@each_rule_set
@examples(1)
@given(rng_seed=rng_seeds)
def test_the_visibility_checks_catch_leaks(options: dict[str, Any], rng_seed: int) -> None:
    """The checks above fail when redaction is skipped: an unredacted event log, or a view that
    shows everything, is caught at every (third) command after the deal, for every viewer."""
    played = game(options, rng_seed)

    def leaky_view(state: State, viewer: Viewer) -> dict[str, Any]:
        return SUSHI_GO.view(state._replace(over=True), viewer)

    def leaky_events(state: State, event: Event, viewer: Viewer) -> Event:
        return event

    events: list[Event] = []
    for number, step in enumerate(played.steps):
        events.extend(step.events)
        if not step.state.started or step.state.over or number % 3:
            continue  # every third command is plenty to show the checks bite
        for viewer in viewers(step.state):
            with pytest.raises(AssertionError):
                check_view(step.state, played.seed, viewer, leaky_view)
            with pytest.raises(AssertionError):
                check_events(step.state, events, played.seed, viewer, leaky_events)


@each_rule_set
@examples(3)
@given(rng_seed=rng_seeds)
def test_s4_s6_view_does_not_reveal_an_unrevealed_chopsticks_pick(
    options: dict[str, Any], rng_seed: int
) -> None:
    """S4/S6: whether a seat used chopsticks is part of its pick (card_picked redacts
    ``chopsticks``), so before the reveal no other viewer may tell it from the view: another
    seat's ``hand_size`` is its size at the start of the turn, or that less one card (plus the
    dummy's card, which its controller always names, S17) — never two less for chopsticks."""
    played = game(options, rng_seed)
    for step in played.steps:
        state = step.state
        if not state.started or state.over:
            continue
        for viewer in viewers(state):
            shown = SUSHI_GO.view(state, viewer)
            for seat, pick in enumerate(state.picks):
                if pick is None or seat == viewer.seat:
                    continue
                dummy_card = pick.dummy_card is not None
                at_start = len(state.hands[seat]) + len(pick.cards) + dummy_card
                allowed = {at_start, at_start - 1 - dummy_card}
                size = shown["seats"][seat]["hand_size"]
                assert size in allowed, (
                    f"{viewer} sees hand_size {size} of seat {seat}, which picked "
                    f"{len(pick.cards)} card(s) unrevealed (round {state.round}, turn {state.turn})"
                )


@each_rule_set
@examples(2)
@given(rng_seed=rng_seeds)
def test_s18_a_command_with_a_wrong_seed_never_deals_or_ends(
    options: dict[str, Any], rng_seed: int
) -> None:
    """S18: every deal (S3) must come from the committed seed, so that the revealed seed
    recomputes them all: a command that would deal or end the game is refused (ValueError, as
    for the first deal and the end) when its seed does not match the commitment; any other
    command decides the same events whatever seed it carries."""
    played = game(options, rng_seed)
    wrong = bytes(b ^ 0xFF for b in played.seed)
    before = SUSHI_GO.initial_state()
    for step in played.steps:
        command = step.command
        if isinstance(command, TakeSeat | MakeMove):
            tampered = command._replace(seed=wrong)
            if any(e.type in (ROUND_DEALT, GAME_ENDED) for e in step.events):
                with pytest.raises(ValueError):
                    events, _ = execute(before, tampered)
                    raise AssertionError(
                        f"{command!r} with a wrong seed decided {[e.type for e in events]}"
                    )
            else:
                assert execute(before, tampered) == (step.events, step.state)
        before = step.state
