"""Abuse limits and browser access: rate limits on creating, joining and moving, and CORS.

**Rate limits** (Flask-Limiter's storage and fallback, counted by `limits` directly from each
limited route: ``_Counter``): per client IP address, ``POST /games`` (and, each
counted apart, ``POST /accounts/{id}/challenges`` and ``POST /games/quick``) at most
``CARDROOM_RATE_LIMIT_CREATE`` (default ``30/minute``), ``POST /accounts`` at most
``CARDROOM_RATE_LIMIT_ACCOUNTS`` (default ``10/hour``), ``POST /games/{id}/players`` at most
``CARDROOM_RATE_LIMIT_JOIN`` (default ``60/minute``) across all games and at most
``CARDROOM_RATE_LIMIT_JOIN_GAME`` (default ``12/minute``, the most seats a game has) into any
one game; per bearer token (per IP address without
one), ``POST /games/{id}/moves`` at most ``CARDROOM_RATE_LIMIT_MOVES`` (default ``300/minute``:
far above any person or fair bot, far below a flood); any Flask-Limiter rate string works
(``"10/minute;100/hour"``). Past a limit the answer is ``429 rate_limited`` (problem+json) with
``Retry-After``.

**Where they count**: ``CARDROOM_RATE_LIMIT_STORAGE``. ``memory://`` (the default) counts in
each process's memory (service/http/limit_storage.py): right for one worker process only (with
N workers a client gets up to N × each limit; ``cardroom serve`` warns), forgotten at a restart.
A Redis URI (``redis://host:6379/0``; ``rediss://``, ``redis+sentinel://``,
``redis+cluster://``) counts once for the whole service, every worker on every host, through
``limits``' own Redis storage. Redis waits are bounded (``REDIS_TIMEOUT_SECONDS``). While Redis
cannot be reached the limits still hold, counted per process in memory (Flask-Limiter's in-memory
fallback; one log line when it starts, one when Redis is back, asked again at most every
``RECHECK_SECONDS``, 2 s, by a request or ``/readyz``; what a process counted in memory meanwhile
is added to Redis's count by the client's next hit, so the switch back grants no fresh
budget), and ``GET /readyz`` reports ``rate_limits`` as degraded without failing: a limiter
outage must not take every host out of traffic.

**Client addresses**: the peer's address, unless the peer is a trusted reverse proxy
(``CARDROOM_TRUSTED_PROXIES``, service/http/proxies.py): then the rightmost address of
``X-Forwarded-For`` that is not itself a trusted proxy.

``CARDROOM_RATE_LIMITS=off`` (the test suite sets it) turns them off; app config
``RATELIMIT_ENABLED`` overrides.

**Seats in waiting games**: one address may hold seats in at most
``CARDROOM_WAITING_GAMES_PER_ADDRESS`` (default 10; 0: no cap) games that have not started,
counted in the database (``seats.client``, a keyed hash of the address: every process agrees,
and a restart forgets nothing); one more join is ``409 too_many_waiting_games``. It is on and off
with the rate limits.

**CORS**: ``CARDROOM_CORS_ORIGINS``, a comma-separated allow-list of origins
(``https://play.example.com,https://bot.example.org``); empty (the default): no CORS headers at
all, so browsers keep other sites' pages from calling the API. Bearer tokens travel in the
``Authorization`` header, never in cookies, so no credentials mode is needed.
"""

from __future__ import annotations

import functools
import hashlib
import math
import time
from collections.abc import Callable
from typing import Any

from flask import Flask, current_app, request
from flask_cors import CORS
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address
from limits import RateLimitItem, parse_many

from service.http import limit_storage, readiness
from service.http.problems import Problem
from service.settings import settings

