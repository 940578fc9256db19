"""The ratings' pure part (issue 37, domain/ratings.py): who is rated and how they placed (S16,
S17, Q4, Q12, forfeits last), the rules of a rated game (account_required, invalid_rated), and
the fold: deterministic, independent of the order exports come in, the same floats as the
service's ``rate`` one game at a time."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain import ratings
from domain.decider import (
    BY_RESIGNED,
    BotSeat,
    CreateGame,
    DomainError,
    MakeMove,
    TakeOver,
    TakeSeat,
    commitment,
)
from domain.sequence import SEQUENCE
from domain.sushigo import SUSHI_GO
from domain.sushigo.greedy import greedy_pick

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def sushi_go(
    accounts: list[str | None],
    bots: tuple[BotSeat, ...] = (),
    rated: bool = True,
    seed: bytes = b"\x07" * 32,
    resign: tuple[int, ...] = (),
    **rules: Any,
) -> Any:
    """A Sushi Go! game played greedily to its end: ``accounts`` take the person seats."""
    players = len(accounts) + len(bots)
    state = SUSHI_GO.initial_state()
    options = {"players": players, **rules}
    commands: list[Any] = [CreateGame(options, commitment(seed), seed, bots, rated=rated)]
    commands += [TakeSeat(f"p{i}", seed, a) for i, a in enumerate(accounts)]
    commands += [TakeOver(seat, BY_RESIGNED) for seat in resign]
    for command in commands:
        state = SUSHI_GO.execute(state, command)[1]
    while not state.over:
        for seat in SUSHI_GO.awaiting(state):
            by = BY_RESIGNED if seat in resign else None
            if seat in state.bots:
                move = SUSHI_GO.bot_move(state, seat, state.bots[seat], seed)
            else:
                move = greedy_pick(state, seat)._replace(by=by)
            state = SUSHI_GO.execute(state, MakeMove(seat, move, seed))[1]
    return state


def test_a_rated_game_records_it_and_an_unrated_one_records_what_it_always_did() -> None:
    seed = b"\x01" * 32
    rated = SUSHI_GO.decide(
        SUSHI_GO.initial_state(), CreateGame({"players": 2}, "c", seed, (), None, 2, True)
    )
    plain = SUSHI_GO.decide(SUSHI_GO.initial_state(), CreateGame({"players": 2}, "c", seed))
    assert rated[0].data["rated"] is True
    assert "rated" not in plain[0].data


def test_a_rated_game_refuses_a_seat_without_an_account() -> None:
    """Every person's seat of a rated game is an account's (403 account_required)."""
    seed = b"\x02" * 32
    state = SUSHI_GO.execute(
        SUSHI_GO.initial_state(), CreateGame({"players": 2}, commitment(seed), seed, rated=True)
    )[1]
    with pytest.raises(DomainError) as refused:
        SUSHI_GO.execute(state, TakeSeat("anon", seed))
    assert (refused.value.code, refused.value.kind) == ("account_required", "forbidden")
    SUSHI_GO.execute(state, TakeSeat("named", seed, "acc-1"))  # an account's seat is fine


def test_bots_alone_are_not_rated() -> None:
    seed = b"\x03" * 32
    bots = (BotSeat(0, "greedy", "g"), BotSeat(1, "random", "r"))
    with pytest.raises(DomainError) as refused:
        SUSHI_GO.execute(
            SUSHI_GO.initial_state(),
            CreateGame({"players": 2}, commitment(seed), seed, bots, rated=True),
        )
    assert refused.value.code == "invalid_rated"


def test_sushi_go_ranks_by_total_then_puddings_and_ties_stay_ties() -> None:
    """S16: the higher total, then the more puddings; still tied: an equal rank."""
    placings = ratings._placings(
        ["a", "b", "c", "d"], [[0], [1], [2], [3]], [(30, 1), (30, 2), (30, 1), (12, 5)], set()
    )
    assert [p.rank for p in placings] == [2, 1, 2, 4]


def test_a_seat_that_resigned_ranks_last_whatever_the_bot_scored() -> None:
    state = sushi_go(["a", "b", "c"], resign=(0,))
    game = ratings.rated_game("sushi-go", "g", state, T0)
    assert game is not None
    by_seat = {p.seat: p for p in game.placings}
    assert by_seat[0].rank == 3 and {by_seat[1].rank, by_seat[2].rank} <= {1, 2}


def test_the_dummy_variant_rates_only_the_two_players() -> None:
    """S17: the dummy is scored like a third seat but is nobody."""
    state = sushi_go(["a", "b"], dummy=True)
    assert len(state.totals) == 3
    game = ratings.rated_game("sushi-go", "g", state, T0)
    assert game is not None
    assert [p.player for p in game.placings] == ["a", "b"]
    changes = ratings.rate(game, lambda p: ratings.Rating())
    assert [c.player for c in changes] == ["a", "b"]


def test_bots_are_fixed_anchors() -> None:
    bots = (BotSeat(1, "greedy", "g"), BotSeat(2, "greedy", "h"), BotSeat(3, "random", "r"))
    state = sushi_go(["a"], bots=bots)
    game = ratings.rated_game("sushi-go", "g", state, T0)
    assert game is not None
    assert [p.player for p in game.placings] == ["a", "bot:greedy", "bot:greedy", "bot:random"]
    ledger = ratings.Ledger()
    (change,) = ledger.apply(game)  # one change: the anchors never move
    assert change.player == "a" and change.before == ratings.Rating()
    assert ratings.current(ledger.ratings, game.pool, "bot:greedy") == ratings.ANCHORS["bot:greedy"]


def test_an_unrated_or_cancelled_game_is_not_rated() -> None:
    assert ratings.rated_game("sushi-go", "g", sushi_go(["a", "b"], rated=False), T0) is None


def test_sequence_rates_teams_and_the_winner_first() -> None:
    """Q4: seat i plays for team i mod teams; Q12: the winning team first."""

    class Rules:
        players, teams = 4, 2

        def seats_of(self, team: int) -> list[int]:
            return list(range(team, 4, 2))

    class State:
        rated, over, cancelled, rules = True, True, False, Rules()
        bots = {3: "greedy"}
        accounts = ("a", "b", "c", None)
        taken_over = ((2, BY_RESIGNED),)
        winning_team = 1

    game = ratings.rated_game("sequence", "g", State(), T0)
    assert game is not None and game.pool == "sequence"
    assert [(p.seat, p.team, p.rank) for p in game.placings] == [
        (0, 0, 2),
        (1, 1, 1),
        (3, 1, 1),
        (2, 2, 3),  # resigned: alone, last
    ]
    changes = ratings.rate(game, lambda p: ratings.current({}, game.pool, p))
    assert [c.player for c in changes] == ["a", "b", "c"]
    assert changes[1].after.mu > changes[1].before.mu  # won (with a strong anchor: a little)
    assert changes[2].after.mu < changes[2].before.mu  # resigned: last


def test_a_real_sequence_game_folds() -> None:
    seed = b"\x05" * 32
    bots = (BotSeat(1, "greedy", "g"),)
    state = SEQUENCE.execute(
        SEQUENCE.initial_state(),
        CreateGame({"players": 2}, commitment(seed), seed, bots, rated=True),
    )[1]
    state = SEQUENCE.execute(state, TakeSeat("p", seed, "acc"))[1]
    while not state.over:
        (seat,) = SEQUENCE.awaiting(state)
        move = SEQUENCE.bot_move(state, seat, "greedy", seed, "bot" if seat == 1 else None)
        state = SEQUENCE.execute(state, MakeMove(seat, move, seed))[1]
    game = ratings.rated_game("sequence", "g", state, T0)
    assert game is not None and [p.player for p in game.placings] == ["acc", "bot:greedy"]


# --- the fold ---------------------------------------------------------------------------------

PLAYERS = [f"acc-{n}" for n in range(6)] + ["bot:greedy", "bot:random"]


@st.composite
def rated_games(draw: st.DrawFn) -> list[ratings.RatedGame]:
    count = draw(st.integers(1, 12))
    games = []
    for n in range(count):
        size = draw(st.integers(2, 5))
        people = draw(st.permutations(PLAYERS[:6]))[: size - 1]
        bot = draw(st.sampled_from(PLAYERS[6:]))
        players = [*people, bot]
        ranks = draw(st.lists(st.integers(1, size), min_size=size, max_size=size))
        placings = tuple(
            ratings.Placing(seat, player, seat, rank)
            for seat, (player, rank) in enumerate(zip(players, ranks, strict=True))
        )
        pool = draw(st.sampled_from(ratings.POOLS))
        games.append(ratings.RatedGame(f"g{n:03d}", pool, T0 + timedelta(seconds=n), placings))
    return games


@settings(max_examples=60, deadline=None)
@given(rated_games(), st.randoms(use_true_random=False))
def test_the_fold_ignores_the_order_games_come_in(
    games: list[ratings.RatedGame], rng: random.Random
) -> None:
    """Finish order decides, not the order exports are read in: bit-identical ratings."""
    once = ratings.fold(games)
    shuffled = list(games)
    rng.shuffle(shuffled)
    again = ratings.fold(shuffled)
    assert once.ratings == again.ratings  # dataclass equality of floats: exact
    assert [c.after for c in once.changes] == [c.after for c in again.changes]


@settings(max_examples=60, deadline=None)
@given(rated_games())
def test_one_game_at_a_time_is_the_fold(games: list[ratings.RatedGame]) -> None:
    """The service rates each game as it ends, from what is stored; the rebuild folds them all:
    the same floats."""
    stored: dict[tuple[str, str], ratings.Rating] = {}
    for game in sorted(games, key=lambda g: g.order):
        for change in ratings.rate(game, lambda p, g=game: ratings.current(stored, g.pool, p)):
            stored[(change.pool, change.player)] = change.after
    assert stored == ratings.fold(games).ratings
    assert all(not ratings.is_anchor(player) for _, player in stored)


@settings(max_examples=60, deadline=None)
@given(rated_games())
def test_a_winner_gains_and_games_count(games: list[ratings.RatedGame]) -> None:
    ledger = ratings.fold(games)
    for change in ledger.changes:
        assert change.after.games == change.before.games + 1
        game = next(g for g in games if g.game_id == change.game_id)
        ranks = [p.rank for p in game.placings]
        if change.rank == min(ranks) < max(ranks):
            assert change.after.mu > change.before.mu


def test_ties_break_by_game_id() -> None:
    a = ratings.RatedGame("b", "sequence", T0, ())
    b = ratings.RatedGame("a", "sequence", T0, ())
    assert sorted([a, b], key=lambda g: g.order) == [b, a]


def test_provisional_until_ten_games_and_a_small_sigma() -> None:
    assert ratings.Rating(30.0, 3.0, 9).provisional
    assert ratings.Rating(30.0, ratings.SIGMA_BOUND, 12).provisional
    assert not ratings.Rating(30.0, 3.0, 10).provisional
    assert ratings.Rating(30.0, 3.0).ordinal == 21.0
