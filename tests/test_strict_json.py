"""Strict JSON (service/http/strict_json.py), over real HTTP: duplicate keys are refused naming
the key; a lone surrogate in any string field of any request body of the contract is a 400
naming the field, never a 500 (a property test over every string field ``openapi.yaml``
declares); a header that is not text never gives a 500 either."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import requests
import yaml
from api_client import ApiClient, LiveServer, expect_problem
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from patience import ANSWER

from service.http import strict_json
from service.http.problems import Problem

pytest_plugins = ["api_fixtures"]

JSON = {"Content-Type": "application/json"}
SPEC_FILE = "openapi.yaml"


@cache
def spec() -> dict[str, Any]:
    return yaml.safe_load((Path(__file__).parent.parent / SPEC_FILE).read_text())


def resolve(node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        target: Any = spec()
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        node = target
    return node


def string_paths(node: dict[str, Any], path: tuple[str, ...] = (), depth: int = 0) -> set:
    """Every path (object members, ``0`` for an array's items) to a string the schema allows."""
    node = resolve(node)
    found: set[tuple[str, ...]] = set()
    if depth > 8:
        return found
    kinds = node.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    anything = not set(node) - {"description", "title"}  # {}: any JSON, a string too
    if anything or "string" in kinds or any(isinstance(v, str) for v in node.get("enum", [])):
        found.add(path)
    for union in ("oneOf", "anyOf", "allOf"):
        for branch in node.get(union, []):
            found |= string_paths(branch, path, depth + 1)
    for name, member in node.get("properties", {}).items():
        found |= string_paths(member, (*path, name), depth + 1)
    if isinstance(node.get("items"), dict):
        found |= string_paths(node["items"], (*path, "0"), depth + 1)
    return found


def body_operations() -> list[tuple[str, str, tuple[str, ...]]]:
    """(method, path template, field path) for every string field of every JSON request body."""
    cases = []
    for template, operations in spec()["paths"].items():
        for method, operation in operations.items():
            body = operation.get("requestBody") if isinstance(operation, dict) else None
            if body is None:
                continue
            schema = body["content"]["application/json"]["schema"]
            for field in sorted(string_paths(schema)):
                cases.append((method.upper(), template, field))
    return cases


CASES = body_operations()


def test_the_contract_has_string_fields_in_every_body() -> None:
    """The property below covers what it should: every body, and the field that gave a 500."""
    operations = {t for _, t, _ in CASES}
    assert operations == {
        "/games",
        "/games/{game_id}/players",
        "/games/{game_id}/moves",
        "/games/{game_id}/audit",
        "/accounts",  # issue 35
        "/accounts/me/tokens",
        "/accounts/{account_id}/challenges",
        "/games/quick",
        "/games/{game_id}/webhooks",  # issue 36
        "/games/{game_id}/webhooks/{webhook_id}",
        "/accounts/me/webhooks",
        "/accounts/me/webhooks/{webhook_id}",
    }
    assert ("POST", "/games/{game_id}/players", ("invitation",)) in CASES
    assert ("POST", "/games", ("bots", "0", "name")) in CASES
    assert ("POST", "/games/{game_id}/audit", ("receipts", "0")) in CASES
    assert len(CASES) >= 13, CASES


def place(path: tuple[str, ...], value: Any) -> Any:
    """A body with ``value`` at ``path`` (``"0"`` is an array's first item)."""
    for part in reversed(path):
        value = [value] if part == "0" else {part: value}
    return value


@pytest.fixture(scope="module")
def client(live_server: LiveServer) -> Iterator[ApiClient]:
    with ApiClient(live_server.url) as api:
        yield api


@pytest.fixture(scope="module")
def accounts(client: ApiClient) -> tuple[str, str]:
    """An account's token, and another account's id (to challenge)."""
    made = [
        client.post("/accounts", {"name": f"strict{uuid.uuid4().hex[:10]}"}, token=None).json()
        for _ in range(2)
    ]
    return made[0]["token"], made[1]["account_id"]


@pytest.fixture(scope="module")
def seated(client: ApiClient) -> tuple[str, str]:
    """A started 2-player game and seat 0's token: a move's body is read after its token."""
    game = client.create_game(2)["game_id"]
    token = client.join(game, "Ana")["token"]
    client.join(game, "Ben")
    return game, token


def surrogates() -> st.SearchStrategy[str]:
    lone = st.sampled_from(["\ud800", "\udbff", "\udc00", "\udfff", "\ud83c"])
    text = st.text(alphabet=st.characters(codec="utf-8"), max_size=5)
    return st.tuples(text, lone, text).map("".join)


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(case=st.sampled_from(CASES), text=surrogates(), keyed=st.booleans())
def test_a_lone_surrogate_in_any_string_field_is_a_400_naming_it(
    client: ApiClient,
    seated: tuple[str, str],
    accounts: tuple[str, str],
    case: Any,
    text: str,
    keyed: bool,
) -> None:
    method, template, field = case
    game, token = seated
    account_token, other = accounts
    raw = json.dumps(place(field, text))  # ensure_ascii: the surrogate as a \u escape
    headers = {**JSON, **({"Idempotency-Key": str(uuid.uuid4())} if keyed else {})}
    if template.endswith("/moves") or template.startswith("/games/{game_id}/webhooks"):
        headers["Authorization"] = f"Bearer {token}"  # the body is read after the token
    elif template.startswith("/accounts/"):  # the account's own routes: read after its token
        headers["Authorization"] = f"Bearer {account_token}"
    url = client.base_url + template.format(game_id=game, account_id=other, webhook_id=uuid.uuid4())
    response = requests.request(method, url, data=raw, headers=headers)
    problem = expect_problem(response, 400, "invalid_request")
    errors: Any = problem["errors"]
    for part in field:  # the errors name the field, nested as marshmallow nests them
        errors = errors[part]
    assert errors == ["not valid Unicode text (a lone surrogate)"]


def test_the_invitation_that_gave_500_is_a_400(client: ApiClient) -> None:
    created = client.post("/games", {"game": "sushi-go", "players": 2, "visibility": "private"})
    game = created.json()["game_id"]
    response = client.post(
        f"/games/{game}/players",
        data=b'{"name": "Eve", "invitation": "\\ud800"}',
        headers=JSON,
        request_valid=None,
    )
    assert "invitation" in expect_problem(response, 400, "invalid_request")["errors"]
    assert not any(seat["taken"] for seat in client.game(game)["seats"])


@pytest.mark.parametrize(
    ("path", "raw", "key"),
    [
        ("/games", '{"game": "sushi-go", "players": 2, "players": 5}', "players"),
        ("/games", '{"game": "sushi-go", "players": 3, "rules": {"edition": "zoch",'
         ' "edition": "gamewright"}}', "edition"),
        ("/games/{game}/players", '{"name": "Ann", "name": "Bob"}', "name"),
        ("/games/{game}/audit", '{"receipts": [], "receipts": []}', "receipts"),
    ],
)  # fmt: skip
def test_duplicate_keys_are_refused_naming_the_key(
    client: ApiClient, path: str, raw: str, key: str
) -> None:
    game = client.create_game(2)["game_id"]
    before = client.get("/games", params={"limit": 1, "order": "newest"}).json()
    response = client.post(
        path.format(game=game), data=raw.encode(), headers=JSON, request_valid=None
    )
    problem = expect_problem(response, 400, "malformed_json")
    assert f'"{key}"' in problem["detail"] and problem["errors"] == {"duplicate_key": key}
    assert client.game(game)["version"] == 1  # nothing joined
    # Nothing created: the run's other tests share this database and may create games
    # meanwhile, but none as the duplicate's last value (5 players) would have.
    after = client.get("/games", params={"limit": 50, "order": "newest"}).json()["games"]
    ids = [row["game_id"] for row in after]
    newer = after[: ids.index(before["games"][0]["game_id"])]
    assert not [row for row in newer if len(row["seats"]) == 5], newer


def test_a_duplicate_key_in_a_move_is_refused(client: ApiClient, seated: tuple[str, str]) -> None:
    game, token = seated
    view = client.game(game, token=token)
    card = view["you"]["hand"][0]
    raw = json.dumps({"round": view["round"], "turn": view["turn"], "cards": [card]})
    raw = raw[:-1] + ', "turn": 99}'
    response = client.post(
        f"/games/{game}/moves", data=raw.encode(), headers=JSON, token=token, request_valid=None
    )
    assert expect_problem(response, 400, "malformed_json")["errors"] == {"duplicate_key": "turn"}
    assert client.game(game, token=token)["you"]["pick"] is None


# Bytes that are not UTF-8 text in every header the contract names, and in those it does not.
NOT_TEXT = [b"\xed\xa0\x80", b"\xff\xfe", b"ok\xc3"]
HEADERS = ["Authorization", "Idempotency-Key", "If-None-Match", "Last-Event-ID", "X-Request-ID"]


@pytest.mark.parametrize("raw", NOT_TEXT, ids=["surrogate", "ff-fe", "truncated"])
@pytest.mark.parametrize("header", HEADERS)
def test_a_header_that_is_not_text_is_never_a_500(
    client: ApiClient, seated: tuple[str, str], header: str, raw: bytes
) -> None:
    game, _ = seated
    for method, path, body in [
        ("POST", "/games", b'{"game": "sushi-go", "players": 2}'),
        ("POST", f"/games/{game}/players", b'{"name": "Zed"}'),
        ("POST", f"/games/{game}/moves", b'{"cards": ["tempura"]}'),
        ("GET", f"/games/{game}", None),
        ("GET", f"/games/{game}/events", None),
        ("GET", f"/games/{game}/export", None),
    ]:
        response = requests.request(
            method, client.base_url + path, data=body, headers={**JSON, header: raw}, timeout=ANSWER
        )
        assert response.status_code < 500, (method, path, response.text)
        if response.status_code >= 400:
            assert response.headers["Content-Type"] == "application/problem+json"


def test_the_parser_alone() -> None:
    assert strict_json.loads('{"a": 2.0, "b": [1e0, 2.5, -0.0]}') == {"a": 2, "b": [1, 2.5, 0]}
    assert strict_json.loads(b'{"s": "\\ud83c\\udf63"}') == {"s": "\U0001f363"}  # a pair: text
    for raw in ('{"a": {"b": 1, "b": 1}}', '[{"x": 1}, {"y": 1, "y": 2}]'):
        with pytest.raises(Problem) as refused:
            strict_json.loads(raw)
        assert refused.value.code == "malformed_json"
    with pytest.raises(Problem) as refused:
        strict_json.loads('{"k": ["ok", {"\\udc00": 1}]}')
    message = ["not valid Unicode text (a lone surrogate)"]
    assert refused.value.extra["errors"] == {"k": {"1": {"\\udc00": message}}}
