"""Ratings (issue 37): OpenSkill's Plackett-Luce model folded over finished rated games, one pool
per game and edition, in finish order (ties broken by ``game_id``). Pure: the service runs
:func:`rate` in the transaction of a rated game's last event, and ``cardroom ratings rebuild``
runs :func:`fold` over exports; both call the same code on the same floats, so they agree bit
for bit (tests/test_ratings.py, tests/test_api_ratings.py).

Who is rated, and how they placed (:func:`rated_game`, from the finished game's state):

- Sushi Go!: every player seat is a team of one, ranked by the final score sheet with the
  rulebook's tie-breaks: the higher total, then the more puddings (S16); players still tied
  share the rank (a shared win is a tie, not two wins). In the 2-player dummy variant only the
  two players are rated: the dummy is scored like a third seat but is nobody (S17).
- Sequence: each team is a team (Q4: seat i plays for team i mod teams); the winning team ranks
  first and the others after it (Q12); a draw ranks every team equal.
- A seat that resigned or stalled (``seat_taken_over``: the greedy bot played it to the end)
  ranks last, after every seat that played on, whatever the bot scored for it; in Sequence it
  leaves its team and ranks last alone. Seats that forfeited tie with each other.
- Built-in bots are the anchors ``bot:greedy`` and ``bot:random``: fixed ratings (``ANCHORS``)
  that take part in every game they sit in and never move, so that a rating means the same
  across the pool however many bots its players met (and a bot filling three seats of one game
  is three teams, each with the same fixed rating).

Floats are Python floats (IEEE 754 binary64) from end to end: PostgreSQL stores them as
``float8``, JSON carries their shortest round-trip ``repr``; nothing is rounded on the way. The
arithmetic is openskill's, pinned to one version in pyproject.toml (another version may compute
differently, and so may another platform's ``libm``: a rebuild is exact on the same library).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from openskill.models import PlackettLuce, PlackettLuceRating

from .bots import GREEDY, RANDOM
from .decider import BY_RESIGNED, BY_STALLED, GAME_CREATED, GAME_ENDED, Event
from .decider import fold as fold_events
from .games import GAMES

POOLS = ("sushi-go-gamewright", "sushi-go-zoch", "sequence")
# The model with OpenSkill's defaults: mu 25, sigma 25/3, beta 25/6, tau 25/300.
MU, SIGMA = 25.0, 25.0 / 3.0
MODEL = PlackettLuce(mu=MU, sigma=SIGMA)
PROVISIONAL_GAMES = 10  # a rating is provisional until this many rated games ...
SIGMA_BOUND = (
    7.0  # ... and until its sigma is below this (about 10 games in; documented in the API)
)
FORFEITS = (BY_RESIGNED, BY_STALLED)


@dataclass(frozen=True, slots=True)
class Rating:
    """A player's rating in a pool after ``games`` rated games."""

    mu: float = MU
    sigma: float = SIGMA
    games: int = 0

    @property
    def ordinal(self) -> float:
        """The displayed rating, mu - 3 sigma: the skill the player has at least, almost surely."""
        return self.mu - 3 * self.sigma

    @property
    def provisional(self) -> bool:
        return self.games < PROVISIONAL_GAMES or self.sigma >= SIGMA_BOUND


def bot_player(kind: str) -> str:
    """A built-in bot's identity in ratings (its account id, migration 0018)."""
    return f"bot:{kind}"


# The anchors' fixed ratings, the same in every pool: where the synthetic league
# (bench/ratings_league.py: 20 seeds x 2,000 four-player Sushi Go! games, mean mu of the
# always-greedy tier 32.21 and of the always-random tier 17.37) puts an account that always plays
# like the bot, in a pool whose newcomers start at mu 25. Measured on Sushi Go! only: Sequence's
# bots are taken to sit as far apart until a league of its own says otherwise. A small sigma:
# their strength is known, so games against them move people, not the scale.
ANCHORS: Mapping[str, Rating] = {
    bot_player(GREEDY): Rating(32.2, 1.0),
    bot_player(RANDOM): Rating(17.4, 1.0),
}


def is_anchor(player: str) -> bool:
    return player in ANCHORS


@dataclass(frozen=True, slots=True)
class Placing:
    """One seat of a rated game: who played it, for which team (its index among the game's
    rated teams) and the team's rank (1 is first; equal ranks are a tie)."""

    seat: int
    player: str
    team: int
    rank: int


