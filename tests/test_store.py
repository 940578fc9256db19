"""EventStore against a real PostgreSQL (see conftest.py). The module's tests share a database of
their own (``own_database``: their games are of made-up kinds, which no service can
fold, so they stay out of other tests' lobby listings): every test makes its own games (fresh
UUIDs) and filters listings by a game name of its own."""

from __future__ import annotations

import hashlib
import threading
import uuid
from typing import Any
from uuid import UUID

import own_database
import psycopg
import pytest
from psycopg_pool import ConnectionPool

from domain.chain import first_break
from domain.decider import GAME_CREATED, GAME_ENDED, GAME_STARTED, SEAT_LEFT, SEAT_TAKEN, Event
from service.store.db import make_pool
from service.store.events import (
    EventStore,
    GameCursor,
    GameExists,
    GameNotFound,
    StoreUnavailable,
    VersionConflict,
)

SEED = b"\x01" * 32

# A database of the module's own (see the docstring and own_database.py).
database_url = own_database.database_url
pool = own_database.pool


@pytest.fixture(scope="module")
def store(pool: ConnectionPool) -> EventStore:
    return EventStore(pool)


def created(**data: Any) -> Event:
    return Event(GAME_CREATED, {"seats": 2, **data})


def moved(n: int) -> Event:
    return Event("card_played", {"n": n})


