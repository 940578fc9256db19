"""The Flask app factory (``create_app``): one store, one game service, the API blueprint."""

from __future__ import annotations

import atexit
from collections.abc import Callable, Sequence
from typing import Any

from flask import Flask
from psycopg_pool import ConnectionPool

from service.games.registry import load_games
from service.http import abuse, idempotency, observe, problems, proxies, readiness
from service.http.connections import ConnectionSettings, OpenStreams
from service.http.json_provider import OrjsonProvider
from service.http.routes import api
from service.http.routes.leaving import leaving_api
from service.http.routes.probes import probes
from service.http.routes.rulings import rulings_api
from service.http.routes.stream import stream_api
from service.http.routes.web_page import web
from service.live import clock
from service.live import hub as live
from service.play import GameService
from service.play.challenges import Challenger
from service.play.quick import QuickMatch
from service.rematch import Rematcher
from service.resources import OPENAPI
from service.settings import settings
from service.store import db, replicas
from service.store.events import EventStore

OPENAPI_PATH = OPENAPI  # the contract, served at GET /openapi.yaml
MAX_BODY_BYTES = 16 * 1024  # a move is a few hundred bytes; anything near this is not one
SYNCED_MAX = 1024


class CardroomFlask(Flask):
    """Flask, with each function's sync check made once: ``ensure_sync`` asks ``inspect``
    whether a view or hook is a coroutine function on every call (nine times a request for
    `GET /livez`), and the answer never changes. No view or hook here is one."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._synced: dict[Callable[..., Any], Callable[..., Any]] = {}

    def ensure_sync(self, func: Callable[..., Any]) -> Callable[..., Any]:
        synced = self._synced.get(func)
        if synced is None:
            synced = super().ensure_sync(func)
            if len(self._synced) < SYNCED_MAX:  # views, hooks, handlers: a few dozen
                self._synced[func] = synced
        return synced


def create_app(
    database_url: str | None = None,
    *,
    pool: ConnectionPool | None = None,
    config: dict[str, Any] | None = None,
    replica_urls: Sequence[str] | None = None,
) -> Flask:
    """The app, on ``pool`` if given, else on a new pool to ``database_url`` (default: the
    resolved database, see service.store.db). The schema must already be migrated. Reads may go
    to the hot standbys ``replica_urls`` (default: ``DATABASE_REPLICA_URL``)."""
    app = CardroomFlask(
        __name__, static_folder=None
    )  # the page's files: service/http/routes/web_page.py
    app.json = OrjsonProvider(app)  # every answer's JSON, encoded by orjson
    app.config.update(
        MAX_CONTENT_LENGTH=MAX_BODY_BYTES,
        OPENAPI_PATH=str(OPENAPI_PATH),
        JSON_SORT_KEYS=False,
        # Seconds between the turn clock's sweeps in this process; 0: no sweeper (tests).
        CARDROOM_CLOCK_INTERVAL=settings().clock_interval,
        # Limits of games that stall or never fill (tests give tiny ones per app).
        CARDROOM_STALL_SECONDS=settings().stall_seconds,
        CARDROOM_FILL_SECONDS=settings().fill_seconds,
        CARDROOM_CHALLENGE_SECONDS=settings().challenge_seconds,
    )
    app.config.update(config or {})
    if pool is None:
        pool = db.make_pool(database_url or db.database_url())
        atexit.register(pool.close)
    load_games()  # every game package registers itself now, not in a request's thread
    standbys = replicas.Replicas.from_urls(
        replicas.replica_urls() if replica_urls is None else replica_urls
    )
    atexit.register(standbys.close)
    games = app.extensions["cardroom"] = GameService(
        EventStore(pool),
        standbys,
        stall_seconds=app.config["CARDROOM_STALL_SECONDS"],
        fill_seconds=app.config["CARDROOM_FILL_SECONDS"],
    )
    app.extensions["cardroom_rematches"] = Rematcher(games)
    app.extensions["cardroom_challenges"] = Challenger(
        games, app.config["CARDROOM_CHALLENGE_SECONDS"]
    )
    app.extensions["cardroom_quick"] = QuickMatch(games)
    sweeper = app.extensions["cardroom_clock"] = clock.Sweeper(
        games, app.config["CARDROOM_CLOCK_INTERVAL"] or clock.DEFAULT_INTERVAL
    )
    if app.config["CARDROOM_CLOCK_INTERVAL"] > 0:  # every process sweeps: see service/live/clock.py
        sweeper.start()
        atexit.register(sweeper.stop)
    # Request ids, log context, metrics; /livez /readyz /metrics. First, so that it sees every
    # request, stored answers replayed included, and stamps each with its own request id.
    observe.register(app, games.store)
    readiness.register(app, games.store)  # GET /readyz's checks; others add theirs to it
    app.register_blueprint(probes)  # /livez /metrics /readyz
    if settings().webhooks_insecure:  # named, never failing: a development setting left on
        readiness.add_check(app, "webhooks_insecure", _webhooks_insecure, required=False)
    # Next: its after_request runs before observe's (a fault point before the answer is sent).
    idempotency.register(app, games.store)
    # The hub listens for appends on its own connection, from its first use on (streams and
    # long polls): routes-only apps and plain reads never open it.
    hub = live.Hub(lambda: str(pool.conninfo))
    atexit.register(hub.stop)
    games.store.on_new_database(hub.forget)  # it vouches for versions of the old one no more
    app.extensions["cardroom_live"] = hub
    connections = app.extensions["cardroom_connections"] = ConnectionSettings.from_env()
    # The per-address cap on streams and long polls; app config CARDROOM_STREAMS_PER_ADDRESS
    # overrides the environment (tests).
    cap = app.config.get("CARDROOM_STREAMS_PER_ADDRESS", connections.streams_per_address)
    app.extensions["cardroom_open_streams"] = OpenStreams(cap)
    problems.register(app)
    app.register_blueprint(api)
    app.register_blueprint(stream_api)
    app.register_blueprint(rulings_api)
    app.register_blueprint(leaving_api)
    app.register_blueprint(web)  # the page at /: static files, a client of the API above
    abuse.register(app)  # rate limits on creating and joining games; CORS if configured
    # Client addresses from X-Forwarded-For, from trusted proxies only (app config overrides).
    proxies.install(app, app.config.get("CARDROOM_TRUSTED_PROXIES", settings().trusted_proxies))
    return app


def _webhooks_insecure() -> None:
    raise RuntimeError(
        "CARDROOM_WEBHOOKS_INSECURE is on: webhooks may go to plain http:// URLs and to"
        " loopback and private addresses (development only)"
    )
