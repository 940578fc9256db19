"""Idempotency-Key on every POST, over real HTTP against real PostgreSQL: a retry gets the first
response and has no second effect, even when the copies arrive at once; keys are per client and
unguessable; only requests that took effect leave a receipt (written with their events), which
expires and is purged by the service; without the header nothing changes. (Crashes and dropped
connections at every point: tests/test_exactly_once.py.)"""

from __future__ import annotations

import hashlib
import re
import secrets
import threading
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
import requests
from api_client import (
    ApiClient,
    Table,
    expect_problem,
    expect_status,
    serve,
    spec_dict,
    wait_until,
)
from cryptography.exceptions import InvalidTag
from psycopg_pool import ConnectionPool

from domain.sushigo.cards import KINDS
from service.http.app import create_app
from service.http.idempotency import Keyed, parse_key, scope_of
from service.http.problems import Problem
from service.store import db

pytest_plugins = ["api_fixtures"]

HEADER = "Idempotency-Key"
REPLAYED = "Idempotent-Replayed"
CONCURRENT = 8  # below the test pool's 12 connections: every copy waits on its own


def new_key() -> dict[str, str]:
    return {HEADER: str(uuid.uuid4())}


def same(first: requests.Response, again: requests.Response) -> None:
    """``again`` is ``first`` replayed: same status, headers that matter, body byte for byte."""
    assert again.status_code == first.status_code
    assert again.content == first.content
    for name in ("Content-Type", "Location", "Retry-After", "WWW-Authenticate"):
        assert again.headers.get(name) == first.headers.get(name), name


def card_picks(api: ApiClient, game_id: str) -> list[dict[str, Any]]:
    return [e for e in api.events(game_id) if e["type"] == "card_picked"]


@pytest.fixture
def table(api: ApiClient) -> Iterator[Table]:
    """A 2-player game in its first turn."""
    opened = Table.open(api, 2)
    yield opened
    opened.close()


def hand(table: Table, seat: int) -> list[str]:
    return table.players[seat].client.game(table.game_id)["you"]["hand"]


# --- a retry has no second effect ----------------------------------------------------------------


def test_a_retried_pick_returns_the_first_response_and_picks_once(
    api: ApiClient, table: Table
) -> None:
    seat = table.players[0].client
    body, key = {"cards": [hand(table, 0)[0]]}, new_key()
    first = seat.post(f"{table.path}/moves", body, headers=key)
    expect_status(first, 200)
    assert REPLAYED not in first.headers
    again = seat.post(f"{table.path}/moves", body, headers=key)
    same(first, again)
    assert again.headers[REPLAYED] == "true"
    assert len(card_picks(api, table.game_id)) == 1
    # Without the key the same pick is a second attempt, and refused: a pick is final (S4).
    expect_problem(seat.post(f"{table.path}/moves", body), 409, "already_picked")


def test_creating_a_game_is_idempotent(api: ApiClient) -> None:
    body, key = {"game": "sushi-go", "players": 3}, new_key()
    first = api.post("/games", body, headers=key)
    expect_status(first, 201)
    again = api.post("/games", body, headers=key)
    same(first, again)  # the same game: a second one would have another id
    assert again.headers[REPLAYED] == "true"
    assert again.headers["Location"] == f"/games/{first.json()['game_id']}"
    other = api.post("/games", body, headers=new_key())
    assert other.json()["game_id"] != first.json()["game_id"]


def test_joining_is_idempotent_and_the_replay_holds_the_same_token(api: ApiClient) -> None:
    game = api.create_game(3)["game_id"]
    key = new_key()
    first = api.post(f"/games/{game}/players", {"name": "Ada"}, headers=key)
    expect_status(first, 201)
    again = api.post(f"/games/{game}/players", {"name": "Ada"}, headers=key)
    same(first, again)
    granted = again.json()
    assert granted["seat"] == 0 and granted["token"] == first.json()["token"]
    seats = api.game(game)["seats"]
    assert [s["taken"] for s in seats] == [True, False, False]  # one seat, not two
    api.game(game, token=granted["token"])  # 200: the token is a seat's (else 401)


def receipts(conn: psycopg.Connection[Any], *game_ids: str) -> int:
    """The receipts about these games (other tests run meanwhile on the same database)."""
    query = "SELECT count(*) FROM idempotency_keys WHERE game_id::text = ANY(%s)"
    return int(conn.execute(query, (list(game_ids),)).fetchone()[0])