DEFAULT_CREATE_LIMIT = "30/minute"
DEFAULT_ACCOUNTS_LIMIT = "10/hour"
DEFAULT_JOIN_LIMIT = "60/minute"
DEFAULT_JOIN_GAME_LIMIT = "12/minute"
DEFAULT_MOVE_LIMIT = "300/minute"
# Read by browsers' scripts: where a created game is, replay markers, caching, back-off.
EXPOSED_HEADERS = ["Location", "ETag", "Retry-After", "Idempotent-Replayed", "Cardroom-Receipt"]
ALLOWED_HEADERS = [
    "Authorization",
    "Content-Type",
    "Idempotency-Key",
    "Idempotency-Secret",
    "If-None-Match",
    "Last-Event-ID",
]


def register(app: Flask) -> None:
    configured = settings()
    app.config.setdefault("RATELIMIT_ENABLED", configured.rate_limits == "on")
    app.config.setdefault(
        "CARDROOM_RATE_LIMIT_CREATE", configured.rate_limit_create or DEFAULT_CREATE_LIMIT
    )
    app.config.setdefault(
        "CARDROOM_RATE_LIMIT_ACCOUNTS", configured.rate_limit_accounts or DEFAULT_ACCOUNTS_LIMIT
    )
    app.config.setdefault(
        "CARDROOM_RATE_LIMIT_JOIN", configured.rate_limit_join or DEFAULT_JOIN_LIMIT
    )
    app.config.setdefault(
        "CARDROOM_RATE_LIMIT_JOIN_GAME", configured.rate_limit_join_game or DEFAULT_JOIN_GAME_LIMIT
    )
    app.config.setdefault(
        "CARDROOM_RATE_LIMIT_MOVES", configured.rate_limit_moves or DEFAULT_MOVE_LIMIT
    )
    app.config.setdefault(
        "CARDROOM_WAITING_GAMES_PER_ADDRESS", configured.waiting_games_per_address
    )
    app.config.setdefault("CARDROOM_CORS_ORIGINS", configured.cors_origins)
    app.config.setdefault("CARDROOM_RATE_LIMIT_STORAGE", configured.rate_limit_storage)
    _limits(app)
    _cors(app)


def _limits(app: Flask) -> None:
    if not app.config["RATELIMIT_ENABLED"]:
        return  # why not a disabled Limiter: its wrapper still costs every move a lookup or two
    uri = app.config["CARDROOM_RATE_LIMIT_STORAGE"]
    shared = not uri.startswith("memory://")
    limiter = Limiter(
        get_remote_address,
        app=app,
        # memory: per process, swept inline (limit_storage.py); else Redis, for the service
        storage_uri=uri if shared else f"{limit_storage.SCHEME}://",
        storage_options=REDIS_OPTIONS if shared else None,
        in_memory_fallback_enabled=shared,  # Redis down: count per process meanwhile
        default_limits=[],
        headers_enabled=False,  # Retry-After on 429 only (below); no X-RateLimit-* chatter
    )
    app.extensions["cardroom_limiter"] = limiter
    _without_hooks(app, limiter)
    counter = _Counter(limiter)
    if shared:
        readiness.add_check(app, "rate_limits", lambda: _shared_store(counter), required=False)
    for endpoint in dict.fromkeys(endpoint for endpoint, _, _ in LIMITS):
        checks = tuple((key, per) for limited, key, per in LIMITS if limited == endpoint)
        app.view_functions[endpoint] = counter.limited(
            endpoint, checks, app.view_functions[endpoint]
        )


