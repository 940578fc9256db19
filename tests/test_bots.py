"""The built-in bots in the domain (domain/bots.py, domain/sushigo/bots.py, greedy.py): always
legal in every edition, player count and variant; deterministic; greedy beats random; bot seats
taken in seat order; bot games audit like any other."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

import pytest
from export_support import VARIANTS, edited, export_records, rechain, versions_of
from sushigo_support import SEED, dealt, pick

from domain.audit import audit
from domain.bots import bot_command, bot_random
from domain.decider import (
    BY_BOT,
    BY_CLOCK,
    BotSeat,
    CreateGame,
    DomainError,
    Event,
    MakeMove,
    TakeSeat,
    commitment,
)
from domain.sushigo import SUSHI_GO, Pick, State
from domain.sushigo.cards import NIGIRI_KINDS
from domain.sushigo.game import execute
from domain.sushigo.state import Tableau


def bot_game(
    options: dict[str, Any], kinds: Sequence[str], seed: bytes = SEED
) -> tuple[list[Event], State]:
    """A game whose every seat is a bot of ``kinds[seat]``, played to its end as the service
    plays it: the creation seats the bots and deals, then each awaiting bot moves."""
    bots = tuple(BotSeat(seat, kind, f"{kind} {seat}") for seat, kind in enumerate(kinds))
    create = CreateGame(options, commitment(seed), seed, bots)
    events, state = execute(State(), create)
    while not state.over:
        command = bot_command(SUSHI_GO, state, seed)
        assert command is not None, "a bot game waits for nobody, yet it is not over"
        new, state = execute(state, command)  # the decider refuses any illegal pick
        events += new
    return events, state


def kinds_for(players: int, shift: int) -> list[str]:
    return [("greedy", "random")[(seat + shift) % 2] for seat in range(players)]


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("shift", [0, 1])
def test_bots_play_legal_games_to_the_end_and_audit_ok(variant: str, shift: int) -> None:
    options = dict(VARIANTS[variant])
    events, state = bot_game(options, kinds_for(options["players"], shift), bytes([shift]) * 32)
    picks = [e.data for e in events if e.type == "card_picked"]
    assert all(p["by"] == BY_BOT for p in picks if not p["auto"])
    if options.get("dummy"):  # S17: on each of the 27 turns its controller named its card
        assert sum("dummy_card" in p for p in picks) == 27
    report = audit(export_records(events))
    assert report["ok"], report
    assert report["seats"][: options["players"]] == [
        f"{k} {s}" for s, k in enumerate(kinds_for(options["players"], shift))
    ]


def test_zoch_bots_decide_use_wasabi() -> None:
    choices = []
    for n in range(6):
        events, _ = bot_game({"players": 4, "edition": "zoch"}, kinds_for(4, n), bytes([n]) * 32)
        choices += [
            (e.data["seat"], tuple(e.data["use_wasabi"]))
            for e in events
            if e.type == "card_picked" and "use_wasabi" in e.data
        ]
    assert choices, "no bot ever said whether a nigiri goes onto a wasabi (S9)"


def test_greedy_beats_random_on_average() -> None:
    greedy: list[int] = []
    random_: list[int] = []
    for n in range(50):
        kinds = kinds_for(4, n)
        _, state = bot_game({"players": 4}, kinds, n.to_bytes(32, "big"))
        for seat, kind in enumerate(kinds):
            (greedy if kind == "greedy" else random_).append(state.totals[seat])
    assert statistics.mean(greedy) > statistics.mean(random_) + 3, (greedy, random_)


def test_bots_are_deterministic() -> None:
    options = {"players": 3, "edition": "zoch"}
    first, _ = bot_game(options, ["random", "greedy", "random"])
    again, _ = bot_game(options, ["random", "greedy", "random"])
    assert first == again
    other, _ = bot_game(options, ["random", "greedy", "random"], bytes(range(1, 33)))
    assert first != other


def test_the_random_bot_draws_from_the_seed_the_version_and_the_seat() -> None:
    def draw(seed: bytes, version: int, seat: int) -> float:
        return bot_random(seed, version, seat).random()

    assert draw(SEED, 5, 1) == draw(SEED, 5, 1)
    assert len({draw(SEED, 5, 1), draw(SEED, 6, 1), draw(SEED, 5, 2), draw(bytes(32), 5, 1)}) == 4


# --- greedy, turn by turn -------------------------------------------------------------------------


def greedy(state: State, seat: int = 0) -> Pick:
    move = SUSHI_GO.bot_move(state, seat, "greedy", SEED)
    assert move.by == BY_BOT
    return move._replace(by=None)


def test_greedy_completes_a_set_and_dips_nigiri() -> None:
    state = dealt([["tempura", "squid_nigiri", "egg_nigiri"], ["maki_1", "maki_2", "pudding"]])
    assert greedy(state) == Pick(("squid_nigiri",))  # 3 now beats half a tempura pair
    state = state._replace(tableaux=(Tableau(("tempura",)), Tableau()))
    assert greedy(state) == Pick(("tempura",))  # completes the pair: 5
    state = state._replace(tableaux=(Tableau(("wasabi",)), Tableau()))
    assert greedy(state) == Pick(("squid_nigiri",))  # 9 on the wasabi (S8)


def test_greedy_uses_chopsticks_in_a_good_order() -> None:
    state = dealt([["wasabi", "squid_nigiri", "egg_nigiri"], ["maki_1", "maki_2", "pudding"]])
    state = state._replace(tableaux=(Tableau(("chopsticks",)), Tableau()))
    assert greedy(state) == Pick(("wasabi", "squid_nigiri"))  # S6/S8: the squid on the wasabi


def test_greedy_names_the_dummys_card_when_it_controls_the_dummy() -> None:
    state = dealt([["tempura"] * 9, ["sashimi"] * 9], dummy_pile=["pudding"] * 9)
    assert state.controller == 0
    move = greedy(state)
    assert move.dummy_card is not None
    execute(state, MakeMove(0, move, SEED))  # legal (S17)


def test_greedy_in_zoch_says_whether_a_nigiri_goes_onto_the_wasabi() -> None:
    state = dealt(
        [
            ["egg_nigiri", "squid_nigiri", "tempura"],
            ["maki_1", "maki_2", "pudding"],
            ["sashimi"] * 3,
        ],
        edition="zoch",
    )
    state = state._replace(tableaux=(Tableau(("wasabi",)), Tableau(), Tableau()))
    move = greedy(state)
    assert move.cards == ("squid_nigiri",) and move.use_wasabi == (True,)
    assert all(k in NIGIRI_KINDS for k in move.cards)


# --- bot seats ------------------------------------------------------------------------------------


def test_bot_seats_are_taken_in_seat_order_as_soon_as_the_seats_before_them_are() -> None:
    bots = (BotSeat(0, "greedy", "G"), BotSeat(2, "random", "R"))
    events, state = execute(State(), CreateGame({"players": 4}, commitment(SEED), SEED, bots, 30))
    assert [e.type for e in events] == ["game_created", "seat_taken"]
    assert events[0].data["bots"] == [
        {"seat": 0, "kind": "greedy", "name": "G"},
        {"seat": 2, "kind": "random", "name": "R"},
    ]
    assert events[0].data["turn_seconds"] == 30 and state.turn_seconds == 30
    assert events[1].data == {"seat": 0, "name": "G", "bot": "greedy"}
    events, state = execute(state, TakeSeat("ann", SEED))
    assert [e.data for e in events] == [
        {"seat": 1, "name": "ann"},
        {"seat": 2, "name": "R", "bot": "random"},
    ]
    events, state = execute(state, TakeSeat("bob", SEED))
    assert [e.type for e in events] == ["seat_taken", "game_started", "round_dealt"]
    assert SUSHI_GO.bots(state) == {0: "greedy", 2: "random"}
    assert SUSHI_GO.awaiting(state) == [0, 1, 2, 3]


def test_a_game_without_bots_records_what_it_always_did() -> None:
    # ... and the name rule it is created under (domain/names.py; issue 20).
    events, _ = execute(State(), CreateGame({"players": 3}, commitment(SEED)))
    assert set(events[0].data) == {"game", "rules", "seed_commitment", "shuffle", "name_rule"}
    old, _ = execute(State(), CreateGame({"players": 3}, commitment(SEED), name_rule=0))
    assert set(old[0].data) == {"game", "rules", "seed_commitment", "shuffle"}


@pytest.mark.parametrize(
    "bots",
    [
        (BotSeat(3, "greedy", "x"),),  # no seat 3 in a 3-player game
        (BotSeat(0, "greedy", "x"), BotSeat(0, "random", "y")),
        (BotSeat(1, "clever", "x"),),
        (BotSeat(1, "greedy", "Rita"), BotSeat(2, "random", "RITA")),  # names look alike
    ],
)
def test_invalid_bots_are_refused(bots: tuple[BotSeat, ...]) -> None:
    with pytest.raises(DomainError) as caught:
        execute(State(), CreateGame({"players": 3}, commitment(SEED), SEED, bots))
    assert caught.value.code == "invalid_bots" and caught.value.kind == "rule"


def test_a_bots_name_follows_the_name_rule() -> None:
    """domain/names.py: a bot's name is a seat's name like any other."""
    for name, reason in (("", "blank"), ("\u202eR", "format"), ("R" * 33, "too_long")):
        with pytest.raises(DomainError) as caught:
            bots = (BotSeat(1, "greedy", name),)
            execute(State(), CreateGame({"players": 3}, commitment(SEED), SEED, bots))
        assert caught.value.code == "invalid_name", name
        assert caught.value.details == {"reason": reason}


def test_a_bots_seat_is_played_by_its_bot_only_and_the_clock_by_nobody_else() -> None:
    _, state = bot_game_started()
    with pytest.raises(ValueError, match="played by a greedy bot"):
        pick(state, 1, state.hands[1][0])  # a person's pick for the bot's seat
    with pytest.raises(ValueError, match="played by a greedy bot"):
        execute(state, MakeMove(1, Pick((state.hands[1][0],), by=BY_CLOCK), SEED))
    with pytest.raises(ValueError, match="played by a person"):
        execute(state, MakeMove(0, Pick((state.hands[0][0],), by=BY_BOT), SEED))
    events, _ = execute(state, MakeMove(0, Pick((state.hands[0][0],), by=BY_CLOCK), SEED))
    assert events[0].data["by"] == BY_CLOCK


def bot_game_started() -> tuple[list[Event], State]:
    bots = (BotSeat(1, "greedy", "G"),)
    events, state = execute(State(), CreateGame({"players": 2}, commitment(SEED), SEED, bots))
    new, state = execute(state, TakeSeat("ann", SEED))
    return events + new, state


def test_a_bot_pick_passed_off_as_a_persons_is_caught_by_the_audit() -> None:
    events, _ = bot_game({"players": 3}, ["greedy", "random", "greedy"])
    records = export_records(events)
    version = versions_of(records, "card_picked", seat=1, auto=False)[0]
    tampered = rechain(edited(records, version, lambda r: r["data"].pop("by")))
    report = audit(tampered)
    assert report["chain"]["ok"] and not report["ok"]
    assert report["replay"]["first_bad_version"] == version
    assert "played by a random bot" in report["replay"]["detail"]