def test_a_refusal_leaves_no_receipt_and_its_retry_runs_again(
    api: ApiClient, table: Table, owner_connection: psycopg.Connection[Any]
) -> None:
    """A refusal changed nothing: nothing is stored, and the retry meets the game as it is."""
    seat = table.players[0].client
    missing = next(card for card in KINDS if card not in hand(table, 0))
    key = new_key()
    body = {"round": 1, "turn": 1, "cards": [missing]}
    first = seat.post(f"{table.path}/moves", body, headers=key, request_valid=None)
    problem = expect_problem(first, 422, "card_not_in_hand")
    assert problem["version"] == api.game(table.game_id)["version"]  # where the game is
    again = seat.post(f"{table.path}/moves", body, headers=key, request_valid=None)
    expect_problem(again, 422, "card_not_in_hand")
    assert REPLAYED not in again.headers
    assert card_picks(api, table.game_id) == []
    assert receipts(owner_connection, table.game_id) == 0


def test_junk_posts_leave_no_rows(
    api: ApiClient, table: Table, owner_connection: psycopg.Connection[Any]
) -> None:
    """Anyone may send these; none may grow the table: 404s, 401s and 400s store nothing."""
    body = {"round": 1, "turn": 1, "cards": ["tempura"]}
    nowhere_ids = [str(uuid.uuid4()) for _ in range(30)]
    for i, nowhere_id in enumerate(nowhere_ids):
        nowhere = api.post(f"/games/{nowhere_id}/moves", body, headers=new_key(), token=f"junk{i}")
        expect_problem(nowhere, 404, "game_not_found")
        unknown = api.post(f"{table.path}/moves", body, headers=new_key(), token=f"junk{i}")
        expect_problem(unknown, 401, "invalid_token")
    bad = api.post("/games", {"game": "chess"}, headers=new_key(), request_valid=False)
    expect_status(bad, 400)
    assert receipts(owner_connection, table.game_id, *nowhere_ids) == 0
    scopes = [scope_of(f"Bearer junk{i}") for i in range(30)]
    junk = "SELECT count(*) FROM idempotency_keys WHERE scope = ANY(%s)"
    assert owner_connection.execute(junk, (scopes,)).fetchone() == (0,)


def test_authentication_comes_before_the_key(api: ApiClient, table: Table) -> None:
    """A reused key without a token is a 401, not a 422: the key is looked at for a client only."""
    seat = table.players[0].client
    key = new_key()
    expect_status(
        seat.post(f"{table.path}/moves", {"cards": [hand(table, 0)[0]]}, headers=key), 200
    )
    anonymous = api.post(
        f"{table.path}/moves", {"cards": ["tempura"]}, headers=key, token=None, request_valid=None
    )
    expect_problem(anonymous, 401, "missing_token")


# --- copies at once ------------------------------------------------------------------------------