class _Counter:
    """Counts the limited routes' requests with `limits` itself, as Flask-Limiter's wrapper of a
    route did (same strategy, storage, keys and order; its in-memory fallback while Redis is
    down, and its log lines), without resolving the request's limits through its manager on
    every request: about 40 of the 45 us that wrapper spent on a move (README, "Benchmarks")."""

    def __init__(self, limiter: Limiter) -> None:
        self.limiter = limiter
        self._checked_at = 0.0  # while Redis is down: the last time it was asked again
        self._carry = False  # counts made in memory during an outage may still be in force

    def limited(
        self, endpoint: str, checks: tuple[tuple[str, Per], ...], view: Callable[..., Any]
    ) -> Callable[..., Any]:
        @functools.wraps(view)
        def counted(*args: Any, **kwargs: Any) -> Any:
            if request.method == "POST":  # the limits are on POSTs; the others pass
                self.count(endpoint, checks)
            return view(*args, **kwargs)

        return counted

    def count(self, endpoint: str, checks: tuple[tuple[str, Per], ...]) -> None:
        """Count this request against each of ``checks`` (the app config key of a limit, what
        it is counted per), or 429 at the first that is spent."""
        limiter = self.limiter
        self.recover()
        try:
            self._hit(endpoint, checks)
        except Problem:
            raise
        except Exception:
            if not limiter._in_memory_fallback_enabled or limiter._storage_dead:
                raise
            limiter.logger.warning(
                "Rate limit storage unreachable - falling back to in-memory storage"
            )
            limiter._storage_dead = True  # limiter.limiter is the fallback's from now on
            self._carry = True
            self._hit(endpoint, checks)

    def _hit(self, endpoint: str, checks: tuple[tuple[str, Per], ...]) -> None:
        config = current_app.config
        limits = [(item, per) for key, per in checks for item in _parsed(config[key])]
        strategy = self.limiter.limiter  # the shared store's, or the fallback's
        for item, per in sorted(limits, key=lambda limit: limit[0]):  # stable: shortest first
            counted = (per(), endpoint)  # Flask-Limiter's (key, scope): the same counters
            if strategy.hit(item, *counted, cost=1 + self._carried(item, counted)):
                continue
            self.limiter.logger.info(
                "ratelimit %s (%s) exceeded at endpoint: %s", item, counted[0], endpoint
            )
            wait = strategy.get_window_stats(item, *counted).reset_time - time.time()
            raise Problem(
                429,
                "rate_limited",
                f"too many requests of this kind from you ({item}; counted per"
                " address, per address and game for joins into one game, and per token for"
                " moves); wait Retry-After seconds",
                headers={"Retry-After": str(max(1, math.ceil(wait)))},
            )

    def recover(self) -> None:
        """While Redis is down: ask it again, at most every ``RECHECK_SECONDS`` (a request or
        ``/readyz`` asks), and count there again once it answers. Flask-Limiter's own back-off
        (after 1, 2, 4 ... 32 s, then again) kept a host counting per process for a minute or
        two after Redis was back (issue 39, item 4)."""
        limiter = self.limiter
        if not limiter._storage_dead:
            return
        now = time.monotonic()
        if now - self._checked_at < RECHECK_SECONDS:
            return
        self._checked_at = now
        if limiter.storage.check():  # bounded by REDIS_TIMEOUT_SECONDS
            limiter.logger.info("Rate limit storage recovered")
            limiter._storage_dead = False

    def _carried(self, item: RateLimitItem, counted: tuple[str, str]) -> int:
        """What this process counted in memory for ``counted`` during Redis's outage and has
        not yet added to Redis: moved there by this hit (so the switch back grants no fresh
        budget), then forgotten in memory."""
        fallback = self.limiter._fallback_limiter
        if not self._carry or self.limiter._storage_dead or fallback is None:
            return 0
        if not getattr(fallback.storage, "storage", None):  # all expired, or moved
            self._carry = False
            return 0
        used = item.amount - fallback.get_window_stats(item, *counted).remaining
        if used > 0:
            fallback.clear(item, *counted)
        return max(0, used)


@functools.lru_cache(maxsize=64)
def _parsed(limits: str) -> list[RateLimitItem]:
    """The items of a rate limit string (``"10/minute;100/hour"``)."""
    return parse_many(limits)


