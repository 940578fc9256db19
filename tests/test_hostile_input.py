"""Hostile input over real HTTP: absurd numbers and strings in every body field and query
parameter, JSON the spec cannot even express (NaN, Infinity, 1e400, lone surrogates), invalid
UTF-8, ids that try to leave /games, other games' and finished games' tokens, odd Authorization
headers. Whatever comes in, the answer is a documented 4xx problem, never a 500.

What tests/test_api_games.py already provokes (the plain 400/401/403/404/405/409/413/415 cases)
is not repeated here.
"""

from __future__ import annotations

import json
import random
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from api_client import ApiClient, LiveServer, Table, expect_problem, expect_status, play_to_end

pytest_plugins = ["api_fixtures"]

JSON = {"Content-Type": "application/json"}


@pytest.fixture(scope="module")
def hostile_api(live_server: LiveServer) -> Iterator[ApiClient]:
    with ApiClient(live_server.url) as client:
        yield client


@pytest.fixture(scope="module")
def table(hostile_api: ApiClient) -> Iterator[Table]:
    """A 3-player zoch game in its first turn; tests must not pick."""
    opened = Table.open(hostile_api, 3, edition="zoch")
    yield opened
    opened.close()


@pytest.fixture(scope="module")
def sequence_game(hostile_api: ApiClient) -> Iterator[tuple[str, str]]:
    """A started 2-player Sequence game: (its id, seat 0's token)."""
    game = hostile_api.create_game(2, game="sequence")
    token = hostile_api.join(game["game_id"], "Seq A")["token"]
    hostile_api.join(game["game_id"], "Seq B")
    yield game["game_id"], token


@pytest.fixture(scope="module")
def over(hostile_api: ApiClient) -> Iterator[Table]:
    opened = Table.open(hostile_api, 2)
    play_to_end(opened, random.Random(7))
    yield opened
    opened.close()


def _post_raw(api: ApiClient, path: str, raw: str | bytes, token: str | None = None, valid=False):
    data = raw.encode() if isinstance(raw, str) else raw
    return api.post(path, data=data, headers=JSON, token=token, request_valid=valid)


# --- absurd numbers ------------------------------------------------------------------------------

# JSON literals, sent as raw text (in place of @): Python's json (and so Flask) reads NaN and
# Infinity, and turns 1e400 into inf; none of them is an integer in range. (2.0 and -0.0 are
# integers, read as 2 and 0: test_integers_written_with_a_fraction_are_integers.)
ABSURD_NUMBERS = [
    "NaN",
    "Infinity",
    "-Infinity",
    "1e308",
    "-1e308",
    "1e400",
    "1e-320",
    "2.5",
    str(2**63),
    str(-(2**63) - 1),
    "9" * 4000,  # within Python's int-parsing limit
    "-7.0",
]


def _spec_refuses(number: str) -> bool | None:
    """JSON Schema counts 2.0 (and 1e308) as integers; the server wants integers written so."""
    value = float(number)
    return None if value.is_integer() and not number.lstrip("-").isdigit() else False


CREATE_NUMBER_FIELDS = [
    ('{"game": "sushi-go", "players": @}', "players"),
    ('{"game": "sushi-go", "players": 2, "turn_seconds": @}', "turn_seconds"),
    ('{"game": "sushi-go", "players": 2, "bots": [{"seat": @, "kind": "greedy"}]}', "bots"),
    ('{"game": "sequence", "players": 2, "rules": {"teams": @}}', "teams"),
]


@pytest.mark.parametrize("number", ABSURD_NUMBERS)
def test_absurd_numbers_in_create_bodies(hostile_api: ApiClient, number: str) -> None:
    for template, field in CREATE_NUMBER_FIELDS:
        response = _post_raw(
            hostile_api, "/games", template.replace("@", number), valid=_spec_refuses(number)
        )
        problem = expect_problem(response, 400, "invalid_request")
        assert field in json.dumps(problem["errors"]), problem