def at_once(send: Callable[[], requests.Response], n: int = CONCURRENT) -> list[requests.Response]:
    """``send()`` from ``n`` threads released together; their responses."""
    barrier = threading.Barrier(n)
    responses: list[requests.Response | BaseException] = [RuntimeError("not sent")] * n

    def run(i: int) -> None:
        barrier.wait()
        try:
            responses[i] = send()
        except BaseException as exc:  # reported below, with the others
            responses[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    failed = [r for r in responses if isinstance(r, BaseException)]
    assert not failed, failed
    return responses  # type: ignore[return-value]


def all_the_same(responses: list[requests.Response], status: int) -> None:
    expect_status(responses[0], status)
    for response in responses[1:]:
        same(responses[0], response)
    assert sum(REPLAYED not in r.headers for r in responses) == 1  # one ran, the others replay


def test_the_same_pick_sent_at_once_picks_once(api: ApiClient, table: Table) -> None:
    body, key = {"cards": [hand(table, 1)[0]]}, new_key()
    token = table.players[1].token

    def send() -> requests.Response:
        with api.clone(token=token) as client:
            return client.post(f"{table.path}/moves", body, headers=key)

    all_the_same(at_once(send), 200)
    picks = card_picks(api, table.game_id)
    assert [p["data"]["seat"] for p in picks] == [1]


def test_the_same_join_sent_at_once_takes_one_seat(api: ApiClient) -> None:
    game = api.create_game(4)["game_id"]
    key = new_key()

    def send() -> requests.Response:
        with api.clone() as client:
            return client.post(f"/games/{game}/players", {"name": "Ada"}, headers=key)

    all_the_same(at_once(send), 201)
    assert sum(s["taken"] for s in api.game(game)["seats"]) == 1


def test_the_same_create_sent_at_once_creates_one_game(api: ApiClient) -> None:
    key = new_key()

    def send() -> requests.Response:
        with api.clone() as client:
            return client.post("/games", {"game": "sushi-go", "players": 2}, headers=key)

    # Each run would create a game with a new id: identical bodies mean one run.
    answers = at_once(send)
    all_the_same(answers, 201)
    assert len({answer.json()["game_id"] for answer in answers}) == 1


# --- keys: reuse, scope, format ------------------------------------------------------------------


def test_a_key_reused_for_another_request_is_refused(api: ApiClient, table: Table) -> None:
    seat = table.players[0].client
    cards = hand(table, 0)
    key = new_key()
    expect_status(seat.post(f"{table.path}/moves", {"cards": [cards[0]]}, headers=key), 200)
    other = next(card for card in cards if card != cards[0])  # another request, not a copy
    other_body = seat.post(f"{table.path}/moves", {"cards": [other]}, headers=key)
    problem = expect_problem(other_body, 422, "idempotency_key_reused")
    assert HEADER in problem["detail"] and "new key" in problem["detail"]
    other_path = seat.post("/games", {"game": "sushi-go", "players": 2}, headers=key)
    expect_problem(other_path, 422, "idempotency_key_reused")
    assert REPLAYED not in other_body.headers
    assert len(card_picks(api, table.game_id)) == 1


def test_keys_belong_to_their_client(api: ApiClient, table: Table) -> None:
    key = new_key()
    for player in table.players:  # two tokens, one key: two requests
        response = player.client.post(
            f"{table.path}/moves", {"cards": [hand(table, player.seat)[0]]}, headers=key
        )
        expect_status(response, 200)
        assert REPLAYED not in response.headers
    assert len(card_picks(api, table.game_id)) == 2
    # Without a token, the same key is a third client's.
    created = api.post("/games", {"game": "sushi-go", "players": 2}, headers=key)
    expect_status(created, 201)
    assert REPLAYED not in created.headers


GUESSABLE = [
    "my-bot-join-key-1",
    "pick-1-1",
    "00000000-0000-0000-0000-000000000000",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "0123456789abcdef",  # 64 bits
]


@pytest.mark.parametrize(
    "value",
    ["", "k" * 256, "clé", "a\tb", "a\x7fb", *GUESSABLE],
    ids=["empty", "256", "é", "tab", "del", *(f"guessable{i}" for i in range(len(GUESSABLE)))],
)
def test_a_malformed_key_is_refused(api: ApiClient, table: Table, value: str) -> None:
    version = api.game(table.game_id)["version"]
    pattern = spec_dict()["components"]["parameters"]["IdempotencyKey"]["schema"]["pattern"]
    response = table.players[0].client.post(
        f"{table.path}/moves",
        {"cards": [hand(table, 0)[0]]},
        headers={HEADER: value},
        # The spec checks the form; what is plainly not random only the server can tell.
        request_valid=None if re.fullmatch(pattern, value) else False,
    )
    expect_problem(response, 400, "invalid_idempotency_key")
    assert api.game(table.game_id)["version"] == version


def test_a_guessable_key_cannot_replay_someone_elses_seat_token(api: ApiClient) -> None:
    """A join sent with a made-up key is refused, so no one else can send the same key and body
    to receive its token; with an unguessable key only its sender can."""
    game = api.create_game(2)["game_id"]
    made_up = {HEADER: "my-bot-join-key-1"}
    refused = api.post(
        f"/games/{game}/players", {"name": "Bot"}, headers=made_up, request_valid=False
    )
    expect_problem(refused, 400, "invalid_idempotency_key")
    assert not any(s["taken"] for s in api.game(game)["seats"])


def test_without_the_header_nothing_changes(api: ApiClient, table: Table) -> None:
    body = {"game": "sushi-go", "players": 2}
    one, two = api.post("/games", body), api.post("/games", body)
    assert one.json()["game_id"] != two.json()["game_id"]
    seat = table.players[0].client
    pick = {"cards": [hand(table, 0)[0]]}
    expect_status(seat.post(f"{table.path}/moves", pick), 200)
    refused = seat.post(f"{table.path}/moves", pick)
    expect_problem(refused, 409, "already_picked")
    assert not any(REPLAYED in r.headers for r in (one, two, refused))
    # Other methods ignore the header.
    read = api.get(table.path, headers=new_key())
    expect_status(read, 200)
    assert REPLAYED not in read.headers


# --- what is stored, and how ---------------------------------------------------------------------


def test_keys_expire_and_the_service_purges_them(
    pool: ConnectionPool, owner_connection: psycopg.Connection[Any]
) -> None:
    """With a time to live of 0 s every receipt is expired at once: the next keyed request purges
    it, and a resend with its key runs afresh (here: a second game)."""
    config = {"IDEMPOTENCY_TTL_SECONDS": 0, "IDEMPOTENCY_PURGE_INTERVAL": 0}
    body, key = {"game": "sushi-go", "players": 2}, new_key()
    digest = hashlib.sha256(key[HEADER].encode()).hexdigest()

    def rows() -> int:
        query = "SELECT count(*) FROM idempotency_keys WHERE key = %s"
        return int(owner_connection.execute(query, (digest,)).fetchone()[0])

    with serve(create_app(pool=pool, config=config)) as url, ApiClient(url) as client:
        first = client.post("/games", body, headers=key)
        expect_status(first, 201)
        assert rows() == 1
        expect_status(client.post("/games", body, headers=new_key()), 201)  # purges
        assert rows() == 0
        again = client.post("/games", body, headers=key)
        expect_status(again, 201)
        assert REPLAYED not in again.headers and again.json()["game_id"] != first.json()["game_id"]


def test_keys_are_kept_24_hours_by_default(
    api: ApiClient, owner_connection: psycopg.Connection[Any]
) -> None:
    key = new_key()
    expect_status(api.post("/games", {"game": "sushi-go", "players": 2}, headers=key), 201)
    row = owner_connection.execute(
        "SELECT expires_at - created_at FROM idempotency_keys WHERE key = %s",
        (hashlib.sha256(key[HEADER].encode()).hexdigest(),),
    ).fetchone()
    assert row is not None and row[0].total_seconds() == 24 * 3600


def test_a_503_is_not_stored_and_the_retry_runs(api: ApiClient, database_url: str) -> None:
    """The store's pool is down (never opened) while the lock's pool works: the request fails
    with 503, and the retry with the same key, once the service is back, creates the game."""
    down = ConnectionPool(database_url, open=False)
    body, key = {"game": "sushi-go", "players": 2}, new_key()
    try:
        with serve(create_app(pool=down)) as url, ApiClient(url) as outage:
            failed = outage.post("/games", body, headers=key)
            expect_problem(failed, 503, "database_unavailable")
    finally:
        down.close()
    retried = api.post("/games", body, headers=key)
    expect_status(retried, 201)
    assert REPLAYED not in retried.headers
    assert api.post("/games", body, headers=key).headers[REPLAYED] == "true"


SHORT_WAITS = f"cardroom-test-{secrets.token_hex(4)}"  # the application_name of their sessions


@pytest.fixture
def short_lock_waits(database_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """An app whose sessions wait 0.2 s for a lock (the default is 3 s), named SHORT_WAITS."""
    monkeypatch.setenv("CARDROOM_LOCK_TIMEOUT", "0.2")
    with db.make_pool(database_url, min_size=0, max_size=4) as pool:
        pool.kwargs["application_name"] = SHORT_WAITS  # type: ignore[index]  # none open yet
        with serve(create_app(pool=pool)) as url:
            yield url


def test_a_copy_that_waits_too_long_gets_409(
    api: ApiClient, short_lock_waits: str, owner_connection: psycopg.Connection[Any]
) -> None:
    """Copies meet on the key's unique index (migration 0024): a copy's record waits for the
    first send's transaction, here one held open as a first send stuck before its commit would
    be. Past its lock wait the copy gets 409 idempotency_key_in_use; once the first send rolls
    back, the retry runs (nothing of the first was kept)."""
    game = api.create_game(2)["game_id"]
    key = new_key()
    body = {"game": "sushi-go", "players": 2}
    digest = hashlib.sha256(key[HEADER].encode()).hexdigest()
    with ApiClient(short_lock_waits) as client:
        # "The first copy", uncommitted, then rolled back.
        with owner_connection.transaction(force_rollback=True):
            owner_connection.execute(
                "INSERT INTO idempotency_keys (scope, key, request_hash, game_id, version,"
                " expires_at) VALUES ('anonymous', %s, '', %s, 1, now() + interval '1 hour')",
                (digest, game),
            )
            busy = client.post("/games", body, headers=key)
        expect_problem(busy, 409, "idempotency_key_in_use")
        assert busy.headers["Retry-After"] == "1"
        again = client.post("/games", body, headers=key)
        expect_status(again, 201)
        assert REPLAYED not in again.headers


def test_a_copy_whose_first_send_rolls_back_runs_itself(
    api: ApiClient, database_url: str, owner_connection: psycopg.Connection[Any]
) -> None:
    """The first send's transaction rolls back while a copy waits on the key's index: the
    copy's own insert then goes in, and the copy runs as the one send that took effect."""
    game = api.create_game(2)["game_id"]
    key = new_key()
    digest = hashlib.sha256(key[HEADER].encode()).hexdigest()
    answers: list[requests.Response] = []
    with owner_connection.transaction(force_rollback=True):  # "the first send"
        owner_connection.execute(
            "INSERT INTO idempotency_keys (scope, key, request_hash, game_id, version,"
            " expires_at) VALUES ('anonymous', %s, '', %s, 1, now() + interval '1 hour')",
            (digest, game),
        )
        body = {"game": "sushi-go", "players": 2}
        copy = threading.Thread(
            target=lambda: answers.append(api.clone().post("/games", body, headers=key))
        )
        copy.start()
        waiting = (
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
            " AND query LIKE 'INSERT INTO idempotency_keys%%'"
        )
        # Watched from another session: a transaction sees pg_stat_activity as it first did.
        with psycopg.connect(database_url, autocommit=True) as watcher:
            wait_until(lambda: watcher.execute(waiting).fetchone() != (0,), 5.0)
    copy.join(10)
    created = answers[0]
    expect_status(created, 201)
    assert REPLAYED not in created.headers
    again = api.post("/games", body, headers=key)
    same(created, again)
    assert again.headers[REPLAYED] == "true"


def test_an_expired_key_not_purged_yet_starts_afresh(
    pool: ConnectionPool, owner_connection: psycopg.Connection[Any]
) -> None:
    """A record past its time to live, still in the table (purged once a minute): a resend
    with its key finds the key taken, looks it up, forgets it and runs afresh."""
    config = {"IDEMPOTENCY_TTL_SECONDS": 0, "IDEMPOTENCY_PURGE_INTERVAL": 3600}
    body, key = {"game": "sushi-go", "players": 2}, new_key()
    digest = hashlib.sha256(key[HEADER].encode()).hexdigest()
    rows = "SELECT count(*) FROM idempotency_keys WHERE key = %s"
    with serve(create_app(pool=pool, config=config)) as url, ApiClient(url) as client:
        first = client.post("/games", body, headers=key)
        expect_status(first, 201)
        assert owner_connection.execute(rows, (digest,)).fetchone() == (1,)  # expired, kept
        again = client.post("/games", body, headers=key)
        expect_status(again, 201)
        assert REPLAYED not in again.headers
        assert again.json()["game_id"] != first.json()["game_id"]
        assert owner_connection.execute(rows, (digest,)).fetchone() == (1,)  # the new one's


def test_a_record_that_cannot_be_written_leaves_nothing_held(
    api: ApiClient, short_lock_waits: str, owner_connection: psycopg.Connection[Any]
) -> None:
    """A keyed request whose record waits past its lock timeout for something else (here the
    whole table locked elsewhere, not a copy of it) answers 503, and holds nothing after: no
    lock connection, no session of the app waiting or idle in a transaction; its retry runs."""
    key, body = new_key(), {"game": "sushi-go", "players": 2}
    with ApiClient(short_lock_waits) as client:
        with owner_connection.transaction():
            owner_connection.execute("LOCK TABLE idempotency_keys IN ACCESS EXCLUSIVE MODE")
            refused = client.post("/games", body, headers=key)
        expect_problem(refused, 503, "database_unavailable")
        held = owner_connection.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s"
            " AND (state LIKE 'idle in transaction%%' OR wait_event_type = 'Lock')",
            (SHORT_WAITS,),
        )
        assert held.fetchone() == (0,)
        created = client.post("/games", body, headers=key)
        expect_status(created, 201)
        assert REPLAYED not in created.headers


def test_the_table_holds_neither_keys_nor_tokens_in_clear(
    api: ApiClient, owner_connection: psycopg.Connection[Any]
) -> None:
    game = api.create_game(2)["game_id"]
    key = new_key()
    granted = api.post(f"/games/{game}/players", {"name": "Ada"}, headers=key).json()
    rows = owner_connection.execute(
        "SELECT scope, key, request_hash, game_id, version, secret"
        " FROM idempotency_keys WHERE key = %s",
        (hashlib.sha256(key[HEADER].encode()).hexdigest(),),
    ).fetchall()
    assert len(rows) == 1
    scope, _, _, game_id, version, secret = rows[0]
    assert (scope, str(game_id), version) == ("anonymous", game, api.game(game)["version"])
    row = repr(rows[0]).encode() + bytes(secret)
    assert granted["token"].encode() not in row and key[HEADER].encode() not in row


def test_every_post_in_the_spec_takes_the_key() -> None:
    """Any POST added later is idempotent too (the hooks cover every route): say so in its spec."""
    ref = {"$ref": "#/components/parameters/IdempotencyKey"}
    for path, item in spec_dict()["paths"].items():
        if "post" in item:
            assert ref in item["post"].get("parameters", []), (
                f"POST {path}: add {ref} to its parameters (see service/http/idempotency.py)"
            )


# --- the pieces ---------------------------------------------------------------------------------


def test_keys_must_be_unguessable() -> None:
    assert parse_key(" 8e03978e-40d5-43e8-bc93-6894a57f9324 ") == (
        "8e03978e-40d5-43e8-bc93-6894a57f9324"
    )
    for _ in range(2000):  # what clients are told to send passes, every time
        for good in (str(uuid.uuid4()), secrets.token_urlsafe(16), secrets.token_hex(16)):
            assert parse_key(good) == good
    # Random tokens that happen to have one case only (about 1 in 50,000 of token_urlsafe(16)):
    # still random, still accepted.
    for good in ("QX7-MZ4KD_9TPL2WRB8NVC", "qx7-mz4kd_9tpl2wrb8nvc"):
        assert parse_key(good) == good
    for bad in ("", "   ", "k" * 256, "é", "a\nb", "\x00", '"quoted"', *GUESSABLE):
        with pytest.raises(Problem) as refused:
            parse_key(bad)
        assert refused.value.status == 400 and refused.value.code == "invalid_idempotency_key"


def test_scopes() -> None:
    token_scope = hashlib.sha256(b"abc").hexdigest()
    assert scope_of(None) == "anonymous"
    assert scope_of("Bearer abc") == scope_of("bearer  abc ") == token_scope
    assert scope_of("Basic abc") not in ("anonymous", token_scope)


def test_sealing_round_trips_and_depends_on_key_and_scope() -> None:
    body = b'{"token": "secret"}'
    a = Keyed.of("anonymous", "k1", "POST", "/games", body)
    sealed = a.seal(body)
    assert a.unseal(sealed) == body and body not in sealed
    for other in (
        Keyed.of("anonymous", "k2", "POST", "/games", body),
        Keyed.of("other", "k1", "POST", "/games", body),
    ):
        with pytest.raises(InvalidTag):
            other.unseal(sealed)
    assert a.unseal(a.seal(b"")) == b""


def test_an_idempotency_secret_without_a_key_is_held_to_the_rule(api: ApiClient) -> None:
    """With no Idempotency-Key, an Idempotency-Secret that is not unguessable (here invalid
    UTF-8 bytes, and a made-up word) is refused all the same, on every POST; one that is is
    accepted and changes nothing."""
    secret = "Idempotency-Secret"
    private = api.post("/games", {"game": "sushi-go", "players": 2, "visibility": "private"})
    game, creator = private.json()["game_id"], private.json()["invitation"]["creator_token"]
    posts: list[tuple[str, Any, str | None]] = [
        ("/games", {"game": "sushi-go", "players": 2}, None),
        (f"/games/{game}/players", {"name": "Ann"}, None),
        (f"/games/{game}/invitation", None, creator),
        (f"/games/{game}/audit", {"receipts": []}, None),
    ]
    for value in ("\xff\xfe" + "a" * 30, "my-secret"):
        for path, body, token in posts:
            refused = api.post(
                path, body, token=token, headers={secret: value}, request_valid=False
            )
            problem = expect_problem(refused, 400, "invalid_idempotency_key")
            assert secret in problem["detail"], path
    assert not any(s["taken"] for s in api.game(game)["seats"])
    fine = {secret: secrets.token_urlsafe(16)}
    expect_status(api.post("/games", {"game": "sushi-go", "players": 2}, headers=fine), 201)
