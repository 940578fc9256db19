"""The Flask app factory (``create_app``): one store, one game service, the API blueprint."""

from __future__ import annotations

import atexit
from pathlib import Path
from typing import Any

from flask import Flask
from psycopg_pool import ConnectionPool

from service import db, problems
from service.api import api
from service.play import GameService
from service.store import EventStore

OPENAPI_PATH = Path(__file__).resolve().parent.parent / "openapi.yaml"
MAX_BODY_BYTES = 16 * 1024  # a move is a few hundred bytes; anything near this is not one


def create_app(
    database_url: str | None = None,
    *,
    pool: ConnectionPool | None = None,
    config: dict[str, Any] | None = None,
) -> Flask:
    """The app, on ``pool`` if given, else on a new pool to ``database_url`` (default: the
    resolved database, see service.db). The schema must already be migrated."""
    app = Flask(__name__, static_folder=None)  # no /static route: every route is in the API
    app.config.update(
        MAX_CONTENT_LENGTH=MAX_BODY_BYTES,
        OPENAPI_PATH=str(OPENAPI_PATH),
        JSON_SORT_KEYS=False,
    )
    app.config.update(config or {})
    if pool is None:
        pool = db.make_pool(database_url or db.database_url())
        atexit.register(pool.close)
    app.extensions["cardroom"] = GameService(EventStore(pool))
    problems.register(app)
    app.register_blueprint(api)
    return app