def test_integers_written_with_a_fraction_are_integers(hostile_api: ApiClient) -> None:
    """JSON Schema's ``integer`` is any number whose fraction is zero (the contract allows 2.0):
    the service reads such numbers as the integers they are, in every body."""
    raw = (
        '{"game": "sushi-go", "players": 2.0, "turn_seconds": 3e2,'
        ' "bots": [{"seat": 1.0, "kind": "greedy"}]}'
    )
    response = _post_raw(hostile_api, "/games", raw, valid=True)
    expect_status(response, 201)
    assert response.json()["rules"]["players"] == 2 and response.json()["turn_seconds"] == 300
    raw = '{"game": "sequence", "players": 2E0, "rules": {"teams": 20e-1}}'
    response = _post_raw(hostile_api, "/games", raw, valid=True)
    expect_status(response, 201)
    assert response.json()["rules"]["players"] == 2 and response.json()["rules"]["teams"] == 2
    game = hostile_api.create_game(2)
    seats = [hostile_api.join(game["game_id"], name)["token"] for name in ("Ina", "Ole")]
    hand = hostile_api.game(game["game_id"], token=seats[0])["you"]["hand"]
    raw = json.dumps({"cards": hand[:1]})[:-1] + ', "round": 1.0, "turn": 1e0}'
    picked = _post_raw(hostile_api, f"/games/{game['game_id']}/moves", raw, seats[0], True)
    expect_status(picked, 200)
    assert hostile_api.game(game["game_id"], token=seats[0])["you"]["pick"]["cards"] == hand[:1]


def test_an_integer_too_long_to_parse_is_malformed_json(hostile_api: ApiClient) -> None:
    # Python refuses to parse integers of more than 4300 digits (a CPU-exhaustion guard).
    raw = '{"game": "sushi-go", "players": @}'.replace("@", "9" * 5000)
    expect_problem(_post_raw(hostile_api, "/games", raw), 400, "malformed_json")


@pytest.mark.parametrize("number", ABSURD_NUMBERS)
def test_absurd_numbers_in_moves(
    hostile_api: ApiClient, table: Table, sequence_game: tuple[str, str], number: str
) -> None:
    version = hostile_api.game(table.game_id)["version"]
    token = table.players[0].token
    valid = _spec_refuses(number)
    for template, field in [
        ('{"cards": ["tempura"], "seat": @}', "seat"),
        ('{"cards": ["tempura"], "use_wasabi": [@]}', "use_wasabi"),
    ]:
        response = _post_raw(
            hostile_api, f"{table.path}/moves", template.replace("@", number), token, valid
        )
        problem = expect_problem(response, 400, "invalid_request")
        assert field in problem["errors"], problem
    assert hostile_api.game(table.game_id)["version"] == version
    game_id, seq_token = sequence_game
    for template in ('{"card": "7H", "cell": [@, 1]}', '{"card": "7H", "cell": [1, @]}'):
        response = _post_raw(
            hostile_api, f"/games/{game_id}/moves", template.replace("@", number), seq_token, valid
        )
        problem = expect_problem(response, 400, "invalid_request")
        assert "cell" in problem["errors"], problem
    response = _post_raw(
        hostile_api, f"/games/{game_id}/moves", '{"pass": @}'.replace("@", number), seq_token
    )
    expect_problem(response, 400, "invalid_request")


QUERY_NUMBERS = ["nan", "inf", "-inf", "1e308", "-1", str(2**63), "9" * 500, "0x10", "1.5"]


@pytest.mark.parametrize("value", QUERY_NUMBERS)
def test_absurd_numbers_in_query_parameters(
    hostile_api: ApiClient, table: Table, value: str
) -> None:
    cases: list[tuple[str, dict[str, str], str]] = [
        ("/games", {"limit": value}, "limit"),
        (f"{table.path}/events", {"after": value}, "after"),
        (f"{table.path}/events", {"limit": value}, "limit"),
        (f"{table.path}/state", {"version": value}, "version"),
        (table.path, {"wait_after": value}, "wait_after"),
    ]
    if value not in ("1.5",):  # a fraction of a second is a fine wait
        cases.append((table.path, {"wait_after": "0", "wait_seconds": value}, "wait_seconds"))
    for path, params, field in cases:
        # openapi-core reads " 1" as 1 and "nan"/"inf" as numbers: the spec cannot refuse all.
        response = hostile_api.get(path, params=params, request_valid=None)
        problem = expect_problem(response, 400, "invalid_request")
        assert field in problem["errors"], (path, params, problem)


def test_absurd_stream_positions(hostile_api: ApiClient, table: Table) -> None:
    for value in ("nan", "1e308", "-1", "9" * 400):
        response = hostile_api.get(
            f"{table.path}/stream", params={"after": value}, request_valid=None
        )
        expect_problem(response, 400, "invalid_request")
        response = hostile_api.get(
            f"{table.path}/stream", headers={"Last-Event-ID": value}, request_valid=None
        )
        expect_problem(response, 400, "invalid_request")


