"""A finished game's rematch is created once, whatever races (issue 29): the database decides,
not a lock of one process. Two "hosts" (two services, each with its own caches) that both see no
rematch yet and both create one end up with one rematch, both seated in it; one seat asking twice
gets one seat. On the real database, without HTTP (tests/test_api_rematch.py has the routes)."""

from __future__ import annotations

import hashlib
import secrets
import threading
from collections.abc import Callable
from typing import Any
from uuid import UUID

import pytest
from psycopg_pool import ConnectionPool

from domain.decider import BotSeat
from service.errors import ServiceError
from service.play import GameService
from service.rematch import Rematcher
from service.store.events import EventStore
from service.store.rematches import Rematch


def _token() -> bytes:
    return hashlib.sha256(secrets.token_bytes(32)).digest()


def finished_game(games: GameService, players: int = 2, bots: tuple[BotSeat, ...] = ()) -> UUID:
    """A game of ``players`` seats (``bots`` among them) whose people all resigned: the greedy
    bot played it to its end."""
    created = games.create("sushi-go", {"players": players}, bots)
    people = players - len(bots)
    for n in range(people):
        games.join(created.id, f"Player {n}", _token())
    for seat in range(players):
        if seat not in {b.seat for b in bots}:
            games.resign(created.id, seat)
    assert games.load(created.id).adapter.game.is_over(games.load(created.id).state)
    return created.id


class _BothSeeNone(Rematcher):
    """A host that reads "no rematch yet" once, after the other host read it too: both then
    create one, as two hosts asking at the same moment would."""

    def __init__(self, games: GameService, barrier: threading.Barrier) -> None:
        super().__init__(games)
        self.barrier = barrier
        self.first = True

    def of(self, game_id: UUID) -> Rematch | None:
        if self.first:
            self.first = False
            self.barrier.wait(timeout=10)
            return None
        return super().of(game_id)


def _at_once(*calls: Callable[[], Any]) -> list[Any]:
    results: list[Any] = [None] * len(calls)

    def run(i: int) -> None:
        try:
            results[i] = calls[i]()
        except Exception as exc:  # reported below
            results[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return results


def test_two_hosts_proposing_at_once_create_one_rematch(pool: ConnectionPool) -> None:
    host_a, host_b = GameService(EventStore(pool)), GameService(EventStore(pool))
    gid = finished_game(host_a)
    barrier = threading.Barrier(2)
    a, b = _BothSeeNone(host_a, barrier), _BothSeeNone(host_b, barrier)
    results = _at_once(lambda: a.ask(gid, 0, _token()), lambda: b.ask(gid, 1, _token()))
    for result in results:
        assert not isinstance(result, Exception), result
    (rematch_a, seat_a, _), (rematch_b, seat_b, _) = results
    assert rematch_a == rematch_b  # one rematch, both seated in it
    assert {seat_a, seat_b} == {0, 1}
    new = host_a.load(rematch_a.rematch_id)
    assert new.adapter.game.view(new.state, _spectator())["status"] == "playing"
    # The loser's game was rolled back whole: exactly one game names this one as its origin.
    with pool.connection() as conn:
        count = conn.execute("SELECT count(*) FROM rematches WHERE game_id = %s", (gid,))
        assert count.fetchone() == (1,)
    assert Rematcher(host_b).rows.seats(gid) == {0: seat_a, 1: seat_b}


def test_a_seat_asking_twice_at_once_gets_one_seat(pool: ConnectionPool) -> None:
    games = GameService(EventStore(pool))
    gid = finished_game(games, players=3)
    rematcher = Rematcher(games)
    results = _at_once(*[lambda: rematcher.ask(gid, 2, _token()) for _ in range(2)])
    refused = [r for r in results if isinstance(r, ServiceError)]
    seated = [r for r in results if isinstance(r, tuple)]
    assert len(seated) == 1 and len(refused) == 1, results
    assert refused[0].code == "already_in_rematch" and refused[0].kind == "conflict"
    new = games.load(seated[0][0].rematch_id)
    assert [n for n in new.state.names if n] == ["Player 2"]  # one seat, its old name


def test_bots_come_back_as_bots_and_names_stay(pool: ConnectionPool) -> None:
    games = GameService(EventStore(pool))
    bots = (BotSeat(1, "random", "Rita"),)
    gid = finished_game(games, players=3, bots=bots)
    rematcher = Rematcher(games)
    rematch, seat, new = rematcher.ask(gid, 2, _token())
    view = new.adapter.game.view(new.state, _spectator())
    assert (
        view["status"] == "waiting"
        and view["rules"]
        == games.load(gid).adapter.game.view(games.load(gid).state, _spectator())["rules"]
    )
    seats = view["seats"]
    assert (seats[1]["bot"], seats[1]["name"]) == ("random", "Rita")  # reserved as before
    assert seat == 0 and seats[0]["name"] == "Player 1"  # the first free seat, its own name
    rematch2, seat0, started = rematcher.ask(gid, 0, _token())
    assert rematch2 == rematch and seat0 == 2
    assert started.adapter.game.view(started.state, _spectator())["status"] == "playing"


def test_a_private_games_rematch_is_private(pool: ConnectionPool) -> None:
    games = GameService(EventStore(pool))
    created = games.create("sushi-go", {"players": 2}, private=(_token(), _token()))
    for n in range(2):
        games.join(created.id, f"P{n}", _token())
    for seat in range(2):
        games.resign(created.id, seat)
    rematch, _, _ = Rematcher(games).ask(created.id, 0, _token())
    private = games.private_game(rematch.rematch_id)
    assert private is not None and private.invitation_hash is not None


def test_no_rematch_before_the_end(pool: ConnectionPool) -> None:
    games = GameService(EventStore(pool))
    created = games.create("sushi-go", {"players": 2})
    games.join(created.id, "Ann", _token())
    with pytest.raises(ServiceError) as refused:
        Rematcher(games).ask(created.id, 0, _token())
    assert refused.value.code == "game_not_over"
    assert Rematcher(games).of(created.id) is None


def _spectator() -> Any:
    from domain.decider import SPECTATOR

    return SPECTATOR