def token_hash(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def new_game(store: EventStore, name: str = "test", events: list[Event] | None = None) -> UUID:
    game_id = uuid.uuid4()
    store.create_game(game_id, name, SEED, events or [created()])
    return game_id


# --- create and load --------------------------------------------------------------------------


def test_create_then_load_round_trips_events(store: EventStore) -> None:
    game_id = uuid.uuid4()
    events = [created(rules={"deck": [1, 2, 3]}), Event("note", {"text": "é ✓"}, schema_version=3)]

    assert store.create_game(game_id, "sushi-go", SEED, events) == 2

    assert store.load(game_id) == ("sushi-go", events)
    assert store.version(game_id) == 2
    assert store.seed(game_id) == (SEED, None)  # stored as given; GameService seals it


def test_create_twice_is_refused(store: EventStore) -> None:
    game_id = new_game(store)
    with pytest.raises(GameExists):
        store.create_game(game_id, "test", SEED, [created()])


def test_unknown_game_is_not_found(store: EventStore) -> None:
    unknown = uuid.uuid4()
    for read in (store.load, store.seed, store.version, store.load_records):
        with pytest.raises(GameNotFound):
            read(unknown)
    with pytest.raises(GameNotFound):
        store.append(unknown, 0, [created()])


def test_load_records_paginates_in_version_order(store: EventStore) -> None:
    game_id = new_game(store)
    store.append(game_id, 1, [moved(n) for n in range(5)])

    first = store.load_records(game_id, after=0, limit=4)
    rest = store.load_records(game_id, after=first[-1].version, limit=4)

    records = first + rest
    assert [r.version for r in records] == [1, 2, 3, 4, 5, 6]
    assert [r.event for r in records[1:]] == [moved(n) for n in range(5)]
    assert [r.position for r in records] == sorted(r.position for r in records)
    assert all(r.recorded_at.tzinfo is not None for r in records)
    assert store.load_records(game_id, after=6) == []


# --- optimistic concurrency -------------------------------------------------------------------


def test_append_returns_new_version(store: EventStore) -> None:
    game_id = new_game(store)
    assert store.append(game_id, 1, [moved(1), moved(2)]) == 3
    assert store.append(game_id, 3, [moved(3)]) == 4
    assert store.load(game_id)[1][1:] == [moved(1), moved(2), moved(3)]


def test_second_append_at_same_version_conflicts(store: EventStore) -> None:
    game_id = new_game(store)
    store.append(game_id, 1, [moved(1)])

    with pytest.raises(VersionConflict) as caught:
        store.append(game_id, 1, [moved(2), moved(3)])

    assert caught.value.expected_version == 1
    assert store.load(game_id)[1] == [created(), moved(1)]


def test_append_past_the_end_conflicts(store: EventStore) -> None:
    # A version the game has not reached would leave a gap: refused by the database itself.
    game_id = new_game(store)
    with pytest.raises(VersionConflict):
        store.append(game_id, 5, [moved(1)])
    assert store.version(game_id) == 1


def test_append_is_all_or_nothing(store: EventStore) -> None:
    game_id = new_game(store)
    # PostgreSQL's jsonb refuses \u0000: the third row fails after two were inserted.
    batch = [moved(1), moved(2), Event("bad", {"text": "nul \x00 here"})]

    with pytest.raises(psycopg.DataError):
        store.append(game_id, 1, batch)

    assert store.load(game_id)[1] == [created()]
    assert store.append(game_id, 1, [moved(1)]) == 2  # and the game is still usable


def test_seat_row_failing_rolls_back_its_events(store: EventStore) -> None:
    game_id = new_game(store)
    taken = token_hash(f"token-{game_id}")
    store.append(game_id, 1, [Event(SEAT_TAKEN, {"seat": 0})], seat_token=(0, taken, 2))
    before = store.load(game_id)[1]

    # A token hash is unique within its game (migration 0015: (game_id, token_hash)).
    with pytest.raises(psycopg.errors.UniqueViolation) as refused:
        store.append(game_id, 2, [Event(SEAT_TAKEN, {"seat": 1})], seat_token=(1, taken, 3))
    assert refused.value.diag.constraint_name == "seats_game_token_hash_key"

    assert store.load(game_id)[1] == before  # the seat's event went with its row
    assert store.seat_for_token(game_id, taken) == 0


def test_concurrent_appends_are_gapless_and_lose_nothing(store: EventStore) -> None:
    game_id = new_game(store)
    threads, per_thread = 8, 20
    start = threading.Barrier(threads)
    conflicts = [0] * threads

    def writer(w: int) -> None:
        start.wait()
        for i in range(per_thread):
            while True:  # re-read and retry, as the API does
                try:
                    store.append(game_id, store.version(game_id), [Event("w", {"w": w, "i": i})])
                    break
                except VersionConflict:
                    conflicts[w] += 1

    workers = [threading.Thread(target=writer, args=(w,)) for w in range(threads)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()

    records = store.load_records(game_id, limit=1000)
    assert [r.version for r in records] == list(range(1, threads * per_thread + 2))
    written = sorted((r.data["w"], r.data["i"]) for r in records[1:])
    assert written == [(w, i) for w in range(threads) for i in range(per_thread)]
    # Each writer's own events stay in the order it wrote them.
    for w in range(threads):
        assert [r.data["i"] for r in records[1:] if r.data["w"] == w] == list(range(per_thread))


# --- append-only --------------------------------------------------------------------------------


def rows(conn: psycopg.Connection[Any], table: str, game_id: UUID) -> list[tuple[Any, ...]]:
    return conn.execute(
        f"SELECT * FROM {table} WHERE game_id = %s ORDER BY 1, 2", (game_id,)
    ).fetchall()


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE events SET data = '{}' WHERE game_id = %s",
        "UPDATE events SET version = version + 100 WHERE game_id = %s",
        "DELETE FROM events WHERE game_id = %s",
        "TRUNCATE events",
        "UPDATE seats SET seat = 9 WHERE game_id = %s",
        "DELETE FROM seats WHERE game_id = %s",
        "UPDATE game_secrets SET seed = 'x' WHERE game_id = %s",
        "DELETE FROM game_secrets WHERE game_id = %s",
        "TRUNCATE game_secrets",
        "UPDATE games SET game = 'other' WHERE id = %s",
    ],
)
def test_stored_facts_cannot_be_changed(
    store: EventStore, owner_connection: psycopg.Connection[Any], statement: str
) -> None:
    game_id = new_game(store)
    store.append(game_id, 1, [moved(1)], seat_token=(0, token_hash(str(game_id)), 2))
    table = statement.split()[1 if statement.startswith(("UPDATE", "TRUNCATE")) else 2]
    key = "id" if table == "games" else "game_id"
    before = owner_connection.execute(
        f"SELECT * FROM {table} WHERE {key} = %s", (game_id,)
    ).fetchall()
    # A refused TRUNCATE still queues for its lock; never wait long on other tests' writers.
    owner_connection.execute("SET lock_timeout = '5s'")

    params = () if statement.startswith("TRUNCATE") else (game_id,)
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match=f"{table} are append-only"):
        owner_connection.execute(statement, params)

    after = owner_connection.execute(
        f"SELECT * FROM {table} WHERE {key} = %s", (game_id,)
    ).fetchall()
    assert after == before != []