# --- absurd strings ------------------------------------------------------------------------------

# Refused wherever the service keeps or filters by text: PostgreSQL cannot store NUL in text,
# UTF-8 has no lone surrogates, and control characters would reach terminals (cardroom replay).
BAD_TEXT = [
    pytest.param("a\u0000b", True, id="nul"),
    pytest.param("\u0007bell", True, id="bel"),
    pytest.param("\u001b[31mred\u001b[0m", True, id="ansi-escape"),
    pytest.param("new\nline", True, id="newline"),
    pytest.param("tab\there", True, id="tab"),
    pytest.param("del\u007f", True, id="del"),
    pytest.param("c1\u009b", True, id="c1-csi"),
    pytest.param("\ud800", None, id="lone-surrogate"),  # JSON Schema cannot tell
    pytest.param("x\udfffy", None, id="lone-low-surrogate"),
]


def _body_with(text: str, where: str) -> str:
    quoted = json.dumps(text)  # ensure_ascii: lone surrogates and NUL as \u escapes
    template = {
        "join": '{"name": @}',
        "game": '{"game": @, "players": 2}',
        "bot": '{"game": "sushi-go", "players": 2,'
        ' "bots": [{"seat": 1, "kind": "greedy", "name": @}]}',
    }[where]
    return template.replace("@", quoted)


@pytest.mark.parametrize(("text", "valid"), BAD_TEXT)
def test_control_characters_and_surrogates_are_refused(
    hostile_api: ApiClient, text: str, valid: bool | None
) -> None:
    game = hostile_api.create_game(2)
    request_valid = None if valid is None else False
    # A seat's name (a person's or a bot's) is the name rule's (422 saying why, test_names.py);
    # the game's kind is the schema's (400); a lone surrogate is no text at all, in any field
    # (400 naming the field, service/http/strict_json.py).
    response = _post_raw(
        hostile_api, f"/games/{game['game_id']}/players", _body_with(text, "join"), valid=None
    )
    response_bot = _post_raw(hostile_api, "/games", _body_with(text, "bot"), valid=None)
    if valid is None:
        assert "name" in expect_problem(response, 400, "invalid_request")["errors"]
        errors = expect_problem(response_bot, 400, "invalid_request")["errors"]
        assert errors == {"bots": {"0": {"name": ["not valid Unicode text (a lone surrogate)"]}}}
    else:
        assert expect_problem(response, 422, "invalid_name")["errors"]["reason"] == "control"
        expect_problem(response_bot, 422, "invalid_name")
    response = _post_raw(hostile_api, "/games", _body_with(text, "game"), valid=request_valid)
    assert "game" in expect_problem(response, 400, "invalid_request")["errors"]
    if valid is not None:  # requests cannot encode a lone surrogate in a URL
        response = hostile_api.get("/games", params={"game": text}, request_valid=False)
        assert "game" in expect_problem(response, 400, "invalid_request")["errors"]
    assert hostile_api.game(game["game_id"])["version"] == 1  # nothing was recorded


@pytest.mark.parametrize(
    "name",
    [
        "🍣" * 32,  # 32 characters, 128 bytes in UTF-8
        "👩‍👩‍👧‍👦",  # zero-width joiners between emoji make one emoji: allowed (domain/names.py)
        # right-to-left text beside left-to-right digits (an override is refused; Arabic beside
        # Latin letters is refused as mixed scripts, UTS #39: tests/test_names.py)
        "مرحبا 2026 :)",
        "Zoë Ångström",
        "' OR 1=1; --",
        "<script>alert(1)</script>",
        "../../etc/passwd",
        "%00%n@",
    ],
)
def test_odd_but_printable_names_round_trip(hostile_api: ApiClient, name: str) -> None:
    game = hostile_api.create_game(2)
    granted = hostile_api.join(game["game_id"], name)
    assert granted["name"] == name
    view = hostile_api.game(game["game_id"])
    assert view["seats"][0]["name"] == name
    events = hostile_api.events(game["game_id"])
    assert events[-1]["data"]["name"] == name


