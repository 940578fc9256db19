"""What ``GET /readyz`` (service/http/routes/probes.py) asks: a list of named checks, each saying
``ok`` or why this process should get no traffic; 200 when every required check is ok, else 503
``not_ready`` naming the failures.

A check is a function that returns None (ok) or raises (its message is the reason); add one
with :func:`add_check`. A check that is not ``required`` is reported but does not fail the
probe: the rate limits' shared store being down degrades the limits, not the games, and a
probe failing on every host at once for it would take the whole service out of traffic.

The database checks run under a short deadline of their own (``CARDROOM_READY_TIMEOUT``,
default 2 s; service/store/budget.py): a write that cannot commit in that time, behind a lock,
waiting for a missing synchronous standby, fails the probe with that cause.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from flask import Flask

from service import key_registry
from service.http.problems import UNAVAILABLE
from service.settings import settings
from service.store import budget
from service.store.events import EventStore
from service.store.failures import StoreUnavailable

log = logging.getLogger(__name__)

EXTENSION = "cardroom_readiness"


@dataclass(frozen=True)
class Check:
    name: str
    run: Callable[[], None]  # raises when not ok; the message is the reason
    required: bool = True


def add_check(app: Flask, name: str, run: Callable[[], None], *, required: bool = True) -> None:
    """Add a check named ``name`` to the app's ``/readyz`` (in the order added)."""
    app.extensions.setdefault(EXTENSION, []).append(Check(name, run, required))


def register(app: Flask, store: EventStore) -> None:
    """The database's checks: it takes writes (not a standby, not read-only), and it commits
    one, behind the locks an append takes, within the ready timeout."""
    add_check(app, "database_read_write", store.check_read_write)
    add_check(app, "database_commits", store.check_writable)
    add_check(app, "keys", lambda: _keys_match(store))


def _keys_match(store: EventStore) -> None:
    """Games sealed under a key this host lacks would answer 500: keep it out of traffic."""
    problem = key_registry.readiness_problem(store.pool)
    if problem:
        raise RuntimeError(problem)


def results(app: Flask) -> tuple[dict[str, str], list[str]]:
    """Each check's result (``ok`` or the reason), and the names of required ones that failed."""
    checks: dict[str, str] = {}
    failed: list[str] = []
    with budget.within(settings().ready_timeout):
        for check in app.extensions.get(EXTENSION, []):
            try:
                check.run()
                checks[check.name] = "ok"
            except Exception as exc:  # a check's failure is its answer, whatever it is
                checks[check.name] = _reason(exc)
                if check.required:
                    failed.append(check.name)
    return checks, failed


def _reason(error: Exception) -> str:
    if isinstance(error, StoreUnavailable):
        return f"{error.cause}: {UNAVAILABLE[error.cause]}"
    return str(error) or type(error).__name__
