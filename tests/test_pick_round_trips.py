"""A pick is appended at the version this process holds, without reading the game first (issue
15): one round trip when the process is current; a process that is behind (another worker
appended) gets a version conflict, reads the events it missed and decides again, so that the
move is still recorded exactly once, and a refusal is only ever judged on a state just read."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from uuid import UUID, uuid4

import psycopg
import pytest
from psycopg_pool import ConnectionPool

from domain.sushigo import Pick
from service.errors import ServiceError
from service.http.app import create_app
from service.play import GameService
from service.store import db
from service.store.events import EventStore


class CountingStore(EventStore):
    """The real store, counting the connections it takes: one per round trip of a pick."""

    def __init__(self, pool: ConnectionPool) -> None:
        super().__init__(pool)
        self.round_trips = 0

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        self.round_trips += 1
        with super()._connection() as conn:
            yield conn


def two_player_game(service: GameService) -> UUID:
    gid = service.create("sushi-go", {"players": 2}).id
    for seat in range(2):
        service.join(gid, f"p{seat}", hashlib.sha256(f"{gid}{seat}".encode()).digest())
    return gid


def pick(service: GameService, gid: UUID, seat: int, turn: tuple[int, int] | None = None) -> Any:
    """``seat``'s first card, as this process last saw the game, for ``turn`` (default: the
    turn it last saw)."""
    seen = service.last_seen(gid)
    assert seen is not None
    state = seen.state
    move = Pick((state.hands[seat][0],))
    return service.move(gid, seat, move, turn or (state.round, state.turn), seen)


def picks_of(store: EventStore, gid: UUID) -> list[tuple[int, int, int]]:
    return [
        (r.data["round"], r.data["turn"], r.data["seat"])
        for r in store.load_records(gid, 0, 1000)
        if r.type == "card_picked"
    ]


def test_an_http_pick_is_one_round_trip_when_the_process_holds_the_game(
    pool: ConnectionPool,
) -> None:
    app = create_app(pool=pool, config={"CARDROOM_CLOCK_INTERVAL": 0})
    store = CountingStore(pool)
    app.extensions["cardroom"] = GameService(store)
    client = app.test_client()
    game = client.post("/games", json={"game": "sushi-go", "players": 2}).headers["Location"]
    tokens = [
        client.post(f"{game}/players", json={"name": f"p{i}"}).get_json()["token"] for i in range(2)
    ]
    auth = {"Authorization": f"Bearer {tokens[0]}"}
    view = client.get(game, headers=auth).get_json()
    before = store.round_trips
    body = {"round": 1, "turn": 1, "cards": view["you"]["hand"][:1]}
    answer = client.post(f"{game}/moves", json=body, headers=auth)
    assert answer.status_code == 200, answer.get_json()
    assert store.round_trips - before == 1  # the append, nothing read before it
    assert answer.get_json()["version"] == view["version"] + 1
    assert picks_of(store, UUID(game.rsplit("/", 1)[1])) == [(1, 1, 0)]


class CountingConnection(db.FirstToAnswer):
    """The service's connection class, counting its round trips (a statement, BEGIN, COMMIT:
    each exchange that waits for the server; a commit with nothing to commit does not), on any
    connection of any pool built with it: the store's, and any other a request would open."""

    round_trips = 0

    def wait(self, gen: Any, *args: Any, **kwargs: Any) -> Any:
        return super().wait(_counted(gen), *args, **kwargs)


def _counted(gen: Any) -> Any:
    """``gen`` (one of psycopg's exchanges with the server), counted if it waits on the socket."""
    try:
        waiting = next(gen)
    except StopIteration as done:  # answered from the connection's own state
        return done.value
    CountingConnection.round_trips += 1
    while True:
        ready = yield waiting
        try:
            waiting = gen.send(ready)
        except StopIteration as done:
            return done.value


