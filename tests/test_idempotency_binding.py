"""A replayed secret goes to its owner only (service/http/idempotency.py, ``client_binding``),
and keys are random: the attack of issue 31, a second client that sends someone's join with
their (guessed or learned) key, gets no token; the first client's retries still get theirs, from
another network too when it sent an ``Idempotency-Secret``."""

from __future__ import annotations

import base64
import operator
import random
import secrets
import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from flask.testing import FlaskClient
from psycopg_pool import ConnectionPool

from service.http.app import create_app
from service.http.idempotency import (
    _BASE64URL_ORDER,
    _EQUAL_RUN,
    _HEX_ORDER,
    Keyed,
    _patterned,
    _sequences,
    random_enough,
)

KEY, SECRET, REPLAYED = "Idempotency-Key", "Idempotency-Secret", "Idempotent-Replayed"
PHONE_WIFI, PHONE_MOBILE, GUESSER = "192.0.2.10", "198.51.100.7", "203.0.113.66"


@pytest.fixture(scope="module")
def app_client(pool: ConnectionPool) -> Iterator[FlaskClient]:
    app = create_app(pool=pool)
    app.config["RATELIMIT_ENABLED"] = False
    yield app.test_client()


def post(client: FlaskClient, path: str, body: Any, address: str, **headers: str) -> Any:
    return client.post(path, json=body, headers=headers, environ_base={"REMOTE_ADDR": address})


def new_game(client: FlaskClient, **body: Any) -> str:
    created = post(client, "/games", {"game": "sushi-go", "players": 2, **body}, PHONE_WIFI)
    assert created.status_code == 201, created.get_json()
    return str(created.get_json()["game_id"])


def refused_without_token(answer: Any) -> None:
    assert answer.status_code == 422, answer.get_json()
    problem = answer.get_json()
    assert problem["code"] == "idempotency_key_reused" and SECRET in problem["detail"]
    assert REPLAYED not in answer.headers and "Cardroom-Receipt" not in answer.headers
    assert set(problem) == {"type", "title", "status", "detail", "instance", "code"}


def test_the_guessed_key_join_gets_no_token(app_client: FlaskClient) -> None:
    """Issue 31: the same join, with the same key, from another client: no seat token."""
    game = new_game(app_client)
    key = str(uuid.uuid4())
    first = post(app_client, f"/games/{game}/players", {"name": "Ann"}, PHONE_WIFI, **{KEY: key})
    assert first.status_code == 201
    token = first.get_json()["token"]
    guessed = post(app_client, f"/games/{game}/players", {"name": "Ann"}, GUESSER, **{KEY: key})
    refused_without_token(guessed)
    own_secret = post(
        app_client,
        f"/games/{game}/players",
        {"name": "Ann"},
        GUESSER,
        **{KEY: key, SECRET: secrets.token_urlsafe(16)},
    )
    refused_without_token(own_secret)
    # Nothing happened for the guesser: one seat taken, still Ann's.
    view = app_client.get(f"/games/{game}").get_json()
    assert [s["taken"] for s in view["seats"]] == [True, False]
    # The first client's own retry still gets its token.
    again = post(app_client, f"/games/{game}/players", {"name": "Ann"}, PHONE_WIFI, **{KEY: key})
    assert again.status_code == 201 and again.headers[REPLAYED] == "true"
    assert again.get_json()["token"] == token


def test_with_its_secret_a_phone_that_changed_networks_gets_its_token(
    app_client: FlaskClient,
) -> None:
    game = new_game(app_client)
    mine = {KEY: str(uuid.uuid4()), SECRET: str(uuid.uuid4())}
    first = post(app_client, f"/games/{game}/players", {"name": "Bo"}, PHONE_WIFI, **mine)
    assert first.status_code == 201
    moved = post(app_client, f"/games/{game}/players", {"name": "Bo"}, PHONE_MOBILE, **mine)
    assert moved.status_code == 201 and moved.headers[REPLAYED] == "true"
    assert moved.get_json()["token"] == first.get_json()["token"]
    # The same address without the secret is another client: the secret binds, not the address.
    no_secret = {KEY: mine[KEY]}
    refused_without_token(
        post(app_client, f"/games/{game}/players", {"name": "Bo"}, PHONE_WIFI, **no_secret)
    )


def test_a_private_games_invitation_and_creator_token_replay_to_their_owner_only(
    app_client: FlaskClient,
) -> None:
    body = {"game": "sushi-go", "players": 2, "visibility": "private"}
    mine = {KEY: str(uuid.uuid4()), SECRET: secrets.token_hex(16)}
    first = post(app_client, "/games", body, PHONE_WIFI, **mine)
    assert first.status_code == 201
    invitation = first.get_json()["invitation"]
    refused_without_token(post(app_client, "/games", body, GUESSER, **{KEY: mine[KEY]}))
    again = post(app_client, "/games", body, PHONE_MOBILE, **mine)
    assert again.status_code == 201 and again.get_json()["invitation"] == invitation


def test_a_public_create_holds_no_secret_and_replays_to_any_retry(
    app_client: FlaskClient,
) -> None:
    body = {"game": "sushi-go", "players": 2}
    key = {KEY: str(uuid.uuid4())}
    first = post(app_client, "/games", body, PHONE_WIFI, **key)
    again = post(app_client, "/games", body, PHONE_MOBILE, **key)
    assert again.headers[REPLAYED] == "true"
    assert again.get_json()["game_id"] == first.get_json()["game_id"]