@dataclass(frozen=True, slots=True)
class RatedGame:
    """A finished rated game as the fold needs it."""

    game_id: str
    pool: str
    finished_at: datetime
    placings: tuple[Placing, ...]

    @property
    def order(self) -> tuple[datetime, str]:
        """Its place in the fold: finish time, then ``game_id`` (the rebuild's order)."""
        return (self.finished_at, self.game_id)

    def teams(self) -> list[list[Placing]]:
        teams: list[list[Placing]] = [[] for _ in range(1 + max(p.team for p in self.placings))]
        for placing in self.placings:
            teams[placing.team].append(placing)
        return teams


@dataclass(frozen=True, slots=True)
class Change:
    """What one rated game did to one player's rating (anchors have none)."""

    game_id: str
    pool: str
    player: str
    seat: int
    rank: int
    before: Rating
    after: Rating


# --- who placed where -----------------------------------------------------------------------


def pool_of(game: str, rules: Any) -> str:
    """The pool of a game and its rules: one per game and edition."""
    if game == "sushi-go":
        return f"sushi-go-{rules.edition}"
    if game == "sequence":
        return "sequence"
    raise ValueError(f"{game} has no rating pool")


def rated_game(game: str, game_id: str, state: Any, finished_at: datetime) -> RatedGame | None:
    """The rated game of a finished game's ``state``; None unless it was created ``rated`` and
    ended (a cancelled game is not rated)."""
    if not getattr(state, "rated", False) or not state.over or getattr(state, "cancelled", False):
        return None
    rules = state.rules
    players = [_player(state, seat) for seat in range(rules.players)]
    forfeited = {seat for seat, reason in state.taken_over if reason in FORFEITS}
    if game == "sushi-go":
        teams, keys = _sushi_go(state, rules.players)
    else:
        teams, keys = _sequence(state, rules)
    placings = _placings(players, teams, keys, forfeited)
    return RatedGame(game_id, pool_of(game, rules), finished_at, placings)


def seat_players(state: Any) -> list[str | None]:
    """Who each seat of a game is in ratings, in seat order: a built-in bot's anchor, a seat's
    account, or None (a free seat). What a rated game's view shows as ``rated_accounts``."""
    bots, accounts = state.bots, state.accounts
    return [
        bot_player(bots[seat])
        if seat in bots
        else (str(accounts[seat]) if seat < len(accounts) and accounts[seat] else None)
        for seat in range(state.rules.players)
    ]


def _player(state: Any, seat: int) -> str:
    bots = state.bots
    if seat in bots:
        return bot_player(bots[seat])
    accounts = state.accounts
    account = accounts[seat] if seat < len(accounts) else None
    if account is None:  # the rules refuse such a seat in a rated game (account_required)
        raise ValueError(f"seat {seat} of a rated game has no account")
    return str(account)


def _sushi_go(state: Any, players: int) -> tuple[list[list[int]], list[tuple[int, ...]]]:
    """S16: the higher total, then the more puddings; the dummy (scored seat ``players``) is
    nobody's (S17)."""
    teams = [[seat] for seat in range(players)]
    keys: list[tuple[int, ...]] = [
        (int(state.totals[seat]), int(state.puddings[seat])) for seat in range(players)
    ]
    return teams, keys


def _sequence(state: Any, rules: Any) -> tuple[list[list[int]], list[tuple[int, ...]]]:
    """Q12: the winning team first, the others after it; a draw ties every team."""
    teams: list[list[int]] = [list(rules.seats_of(team)) for team in range(rules.teams)]
    won = state.winning_team
    keys: list[tuple[int, ...]] = [(1 if team == won else 0,) for team in range(rules.teams)]
    return teams, keys


def _placings(
    players: Sequence[str],
    teams: Sequence[Sequence[int]],
    keys: Sequence[tuple[int, ...]],
    forfeited: set[int],
) -> tuple[Placing, ...]:
    """Teams in their order (seats that forfeited taken out, teams left empty dropped), then
    each forfeited seat alone; ranks by ``keys`` (higher is better), forfeits tied last."""
    kept = [
        ([s for s in seats if s not in forfeited], key)
        for seats, key in zip(teams, keys, strict=True)
    ]
    kept = [(seats, key) for seats, key in kept if seats]
    placings = [  # competition ranks: 1 + the teams that did strictly better (1, 2, 2, 4)
        Placing(seat, players[seat], index, 1 + sum(other > key for _, other in kept))
        for index, (seats, key) in enumerate(kept)
        for seat in seats
    ]
    last = len(kept) + 1
    placings += [
        Placing(seat, players[seat], len(kept) + n, last)
        for n, seat in enumerate(sorted(forfeited))
    ]
    return tuple(placings)