# --- seats --------------------------------------------------------------------------------------


def test_seat_tokens_are_looked_up_by_hash(store: EventStore) -> None:
    game_id = new_game(store)
    alice, bob = token_hash(f"alice-{game_id}"), token_hash(f"bob-{game_id}")
    store.append(
        game_id, 1, [Event(SEAT_TAKEN, {"seat": 0, "name": "alice"})], seat_token=(0, alice, 2)
    )
    store.append(
        game_id, 2, [Event(SEAT_TAKEN, {"seat": 1, "name": "bob"})], seat_token=(1, bob, 3)
    )

    assert store.seat_for_token(game_id, alice) == 0
    assert store.seat_for_token(game_id, bob) == 1
    assert store.seat_for_token(game_id, token_hash("nobody")) is None
    assert store.seat_for_token(uuid.uuid4(), alice) is None
    assert store.seat_tokens(game_id) == [(0, alice, 2), (1, bob, 3)]
    assert store.seat_tokens(uuid.uuid4()) == []
    assert store.token_game(bob) == (game_id, 1)
    assert store.token_game(token_hash("nobody")) is None


def test_taking_a_taken_seat_conflicts(store: EventStore) -> None:
    """Two joins decided on one version race for one seat: the second conflicts (on the seat's
    row, as on the events'). A seat left before the start is taken again at a later version,
    by a new token: a second row for the seat (migration 0010)."""
    game_id = new_game(store)
    store.append(
        game_id, 1, [Event(SEAT_TAKEN, {"seat": 0})], seat_token=(0, token_hash(f"a{game_id}"), 2)
    )
    with pytest.raises(VersionConflict):
        store.append(
            game_id,
            1,
            [Event(SEAT_TAKEN, {"seat": 0})],
            seat_token=(0, token_hash(f"b{game_id}"), 2),
        )
    assert store.version(game_id) == 2
    store.append(
        game_id,
        2,
        [Event(SEAT_LEFT, {"seat": 0}), Event(SEAT_TAKEN, {"seat": 0})],
        seat_token=(0, token_hash(f"c{game_id}"), 4),
    )
    assert [t.taken_at for t in store.seat_tokens(game_id)] == [2, 4]


# --- lobby ----------------------------------------------------------------------------------------


def test_list_games_derives_status_and_filters(store: EventStore) -> None:
    name = f"lobby-{uuid.uuid4()}"
    waiting = new_game(store, name)
    playing = new_game(store, name)
    store.append(playing, 1, [Event(GAME_STARTED, {})])
    over = new_game(store, name)
    store.append(over, 1, [Event(GAME_STARTED, {}), moved(1), Event(GAME_ENDED, {})])
    new_game(store, f"other-{uuid.uuid4()}")

    listed = store.list_games(game=name)
    assert {(g.id, g.status, g.version, g.game) for g in listed} == {
        (waiting, "waiting", 1, name),
        (playing, "playing", 2, name),
        (over, "over", 4, name),
    }
    for status, expected in [("waiting", waiting), ("playing", playing), ("over", over)]:
        assert [g.id for g in store.list_games(game=name, status=status)] == [expected]
    with pytest.raises(ValueError):
        store.list_games(status="paused")


