"""The default set-up: no DATABASE_URL, so the embedded PostgreSQL (pgserver) is used."""

from __future__ import annotations

import uuid

import pytest

from domain.decider import GAME_CREATED, Event
from service.http.app import create_app
from service.store import db
from service.store.events import EventStore


def test_embedded_server_is_the_default_and_keeps_games(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A short path: the server's Unix socket lives in its data directory (~107 bytes at most).
    data_dir = tmp_path_factory.mktemp("emb") / "pg"
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.setenv("CARDROOM_DATA_DIR", str(data_dir))
    game_id = uuid.uuid4()
    try:
        url = db.database_url()
        assert str(data_dir) in url
        db.migrate(url)
        with db.make_pool(url, max_size=2) as pool:
            EventStore(pool).create_game(game_id, "test", b"seed", [Event(GAME_CREATED, {})])

        # Stop the server and start it again on the same directory: the game is still there.
        db.start_embedded(data_dir).cleanup()
        url = db.database_url()
        with db.make_pool(url, max_size=2) as pool:
            assert EventStore(pool).load(game_id) == ("test", [Event(GAME_CREATED, {})])
            response = create_app(pool=pool).test_client().get("/healthz")
            assert response.status_code == 200, response.get_data(as_text=True)
    finally:
        db.start_embedded(data_dir).cleanup()