def test_thirty_three_emoji_are_too_long(hostile_api: ApiClient) -> None:
    game = hostile_api.create_game(2)
    response = hostile_api.post(f"/games/{game['game_id']}/players", {"name": "🍣" * 33})
    assert expect_problem(response, 422, "invalid_name")["errors"] == {"reason": "too_long"}


def test_very_long_strings(hostile_api: ApiClient, table: Table) -> None:
    long = "é" * 2000  # 12 KB as JSON \u escapes: under the body limit, far over every field's
    token = table.players[0].token
    for path, body, field, tok in [
        ("/games", {"game": long, "players": 2}, "game", None),
        (f"{table.path}/players", {"name": long}, "name", None),
        (f"{table.path}/moves", {"cards": ["tempura"], "dummy_card": long}, "dummy_card", token),
    ]:
        response = hostile_api.post(path, body, token=tok, request_valid=False)
        assert field in expect_problem(response, 400, "invalid_request")["errors"]
    for path, params in [
        ("/games", {"game": long}),
        ("/games", {"after": long}),
        ("/games", {"status": long}),
    ]:
        expect_problem(
            hostile_api.get(path, params=params, request_valid=False), 400, "invalid_request"
        )


@pytest.mark.parametrize(
    "raw",
    [
        b'{"name": "\xc3\x28"}',
        b'{"name": "\xed\xa0\x80"}',
        b'{"name": "ok"}\xff',
        b"\xef\xbb\xbf{}",
    ],
    ids=["bad-continuation", "encoded-surrogate", "trailing-garbage", "utf8-bom"],
)
def test_invalid_utf8_in_bodies(hostile_api: ApiClient, table: Table, raw: bytes) -> None:
    game = hostile_api.create_game(2)
    response = _post_raw(hostile_api, f"/games/{game['game_id']}/players", raw, valid=None)
    # A surrogate decoded from its (invalid) UTF-8 bytes reaches the name rule: 422.
    assert (response.status_code, response.json()["code"]) in (
        (400, "malformed_json"),
        (400, "invalid_request"),
        (422, "invalid_name"),
    ), response.text


def test_invalid_utf8_in_query_parameters(hostile_api: ApiClient) -> None:
    # Percent-decoded bytes that are not UTF-8 are not text: refused, as every filter refuses
    # what it cannot hold (issue 39, item 12).
    response = hostile_api.get("/games?game=%ff%fe%00", request_valid=None)
    expect_problem(response, 400, "invalid_request")
    response = hostile_api.get("/games?game=%ff%fe", request_valid=None)
    assert "game" in expect_problem(response, 400, "invalid_request")["errors"]


# --- unknown fields ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"game": "sushi-go", "players": 2, "bots": [{"seat": 1, "kind": "greedy", "x": 1}]}, "x"),
        ({"game": "sushi-go", "players": 2, "__proto__": {"admin": True}}, "__proto__"),
        ({"game": "sushi-go", "players": 2, "id": str(uuid.uuid4())}, "id"),
        ({"game": "sushi-go", "players": 2, "seed": "00" * 32}, "seed"),
        ({"game": "sushi-go", "players": 2, "": 1}, ""),
    ],
)
def test_unknown_fields_are_refused(hostile_api: ApiClient, body: Any, field: str) -> None:
    response = hostile_api.post("/games", body, request_valid=False)
    problem = expect_problem(response, 400, "invalid_request")
    assert field in json.dumps(problem["errors"])


def test_unknown_move_fields_are_refused(
    hostile_api: ApiClient, table: Table, sequence_game: tuple[str, str]
) -> None:
    token = table.players[0].token
    body = {"cards": ["tempura"], "version": 1}
    response = hostile_api.post(f"{table.path}/moves", body, token=token, request_valid=False)
    assert "version" in expect_problem(response, 400, "invalid_request")["errors"]
    game_id, seq_token = sequence_game
    body = {"card": "7H", "cell": [1, 1], "team": 0}
    response = hostile_api.post(
        f"/games/{game_id}/moves", body, token=seq_token, request_valid=False
    )
    expect_problem(response, 400, "invalid_request")


# --- ids that are not game ids -------------------------------------------------------------------

NOT_IDS = [
    "..",
    "..%2F..%2Fetc%2Fpasswd",
    "%2e%2e%2f%2e%2e%2fetc%2fpasswd",
    "..%5C..%5Cwindows",
    "%00",
    "x%00y",
    "a" * 5000,
    "%F0%9F%8D%A3",
    "%ff",
    "00000000-0000-0000-0000-00000000000G",
    "-1",
    "NaN",
]


