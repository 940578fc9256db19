"""schemathesis against openapi.yaml: requests generated from the spec (valid and invalid), sent
to the real app (WSGI, on the test database), each answer checked: never a 5xx, a documented
status, content type and body. Bounded for CI; ``python -m bench.fuzz`` runs the same at scale.

Stateful: links in openapi.yaml (a created game's id, a seat's token) let schemathesis chain
create → join → view/move/events/... so that most requests reach a real game.
"""

from __future__ import annotations

from collections.abc import Iterator

import dbsupport
import pytest
import schemathesis
from hypothesis.errors import FlakyStrategyDefinition
from psycopg_pool import ConnectionPool

from bench import fuzz
from service.http.app import create_app
from service.store.db import make_pool

MAX_EXAMPLES = 25  # per operation; the stateful run below adds a few hundred steps


@pytest.fixture(scope="module")
def honest_pool(database_url: str) -> Iterator[ConnectionPool]:
    """A database of its own. Why: the stateful run lists games and would wander into other
    tests' games; it checks the service on games the service made (the tests that write games no
    honest service holds keep them in databases of their own too: dbsupport.own_database)."""
    with dbsupport.own_database(database_url) as url, make_pool(url, max_size=4) as pool:
        yield pool


@pytest.fixture(scope="module")
def spec(honest_pool: ConnectionPool) -> Iterator[schemathesis.schemas.BaseSchema]:
    app = create_app(pool=honest_pool, config=fuzz.APP_CONFIG)
    try:
        yield fuzz.load_schema(app)
    finally:  # before its database is dropped: the hub would keep reconnecting to it
        app.extensions["cardroom_live"].stop()


def test_every_operation(spec: schemathesis.schemas.BaseSchema) -> None:
    stats = fuzz.run_stateless(spec, MAX_EXAMPLES)
    assert stats.requests > 0 and stats.failures == [], "\n".join(stats.failures[:3])


def test_stateful(spec: schemathesis.schemas.BaseSchema) -> None:
    """The stateful phase, bounded (about a minute on a loaded machine): it follows the
    contract's links, so its requests reach the games it created (test_links.py checks each
    link against a live server)."""
    stats = fuzz.run_stateful(spec, max_examples=25, max_steps=15)
    assert stats.requests > 0 and stats.failures == [], "\n".join(stats.failures[:3])
    assert stats.reached > 0, "no linked request reached a game: are openapi.yaml's links right?"


def test_a_walk_cut_short_is_resumed(
    spec: schemathesis.schemas.BaseSchema, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A walk that Hypothesis ends with FlakyStrategyDefinition is walked again with the
    scenarios left, drawn afresh (seed 0 is the derandomized walk), at most FLAKY_RESUMES
    times."""
    calls: list[tuple[int, int]] = []

    def cut_short(machine: object, max_examples: int, max_steps: int, seed: int) -> None:
        calls.append((max_examples, seed))
        raise FlakyStrategyDefinition("the API's answers changed what could be drawn")

    monkeypatch.setattr(fuzz, "_run_machine", cut_short)
    stats = fuzz.run_stateful(spec, max_examples=25, max_steps=15)
    assert calls == [(25, seed) for seed in range(1 + fuzz.FLAKY_RESUMES)]
    assert stats.flaky_runs == 1 + fuzz.FLAKY_RESUMES
