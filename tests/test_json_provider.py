"""Answers encoded by orjson (service/http/json_provider.py) mean what Flask's own encoder said,
key order included; problems keep the standard library's bytes."""

from __future__ import annotations

import datetime
import decimal
import json
import uuid
from typing import Any

import pytest
from flask import Flask
from flask.json.provider import DefaultJSONProvider
from psycopg_pool import ConnectionPool

from service.http.app import create_app
from service.http.json_provider import OrjsonProvider

SAMPLES: dict[str, Any] = {
    "a view": {"round": 1, "you": {"hand": ["tempura", "maki_2"], "pick": None}, "over": False},
    "key order": {"zeta": 1, "alpha": {"b": 2, "a": [1.5, -0.0, 1e16]}},
    "not ASCII": {"name": "Zoë 🍣", "note": '\u2028 quotes " and \\ slashes'},
    "non-string keys": {1: "one", 2: "two"},
    "what JSON has no type for": {
        "id": uuid.UUID("12345678-1234-5678-1234-567812345678"),
        "at": datetime.datetime(2026, 11, 25, 17, 0, tzinfo=datetime.UTC),
        "day": datetime.date(2026, 11, 25),
        "price": decimal.Decimal("1.10"),
    },
    "an integer past 64 bits": {"big": 2**70},
}


@pytest.fixture(scope="module")
def providers() -> tuple[OrjsonProvider, DefaultJSONProvider]:
    app = Flask(__name__)
    return OrjsonProvider(app), DefaultJSONProvider(app)


@pytest.mark.parametrize("sample", SAMPLES)
def test_an_answer_means_what_flasks_encoder_said(
    providers: tuple[OrjsonProvider, DefaultJSONProvider], sample: str
) -> None:
    fast, default = providers
    encoded, expected = fast.dumps(SAMPLES[sample]), default.dumps(SAMPLES[sample])
    assert json.loads(encoded) == json.loads(expected)
    assert list(json.loads(encoded)) == list(json.loads(expected))  # the same key order


def test_what_neither_can_encode_fails_as_before(
    providers: tuple[OrjsonProvider, DefaultJSONProvider],
) -> None:
    fast, default = providers
    for provider in (fast, default):
        with pytest.raises(TypeError):
            provider.dumps({"set": {1, 2}})


def test_a_callers_own_options_are_kept(
    providers: tuple[OrjsonProvider, DefaultJSONProvider],
) -> None:
    fast, default = providers
    assert fast.dumps({"b": 1, "a": 2}, indent=2) == default.dumps({"b": 1, "a": 2}, indent=2)


def test_the_app_answers_with_it_and_problems_keep_their_bytes(pool: ConnectionPool) -> None:
    app = create_app(pool=pool)
    assert isinstance(app.json, OrjsonProvider)
    client = app.test_client()
    assert client.get("/livez").data == b'{"status":"ok"}'
    missing = client.get("/games/not-a-game")
    assert missing.content_type == "application/problem+json"
    problem = json.loads(missing.data)
    assert missing.data.decode() == json.dumps(problem, sort_keys=True)  # as Flask's default