def test_a_keyed_http_pick_is_one_round_trip(database_url: str) -> None:
    """With its Idempotency-Key too (issue 40): no lock connection, no lookup before the append;
    the record goes in the append's statement. Counted on every connection the app has."""
    with db.make_pool(database_url, min_size=0, max_size=4) as pool:
        pool.connection_class = CountingConnection  # none is open yet
        client = create_app(pool=pool, config={"CARDROOM_CLOCK_INTERVAL": 0}).test_client()
        game = client.post("/games", json={"game": "sushi-go", "players": 2}).headers["Location"]
        tokens = [
            client.post(f"{game}/players", json={"name": f"p{i}"}).get_json()["token"]
            for i in range(2)
        ]
        auth = {"Authorization": f"Bearer {tokens[0]}"}
        view = client.get(game, headers=auth).get_json()
        body = {"round": 1, "turn": 1, "cards": view["you"]["hand"][:1]}
        keyed = {**auth, "Idempotency-Key": str(uuid4())}
        client.post("/games", json={"game": "sushi-go"}, headers={"Idempotency-Key": str(uuid4())})
        before = CountingConnection.round_trips
        answer = client.post(f"{game}/moves", json=body, headers=keyed)
        assert answer.status_code == 200, answer.get_json()
        assert CountingConnection.round_trips - before == 1  # the append, with its record
        before = CountingConnection.round_trips
        again = client.post(f"{game}/moves", json=body, headers=keyed)
        assert again.headers["Idempotent-Replayed"] == "true"
        assert again.get_data() == answer.get_data()
        # The retry's own append is refused (the seat has picked), then the key is looked up.
        assert CountingConnection.round_trips - before >= 2


def test_a_process_that_is_behind_rereads_and_records_its_pick_once(pool: ConnectionPool) -> None:
    """Two workers hold the game at the same version; B's pick gets in first. A's append
    conflicts, A reads what it missed and appends after it: both picks are recorded, once."""
    a, b = GameService(CountingStore(pool)), GameService(EventStore(pool))
    gid = two_player_game(a)
    b.load(gid)
    pick(b, gid, 1)
    moved = pick(a, gid, 0)  # decided first on A's stale state, at version v: conflicts
    assert moved.version == a.store.version(gid)
    assert moved.state.round == 1 and moved.state.turn == 2  # A's pick ended the turn
    assert picks_of(a.store, gid) == [(1, 1, 1), (1, 1, 0)]


def test_a_refusal_is_judged_again_on_the_current_state(pool: ConnectionPool) -> None:
    """A holds turn 1; meanwhile B's process saw both seats pick (turn 2). Seat 0 sends its
    pick for turn 2 through A: A's stale state would call it a move for a turn not yet reached;
    judged again on the current state, it is accepted."""
    a, b = GameService(EventStore(pool)), GameService(EventStore(pool))
    gid = two_player_game(a)
    b.load(gid)
    pick(b, gid, 0)
    pick(b, gid, 1)
    stale = a.last_seen(gid)
    assert stale is not None and stale.state.turn == 1
    current = b.last_seen(gid)
    assert current is not None
    card = current.state.hands[0][0]
    moved = a.move(gid, 0, Pick((card,)), (1, 2), stale)
    assert picks_of(a.store, gid) == [(1, 1, 0), (1, 1, 1), (1, 2, 0)]
    assert moved.version == a.store.version(gid)


def test_a_stale_move_is_refused_on_the_current_state_and_says_where_it_is(
    pool: ConnectionPool,
) -> None:
    """The other way round: a move for turn 1 that the process (behind) would accept, while
    the game is at turn 2: refused as stale, naming the current version, nothing recorded."""
    a, b = GameService(EventStore(pool)), GameService(EventStore(pool))
    gid = two_player_game(a)
    b.load(gid)
    pick(b, gid, 0)
    pick(b, gid, 1)
    with pytest.raises(ServiceError) as refused:
        pick(a, gid, 0)  # for turn 1, as A last saw it
    assert refused.value.code == "stale_move"
    assert refused.value.where["version"] == a.store.version(gid)
    assert (refused.value.where["round"], refused.value.where["turn"]) == (1, 2)
    assert picks_of(a.store, gid) == [(1, 1, 0), (1, 1, 1)]