# --- the model --------------------------------------------------------------------------------


def _model_rating(rating: Rating) -> PlackettLuceRating:
    return MODEL.create_rating([rating.mu, rating.sigma])


def current(ratings: Mapping[tuple[str, str], Rating], pool: str, player: str) -> Rating:
    """``player``'s rating in ``pool``: an anchor's fixed one, else the last, else a newcomer's."""
    return ANCHORS.get(player) or ratings.get((pool, player)) or Rating()


def rate(game: RatedGame, rating_of: Callable[[str], Rating]) -> list[Change]:
    """The changes ``game`` makes, given each player's rating before it (``rating_of``, which
    gives anchors their fixed ratings); one per seat that is not an anchor's, in seat order."""
    teams = game.teams()
    before = [[rating_of(p.player) for p in team] for team in teams]
    ranks = [float(team[0].rank) for team in teams]
    result = MODEL.rate([[_model_rating(r) for r in team] for team in before], ranks=ranks)
    changes = [
        Change(
            game.game_id,
            game.pool,
            placing.player,
            placing.seat,
            placing.rank,
            was,
            Rating(float(new.mu), float(new.sigma), was.games + 1),
        )
        for team, was_team, new_team in zip(teams, before, result, strict=True)
        for placing, was, new in zip(team, was_team, new_team, strict=True)
        if not is_anchor(placing.player)
    ]
    return sorted(changes, key=lambda change: change.seat)


@dataclass
class Ledger:
    """Every player's rating in every pool, and every change, after a fold."""

    ratings: dict[tuple[str, str], Rating] = field(default_factory=dict)
    changes: list[Change] = field(default_factory=list)
    games: int = 0

    def apply(self, game: RatedGame) -> list[Change]:
        changes = rate(game, lambda player: current(self.ratings, game.pool, player))
        for change in changes:
            self.ratings[(change.pool, change.player)] = change.after
        self.changes.extend(changes)
        self.games += 1
        return changes


def fold(games: Iterable[RatedGame], ledger: Ledger | None = None) -> Ledger:
    """Every rated game applied in finish order, ties broken by ``game_id`` (the rebuild)."""
    ledger = Ledger() if ledger is None else ledger
    for game in sorted(games, key=lambda g: g.order):
        ledger.apply(game)
    return ledger


# --- from exports -----------------------------------------------------------------------------


def from_export(records: Sequence[Mapping[str, Any]]) -> RatedGame | None:
    """The rated game of one game's export records (JSON Lines parsed; the closing checkpoint
    line is ignored); None for a game not created ``rated`` or not ended. Its finish time is the
    ``recorded_at`` of its last event, the time the service rated it at."""
    events = [r for r in records if "checkpoint" not in r]
    if not events or events[0]["type"] != GAME_CREATED:
        raise ValueError("an export starts with its game_created")
    created = events[0]["data"]
    if not created.get("rated") or events[-1]["type"] != GAME_ENDED:
        return None  # the common case costs a look at the first and last lines
    name = created["game"]
    game = GAMES[name]
    state = fold_events(
        game, [game.upcast(Event(r["type"], r["data"], r["schema_version"])) for r in events]
    )
    finished_at = datetime.fromisoformat(events[-1]["recorded_at"])
    return rated_game(name, str(events[0]["game_id"]), state, finished_at)


def rebuild(exports: Iterable[Sequence[Mapping[str, Any]]]) -> Ledger:
    """Every rating, recomputed from exports alone (each one game's records, in any order):
    the rated games among them folded in finish order. ``cardroom ratings rebuild`` and the
    client kit's ``cardroom_client.ratings`` run this."""
    games = [game for records in exports if (game := from_export(records)) is not None]
    return fold(games)


def predict_ranks(ratings: Sequence[Rating]) -> list[int]:
    """OpenSkill's predicted rank of each player of a free-for-all (1: the likeliest winner)."""
    predicted = MODEL.predict_rank([[_model_rating(r)] for r in ratings])
    return [int(rank) for rank, _ in predicted]