def _without_hooks(app: Flask, limiter: Limiter) -> None:
    """Takes the limiter's own hooks off every request. Every limit here is a route's, counted
    by the route's wrapper (``limiter.limit``); the hooks would resolve each request's limits
    (default and blueprint limits: none), inject headers (off) and reset its bookkeeping (kept
    on the request's context, which ends with it): a sixth of `GET /livez`'s CPU for nothing
    (README, "Benchmarks")."""
    tables: list[dict[Any, list[Any]]] = [
        app.before_request_funcs,
        app.after_request_funcs,
        app.teardown_request_funcs,
    ]
    for hooks in tables:
        for functions in hooks.values():
            functions[:] = [f for f in functions if not _of(f, limiter)]


RECHECK_SECONDS = 2.0  # while Redis is down, asked again at most this often (back within 5 s)
REDIS_TIMEOUT_SECONDS = 0.25  # a Redis that does not answer costs a request at most this
REDIS_OPTIONS: dict[str, Any] = {  # seconds (limits passes them to redis-py)
    "socket_timeout": REDIS_TIMEOUT_SECONDS,
    "socket_connect_timeout": REDIS_TIMEOUT_SECONDS,
}


def _shared_store(counter: _Counter) -> None:
    """Raise while the limits count per process because Redis cannot be reached (asked again
    first, so that an idle host's /readyz recovers too)."""
    counter.recover()
    if counter.limiter._storage_dead:  # Flask-Limiter's own flag: it uses its in-memory fallback
        raise RuntimeError("degraded: Redis cannot be reached; limits count per process")


def _of(function: Any, limiter: Limiter) -> bool:
    """Whether ``function`` is one of ``limiter``'s hooks: a bound method or a partial."""
    bound = getattr(function, "__self__", None)
    args: tuple[Any, ...] = getattr(function, "args", ())
    return bound is limiter or (len(args) > 0 and args[0] is limiter)


def waiting_games_limit() -> int:
    """How many waiting games one address may hold seats in (0: no cap, as with rate limits
    off)."""
    if not current_app.config["RATELIMIT_ENABLED"]:
        return 0
    return int(current_app.config["CARDROOM_WAITING_GAMES_PER_ADDRESS"])


def _address_and_game() -> str:
    """Joins into one game are counted per address and game."""
    game = (request.view_args or {}).get("game_id", "")
    return f"address:{get_remote_address()}:game:{game}"


def _token_or_address() -> str:
    """Moves are counted per bearer token (its hash: no secret kept in memory), else per
    address."""
    header = request.headers.get("Authorization")
    if header is None:
        return f"address:{get_remote_address()}"
    return "token:" + hashlib.sha256(header.encode("utf-8", "surrogateescape")).hexdigest()


Per = Callable[[], str]  # what a limit is counted per: the request's address, token ...

# The limited routes: (endpoint, the app config key of its limit, what it is counted per).
LIMITS = (
    ("api.create_game", "CARDROOM_RATE_LIMIT_CREATE", get_remote_address),
    ("api.create_account", "CARDROOM_RATE_LIMIT_ACCOUNTS", get_remote_address),
    # A challenge and a quick match may create a game: the limit of creating games, each.
    ("api.create_challenge", "CARDROOM_RATE_LIMIT_CREATE", get_remote_address),
    ("api.quick_match", "CARDROOM_RATE_LIMIT_CREATE", get_remote_address),
    ("api.join_game", "CARDROOM_RATE_LIMIT_JOIN", get_remote_address),
    ("api.join_game", "CARDROOM_RATE_LIMIT_JOIN_GAME", _address_and_game),
    ("api.make_move", "CARDROOM_RATE_LIMIT_MOVES", _token_or_address),
)


def _cors(app: Flask) -> None:
    origins = [o.strip() for o in app.config["CARDROOM_CORS_ORIGINS"].split(",") if o.strip()]
    if not origins:
        return
    CORS(
        app,
        origins=origins,
        allow_headers=ALLOWED_HEADERS,
        expose_headers=EXPOSED_HEADERS,
        supports_credentials=False,
        max_age=600,
    )