@pytest.mark.parametrize("game_id", NOT_IDS)
def test_ids_that_are_not_game_ids(hostile_api: ApiClient, table: Table, game_id: str) -> None:
    token = table.players[0].token
    for method, suffix, body, tok in [
        ("GET", "", None, None),
        ("GET", "/events", None, None),
        ("GET", "/state", None, None),
        ("GET", "/export", None, None),
        ("GET", "/audit", None, None),
        ("POST", "/players", {"name": "Ada"}, None),
        ("POST", "/moves", {"cards": ["tempura"]}, token),
    ]:
        kwargs: dict[str, Any] = {} if body is None else {"json": body}
        if game_id == ".." and suffix == "":
            # The HTTP client itself resolves /games/.. to / (RFC 3986 dot segments): the page.
            response = hostile_api.session.request(method, f"{hostile_api.base_url}/games/..")
            assert response.url == f"{hostile_api.base_url}/"
            assert response.headers["Content-Type"].startswith("text/html")
            continue
        if "%2f" in game_id.lower():
            # The server decodes %2F before routing, so no route matches (404 not_found), while
            # a spec matcher takes the path for /games/{game_id}: check the problem by hand.
            headers = {} if tok is None else {"Authorization": f"Bearer {tok}"}
            url = f"{hostile_api.base_url}/games/{game_id}{suffix}"
            response = hostile_api.session.request(method, url, headers=headers, **kwargs)
            assert response.headers["Content-Type"] == "application/problem+json"
        else:
            response = hostile_api.request(
                method, f"/games/{game_id}{suffix}", token=tok, request_valid=None, **kwargs
            )
        assert response.status_code == 404, (method, game_id, suffix, response.text)
        assert response.json()["code"] in ("game_not_found", "not_found")
    assert hostile_api.game(table.game_id)["version"] == 6  # created, 3 seats, started, dealt


def test_path_traversal_never_reaches_files(hostile_api: ApiClient) -> None:
    for path in ("/../../etc/passwd", "/games/../openapi.yaml/../../etc/passwd", "/%2e%2e/etc"):
        response = hostile_api.get(path, request_valid=None)
        assert response.status_code == 404 or (
            response.status_code == 200 and response.text.startswith("openapi:")
        ), (path, response.status_code)
        assert "root:" not in response.text


# --- tokens --------------------------------------------------------------------------------------


def test_another_games_token_everywhere(hostile_api: ApiClient, table: Table, over: Table) -> None:
    token = over.players[0].token
    for suffix in ("/state", "/export", "/events", ""):
        expect_problem(hostile_api.get(table.path + suffix, token=token), 403, "not_your_game")


@pytest.mark.parametrize(
    "header",
    [
        "Bearer \u00e9t\u00e9",
        "Bearer " + "A" * 6000,
        "Bearer a b",
        "Bearer\ttoken",
        "Bearer %00",
        "Bearer null",
        "Bearer undefined",
        "Bearer =====",
    ],
)
def test_odd_authorization_headers(hostile_api: ApiClient, table: Table, header: str) -> None:
    for method, suffix in [("GET", ""), ("GET", "/events"), ("POST", "/moves")]:
        kwargs: dict[str, Any] = {"json": {"cards": ["tempura"]}} if method == "POST" else {}
        response = hostile_api.request(
            method,
            table.path + suffix,
            headers={"Authorization": header.encode("utf-8").decode("latin-1")},
            token=None,
            request_valid=None,
            **kwargs,
        )
        expect_problem(response, 401, "invalid_token")


def test_a_token_replayed_after_the_game_ended(hostile_api: ApiClient, over: Table) -> None:
    for player in over.players:
        response = player.client.post(f"{over.path}/moves", {"cards": ["tempura"]})
        expect_problem(response, 409, "game_over")
        view = player.client.game(over.game_id)  # reads still work, as that seat
        assert view["status"] == "over" and view["you"]["seat"] == player.seat
        expect_status(player.client.get(f"{over.path}/events"), 200)
        expect_status(player.client.get(f"{over.path}/state", params={"version": 3}), 200)
        expect_status(player.client.get(f"{over.path}/export"), 200)
        expect_problem(
            player.client.post(f"{over.path}/players", {"name": "again"}), 409, "game_full"
        )
