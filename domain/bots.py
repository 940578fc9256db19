"""Built-in bots, the game-independent part: bot seats as recorded, the bots' seeded randomness,
and the loop that lets bots move until the game waits for a person.

A game offers bots through ``Game.bot_move(state, seat, kind, seed, by)``; every game has the
kinds ``random`` and ``greedy`` (the turn clock plays ``greedy`` for a seat whose time ran out).
Bot moves are ordinary commands (``MakeMove``) whose move says ``by``: they are recorded like any
move and re-decided like any move by the audit.
"""

from __future__ import annotations

import hashlib
import hmac
import random
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from . import names
from .decider import (
    BY_BOT,
    BY_CLOCK,
    BY_RESIGNED,
    BY_STALLED,
    BotSeat,
    Game,
    MakeMove,
    conflict,
    rule_broken,
)

RANDOM, GREEDY = "random", "greedy"
KINDS = (RANDOM, GREEDY)
CLOCK_KIND = GREEDY  # who moves for a seat whose turn timed out
TAKE_OVER_KIND = GREEDY  # who plays a seat that resigned or stalled
_BY = (None, BY_BOT, BY_CLOCK, BY_RESIGNED, BY_STALLED)
MAX_BOT_MOVES = 1000  # more than any game has moves: a bot loop that does not end is a bug
_LABEL = b"cardroom-bot-v1"


def check_bots(
    bots: Iterable[BotSeat], players: int, kinds: Sequence[str], name_rule: int = 0
) -> tuple[BotSeat, ...]:
    """The bot seats in seat order (names normalised under ``name_rule``, domain/names.py), or
    ``invalid_bots`` naming what is wrong (two bots' names that look alike too), or
    ``invalid_name`` for a name that cannot be one."""
    ordered = tuple(sorted(bots, key=lambda b: b.seat))
    seats = [b.seat for b in ordered]
    if len(set(seats)) != len(seats):
        raise rule_broken("invalid_bots", "each seat can have one bot only")
    for bot in ordered:
        if not 0 <= bot.seat < players:
            raise rule_broken(
                "invalid_bots", f"seat {bot.seat} does not exist: seats are 0 to {players - 1}"
            )
        if bot.kind not in kinds:
            raise rule_broken(
                "invalid_bots", f"unknown bot {bot.kind!r}; bots are {', '.join(kinds)}"
            )
        if not name_rule and (not isinstance(bot.name, str) or not 1 <= len(bot.name) <= 40):
            raise rule_broken("invalid_bots", "a bot's name has 1 to 40 characters")
    if name_rule:
        ordered = tuple(bot._replace(name=names.normalise(bot.name, name_rule)) for bot in ordered)
        looks = [names.looks(bot.name, name_rule) for bot in ordered]
        for index, bot in enumerate(ordered):
            if alike := [j for j in range(index) if looks[j] & looks[index]]:
                other = ordered[alike[0]]
                raise rule_broken(
                    "invalid_bots",
                    f"the bots of seats {other.seat} and {bot.seat} have names that look the same",
                )
    return ordered


def bots_to_json(bots: Sequence[BotSeat]) -> list[dict[str, Any]]:
    return [{"seat": b.seat, "kind": b.kind, "name": b.name} for b in bots]


def bots_from_json(data: Sequence[Mapping[str, Any]] | None) -> tuple[BotSeat, ...]:
    return tuple(BotSeat(b["seat"], b["kind"], b["name"]) for b in data or ())


def check_turn_seconds(seconds: int | None) -> int | None:
    # The API's schema bounds it; here only what would make the clock meaningless.
    if seconds is not None and (
        not isinstance(seconds, int) or isinstance(seconds, bool) or seconds < 1
    ):
        raise ValueError(f"turn_seconds must be a positive whole number, not {seconds!r}")
    return seconds


def bot_random(seed: bytes, version: int, seat: int) -> random.Random:
    """The random numbers of a bot deciding for ``seat`` at game ``version``:
    ``HMAC-SHA256(key=seed, msg=b"cardroom-bot-v1" + version (8 bytes) + seat (2 bytes))``
    seeds the generator. Why the secret seed: nobody can predict a bot before the game ends;
    why the version: each decision gets its own numbers, the same on every retry."""
    message = _LABEL + version.to_bytes(8, "big") + seat.to_bytes(2, "big")
    digest = hmac.new(seed, message, hashlib.sha256).digest()
    return random.Random(int.from_bytes(digest, "big"))


def check_origin(state: Any, seat: int, by: str | None) -> None:
    """Who may move for ``seat``: a bot's seat its bot only; a person's seat its person or the
    clock, until it is taken over (``seat_taken_over``): then the greedy bot only, marked with
    the reason. A person's move for a taken-over seat is refused (409 ``seat_taken_over``);
    the rest is not reachable over HTTP (a bot's seat has no token): it keeps a replayed log
    honest."""
    if by not in _BY:
        raise ValueError(f"a move is made by a player or one of {_BY[1:]}, not {by!r}")
    bot = state.bots.get(seat)
    if bot is not None or by == BY_BOT:
        if (bot is None) == (by == BY_BOT):
            who = f"a {bot} bot" if bot else "a person"
            raise ValueError(f"seat {seat} is played by {who}; this move says it is by {by}")
        return
    taken = dict(state.taken_over).get(seat)
    if taken is None and by in (BY_RESIGNED, BY_STALLED):
        raise ValueError(f"seat {seat} has not been taken over; this move says it is by {by}")
    if taken is not None and by != taken:
        if by is None:
            raise conflict(
                "seat_taken_over",
                f"seat {seat} is played by the greedy bot since it {taken}: it takes no more"
                " moves from its token",
            )
        raise ValueError(f"seat {seat} is played by the greedy bot ({taken}), not by {by}")


def bot_command(game: Game[Any], state: Any, seed: bytes) -> MakeMove | None:
    """The move the first awaiting bot seat (or seat taken over by the greedy bot) makes now,
    if any seat the game waits for is one."""
    bots = game.bots(state)
    taken = game.taken_over(state) if hasattr(game, "taken_over") else {}
    for seat in game.awaiting(state):
        kind = bots.get(seat)
        if kind is not None:
            return MakeMove(seat, game.bot_move(state, seat, kind, seed, BY_BOT), seed)
        reason = taken.get(seat)
        if reason is not None:
            move = game.bot_move(state, seat, TAKE_OVER_KIND, seed, reason)
            return MakeMove(seat, move, seed)
    return None
