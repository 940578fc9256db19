"""``GET /games/{id}`` sends a view encoded once per game, version and viewer
(service/http/routes/common.py, ``view_json``): the answer is the one built afresh, each seat
gets its own, and a game that moved on is encoded anew."""

from __future__ import annotations

import json
from typing import Any

from flask import Flask
from psycopg_pool import ConnectionPool

from service.http.app import create_app
from service.http.routes.common import _VIEWS, view_body

PLAYERS = 3


def _seated(app: Flask) -> tuple[str, list[str]]:
    client = app.test_client()
    game = client.post("/games", json={"game": "sushi-go", "players": PLAYERS}).location
    tokens = [
        client.post(f"{game}/players", json={"name": f"p{i}"}).get_json()["token"]
        for i in range(PLAYERS)
    ]
    return game, tokens


def _get(app: Flask, game: str, token: str | None) -> dict[str, Any]:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    response = app.test_client().get(game, headers=headers)
    assert response.status_code == 200, response.get_data()
    return json.loads(response.get_data())


def _fresh(app: Flask, game: str, seat: int | None) -> dict[str, Any]:
    """The view built afresh, as the route built it before it kept encoded views."""
    with app.test_request_context():
        service = app.extensions["cardroom"]
        loaded = service.load(service.last_seen(_uuid(game)).id)
        return json.loads(app.json.dumps(view_body(loaded, seat)))


def _uuid(game: str) -> Any:
    from uuid import UUID

    return UUID(game.rsplit("/", 1)[1])


def test_a_kept_view_is_the_fresh_one_for_each_viewer_and_version(pool: ConnectionPool) -> None:
    app = create_app(pool=pool)
    game, tokens = _seated(app)
    for _ in range(2):  # the second time from what was kept
        for seat, token in enumerate([*tokens, None]):
            viewer = None if token is None else seat
            assert _get(app, game, token) == _fresh(app, game, viewer)
    assert len(app.extensions[_VIEWS]._items) == PLAYERS + 1  # one per viewer at this version
    view = _get(app, game, tokens[0])
    pick = {"round": view["round"], "turn": view["turn"], "cards": view["you"]["hand"][:1]}
    moved = app.test_client().post(
        f"{game}/moves", json=pick, headers={"Authorization": f"Bearer {tokens[0]}"}
    )
    assert moved.status_code == 200, moved.get_data()
    after = _get(app, game, tokens[0])
    assert after["version"] == view["version"] + 1 and after["you"]["pick"] is not None
    assert after == _fresh(app, game, 0)
    assert _get(app, game, tokens[1])["you"]["pick"] is None  # seat 1 sees only its own