def test_a_secret_stored_before_bindings_is_replayed_to_no_anonymous_client(
    app_client: FlaskClient, owner_connection: psycopg.Connection[Any]
) -> None:
    """Rows written before migration 0014 (binding NULL): anonymous clients cannot be told
    apart, so a secret there is not replayed (such rows expire within a day)."""
    game = new_game(app_client)
    key = str(uuid.uuid4())
    first = post(app_client, f"/games/{game}/players", {"name": "Cy"}, PHONE_WIFI, **{KEY: key})
    assert first.status_code == 201
    owner_connection.execute(
        "UPDATE idempotency_keys SET binding = NULL WHERE game_id = %s", (game,)
    )
    again = post(app_client, f"/games/{game}/players", {"name": "Cy"}, PHONE_WIFI, **{KEY: key})
    refused_without_token(again)


def test_the_binding_is_stored_only_as_an_hmac_under_the_key(
    app_client: FlaskClient, owner_connection: psycopg.Connection[Any]
) -> None:
    game = new_game(app_client)
    mine = {KEY: str(uuid.uuid4()), SECRET: str(uuid.uuid4())}
    post(app_client, f"/games/{game}/players", {"name": "Di"}, PHONE_WIFI, **mine)
    (binding,) = owner_connection.execute(
        "SELECT binding FROM idempotency_keys WHERE game_id = %s AND secret IS NOT NULL",
        (game,),
    ).fetchone()
    assert len(bytes(binding)) == 32
    assert mine[SECRET].encode() not in bytes(binding)
    expected = Keyed.of("anonymous", mine[KEY], "POST", "/", b"", "secret\0" + mine[SECRET])
    assert bytes(binding) == expected.binding


# --- keys that are not random ------------------------------------------------------------------

NOT_RANDOM = [
    "00000000-0000-4000-8000-000000000001",  # a counter shaped as a UUID v4
    "00000000-0000-4000-8000-000000000042",
    "12345678-1234-4234-8234-123456789abc",  # sequential digits
    "a8098c1a-f86e-11da-bd1a-00112444be1e",  # a time-based UUID v1
    "3f2c1d7e-ea29-11f1-a419-02fc00000001",  # another v1, as uuid.uuid1() makes them
    "6ba7b810-9dad-51d1-80b4-00c04fd430c8",  # a name-based UUID v5
    "7613a2ad-dfe0-4dcc-8000-000000000000",  # v4 with a long run at the end
    "abcdabcd-abcd-4bcd-abcd-abcdabcdabcd",  # a block repeated
    "0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f",  # hex, repeated
    "fedcba9876543210fedcba9876543210",  # hex, descending
    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAb1",  # base64url, a run
    "abcdefghijklmnopqrstuvwxyz012345",  # base64url, consecutive
]


@pytest.mark.parametrize("key", NOT_RANDOM)
def test_keys_without_entropy_are_refused_saying_how_to_make_one(
    app_client: FlaskClient, key: str
) -> None:
    assert not random_enough(key)
    game = new_game(app_client)
    answer = post(app_client, f"/games/{game}/players", {"name": "Eve"}, GUESSER, **{KEY: key})
    assert answer.status_code == 400
    problem = answer.get_json()
    assert problem["code"] == "invalid_idempotency_key"
    assert "uuid.uuid4()" in problem["detail"] and "crypto.randomUUID()" in problem["detail"]
    view = app_client.get(f"/games/{game}").get_json()
    assert not any(s["taken"] for s in view["seats"])


def test_a_secret_without_entropy_is_refused_too(app_client: FlaskClient) -> None:
    game = new_game(app_client)
    headers = {KEY: str(uuid.uuid4()), SECRET: "my-secret"}
    answer = post(app_client, f"/games/{game}/players", {"name": "Fay"}, GUESSER, **headers)
    assert answer.status_code == 400 and SECRET in answer.get_json()["detail"]


def test_random_keys_pass() -> None:
    """Keys made as clients make them (uuid4, token_urlsafe, token_hex) from 16 random bytes,
    drawn from a seeded generator. Why seeded: a random value is refused about once in 10^8
    (random_enough's docstring), so 60,000 draws from os.urandom failed about one CI run in
    2,000 (one did, on 51987654-3210-460b-…); a fixed draw tests the same forms every run."""
    rng = random.Random(36)
    for _ in range(20000):
        raw = rng.randbytes(16)
        forms = (
            str(uuid.UUID(bytes=raw, version=4)),
            base64.urlsafe_b64encode(raw).rstrip(b"=").decode(),  # secrets.token_urlsafe(16)
            raw.hex(),  # secrets.token_hex(16)
        )
        for key in forms:
            assert random_enough(key), key


def test_the_repeat_check_counts_as_the_plain_loop_does() -> None:
    """``_patterned`` counts repeats on integers (a keyed request's cost): the same verdict as
    comparing each character with the one a period on, for random and repeating texts of every
    length, in both orders, ASCII or not."""

    def plain(text: str, order: str) -> bool:
        if _EQUAL_RUN.search(text) or any(run in text for run in _sequences(order)):
            return True
        return any(sum(map(operator.eq, text, text[p:])) * 2 > len(text) - p for p in range(2, 9))

    rng = random.Random(40)
    alphabets = (_HEX_ORDER, _BASE64URL_ORDER, "ab", "abc", "aé1")
    for _ in range(20000):
        alphabet, length = rng.choice(alphabets), rng.randint(0, 40)
        block = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 9)))
        repeating = "".join(c if rng.random() > 0.1 else rng.choice(alphabet) for c in block * 45)
        for text in (repeating[:length], "".join(rng.choice(alphabet) for _ in range(length))):
            for order in (_HEX_ORDER, _BASE64URL_ORDER):
                assert _patterned(text, order) == plain(text, order), (text, order)