def test_list_games_paginates_by_keyset(store: EventStore) -> None:
    name = f"pages-{uuid.uuid4()}"
    ids = [new_game(store, name) for _ in range(7)]
    everything = store.list_games(game=name, limit=100)
    assert [g.cursor for g in everything] == sorted(g.cursor for g in everything)

    seen: list[UUID] = []
    after: GameCursor | None = None
    while True:
        page = store.list_games(game=name, limit=3, after=after)
        seen += [g.id for g in page]
        if len(page) < 3:
            break
        after = GameCursor.decode(page[-1].cursor.encode())  # as an API client would

    assert seen == [g.id for g in everything]
    assert sorted(seen) == sorted(ids)
    assert len(store.list_games(limit=2)) == 2  # no filter at all
    assert store.list_games(game=name, limit=100, order="oldest") == everything  # the default


def test_list_games_newest_first_paginates_by_keyset(store: EventStore) -> None:
    name = f"newest-{uuid.uuid4()}"
    ids = [new_game(store, name) for _ in range(7)]
    oldest = store.list_games(game=name, limit=100)
    newest = store.list_games(game=name, limit=100, order="newest")
    assert newest == oldest[::-1]
    assert [g.cursor for g in newest] == sorted((g.cursor for g in newest), reverse=True)
    assert newest[0].id == ids[-1] and newest[-1].id == ids[0]  # the last one made comes first

    seen: list[UUID] = []
    after: GameCursor | None = None
    while True:
        page = store.list_games(game=name, limit=3, after=after, order="newest")
        seen += [g.id for g in page]
        if len(page) < 3:
            break
        after = GameCursor.decode(page[-1].cursor.encode())  # as an API client would

    assert seen == [g.id for g in newest]
    assert len(seen) == len(set(seen)) and sorted(seen) == sorted(ids)
    with pytest.raises(ValueError):
        store.list_games(order="desc")


def test_a_cursor_is_a_position_in_either_order(store: EventStore) -> None:
    name = f"either-{uuid.uuid4()}"
    for _ in range(5):
        new_game(store, name)
    games = store.list_games(game=name, limit=100)
    middle = games[2].cursor
    later = store.list_games(game=name, after=middle)
    earlier = store.list_games(game=name, after=middle, order="newest")
    assert later == games[3:]
    assert earlier == games[:2][::-1]


def test_cursor_round_trips_and_rejects_garbage() -> None:
    game_id = uuid.uuid4()
    from datetime import UTC, datetime

    cursor = GameCursor(datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC), game_id)
    assert GameCursor.decode(cursor.encode()) == cursor
    for garbage in ("", "abc", "!!!", GameCursor.encode(cursor)[:-3]):
        with pytest.raises(ValueError):
            GameCursor.decode(garbage)


# --- health -------------------------------------------------------------------------------------


def test_ping(store: EventStore) -> None:
    store.ping()


def test_unreachable_database_is_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CARDROOM_POOL_TIMEOUT", "0.3")
    dead = make_pool("postgresql://postgres@127.0.0.1:1/nothing", max_size=1)
    try:
        with pytest.raises(StoreUnavailable):
            EventStore(dead).ping()
    finally:
        dead.close(timeout=0)


def test_every_append_extends_the_hash_chain(store: EventStore) -> None:
    """Tamper evidence (domain/chain.py): each row's hash links to its predecessor's."""
    game_id = new_game(store)
    store.append(game_id, 1, [moved(1), moved(2)])
    store.append(game_id, 3, [moved(3)])
    EventStore(store.pool).append(game_id, 4, [moved(4)])  # reads the hash it links to
    lines = [
        {
            "game_id": str(game_id),
            "version": r.version,
            "type": r.type,
            "schema_version": r.schema_version,
            "data": r.data,
            "hash": r.hash,
        }
        for r in store.load_records(game_id, limit=100)
    ]
    assert [line["version"] for line in lines] == [1, 2, 3, 4, 5]
    assert first_break(lines) is None
    lines[2]["data"] = {"n": 99}
    assert first_break(lines) == 3
