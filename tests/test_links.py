"""Every link in openapi.yaml leads where it says, checked against a live server: the source
operation is called for real, the link's runtime expressions (``$response.body#/…``, also inside
``{…}`` templates) are resolved from its answer, and the target operation is called with them.
A link that names a field the answer lacks, or an id that finds nothing (the ``POST /games``
links once pointed at ``#/id``, though the field is ``game_id``), fails here."""

from __future__ import annotations

import random
import re
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import requests
import yaml
from api_client import ApiClient, LiveServer, Table, play_to_end
from patience import ANSWER

from service.store.db import ROOT

pytest_plugins = ["api_fixtures"]

SPEC = yaml.safe_load((ROOT / "openapi.yaml").read_text())
EXPRESSION = re.compile(r"\$response\.body#(/[^}\s]*)")


def operations() -> dict[str, tuple[str, str, dict[str, Any]]]:
    """operationId -> (method, path template, operation)."""
    found = {}
    for path, methods in SPEC["paths"].items():
        for method, operation in methods.items():
            if isinstance(operation, dict) and "operationId" in operation:
                found[operation["operationId"]] = (method.upper(), path, operation)
    return found


OPERATIONS = operations()
LINKS = [
    (source, status, name, link)
    for source, (_, _, operation) in OPERATIONS.items()
    for status, response in operation.get("responses", {}).items()
    if isinstance(response, dict)
    for name, link in response.get("links", {}).items()
]

# How to call each operation that links are followed from: a request that succeeds.
SOURCES: dict[str, Any] = {
    "createGame": lambda api, _: api.post("/games", {"game": "sushi-go", "players": 2}),
    # The second seat of two: the game starts, and a seat's view shows its hand.
    "joinGame": lambda api, game: (
        api.join(game, "Lars") and api.post(f"/games/{game}/players", {"name": "Linda"})
    ),
    "rematch": lambda api, _: rematch(api),
    # A pool of its own (a clock no other test asks for): the page's quick match uses 2-player
    # games without a clock.
    "quickMatch": lambda api, _: api.post(
        "/games/quick",
        {
            "game": "sushi-go",
            "players": 2,
            "turn_seconds": random.randint(5, 3600),
            "name": f"q{uuid.uuid4().hex[:8]}",
        },
    ),
    "acceptChallenge": lambda api, _: accepted_challenge(api),
}


def accepted_challenge(api: ApiClient) -> Any:
    """An account accepts another's challenge: its seat in the new game."""
    ada, bob = (
        api.post("/accounts", {"name": f"link{uuid.uuid4().hex[:10]}"}, token=None).json()
        for _ in range(2)
    )
    offered = api.post(
        f"/accounts/{bob['account_id']}/challenges",
        {"game": "sushi-go", "players": 2},
        token=ada["token"],
    ).json()
    return api.post(f"/challenges/{offered['challenge_id']}/accept", {}, token=bob["token"])


def rematch(api: ApiClient) -> Any:
    """A seat of a finished game asks for its rematch."""
    table = Table.open(api, 2)
    play_to_end(table, random.Random(2))
    return api.post(f"{table.path}/rematch", token=table.players[0].token)


def test_the_contract_has_links_and_each_source_is_known() -> None:
    assert {source for source, *_ in LINKS} == set(SOURCES)
    assert len(LINKS) >= 4


def pointer(body: Any, path: str) -> Any:
    for part in path.strip("/").split("/"):
        body = body[int(part)] if isinstance(body, list) else body[part]
    return body


def resolve(expression: str, body: Any) -> str:
    """A runtime expression, alone or in a ``{…}`` template, against the source's answer."""
    if expression.startswith("$response.body#"):
        return str(pointer(body, expression.removeprefix("$response.body#")))
    return re.sub(r"\{(\$[^}]+)\}", lambda m: resolve(m.group(1), body), expression)


@pytest.fixture(scope="module")
def api(live_server: LiveServer) -> Iterator[ApiClient]:
    with ApiClient(live_server.url) as client:
        yield client


@pytest.mark.parametrize(
    ("source", "status", "name", "link"), LINKS, ids=[link[2] for link in LINKS]
)
def test_every_link_leads_to_its_target(
    api: ApiClient, source: str, status: str, name: str, link: dict[str, Any]
) -> None:
    game = api.create_game(2)["game_id"]
    answer = SOURCES[source](api, game)
    assert str(answer.status_code) == status, answer.text
    body = answer.json()
    method, template, _ = OPERATIONS[link["operationId"]]
    path_values, headers = {}, {}
    for parameter, expression in link["parameters"].items():
        value = resolve(expression, body)
        if parameter.startswith("header."):
            headers[parameter.removeprefix("header.")] = value
        else:
            path_values[parameter] = value
    url = api.base_url + template.format(**path_values)
    followed = requests.request(method, url, headers=headers, json={} if method == "POST" else None)
    if method == "GET":
        assert followed.status_code == 200, (name, url, followed.text[:300])
        assert followed.json()["game_id"] == path_values["game_id"]
    else:  # the link gives what it can (the game, the token); the body is the caller's
        assert followed.status_code not in (401, 403, 404), (name, url, followed.text[:300])
        assert followed.status_code < 500
    if "header.Authorization" in link["parameters"]:  # the token acts for the seat it names
        view = requests.get(url.removesuffix("/moves"), headers=headers, timeout=ANSWER)
        assert view.status_code == 200  # an unknown token is a 401
        if "you" in view.json():  # a started game's seat view
            assert view.json()["you"]["seat"] == body["seat"]
