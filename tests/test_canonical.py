"""domain/canonical.py gives exactly the bytes of the ``rfc8785`` package (the hash chain and the
receipts must verify on data hashed and signed before it, and by anyone's JCS): over generated
JSON values (keys that the two sort orders disagree on, control characters, lone surrogates,
floats, integers past 2**53, subclasses) and over every event and receipt of random games."""

from __future__ import annotations

import enum
import json
import random
from collections import OrderedDict
from typing import Any

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from domain import canonical, chain, receipts
from domain.sequence.randomplay import play_random_game as random_sequence
from domain.sushigo.randomplay import play_random_game as random_sushi_go

# Every kind of character the two encoders might treat differently: control characters and the
# escaped ones, ASCII, the BMP below and above the surrogates, lone surrogates, and beyond U+FFFF
# (JCS sorts keys by UTF-16 code units: U+E000..U+FFFF sort after U+10000.. there).
CHARS = st.one_of(
    st.sampled_from('\x00\x01\x08\x09\x0a\x0c\x0d\x1f "\\/\x7f\u2028\u2029'),
    st.characters(max_codepoint=0x7F),
    st.characters(min_codepoint=0x80, max_codepoint=0xD7FF),
    st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
    st.characters(min_codepoint=0xE000, max_codepoint=0xFFFF),
    st.characters(min_codepoint=0x10000),
)
TEXT = st.text(CHARS, max_size=8)


class Colour(enum.IntEnum):
    RED = 1


class Kind(enum.StrEnum):
    NIGIRI = "nigiri"


SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1),
    st.integers(),  # past 2**53 too: JCS refuses them
    st.floats(),
    TEXT,
    st.sampled_from([Colour.RED, Kind.NIGIRI]),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.lists(inner, max_size=5).map(tuple),
        st.dictionaries(TEXT, inner, max_size=5),
        st.dictionaries(TEXT, inner, max_size=3).map(OrderedDict),
        st.dictionaries(st.integers(0, 3), inner, max_size=2),  # non-string keys: refused
    ),
    max_leaves=25,
)


def outcome(dumps: Any, value: Any) -> bytes | type[BaseException]:
    try:
        return bytes(dumps(value))
    except Exception as error:  # noqa: BLE001 - which error is part of what must agree
        return type(error)


@settings(max_examples=3000, deadline=None)
@given(VALUES)
def test_same_bytes_or_same_error_as_rfc8785(value: Any) -> None:
    assert outcome(canonical.dumps, value) == outcome(rfc8785.dumps, value)


@settings(max_examples=500, deadline=None)
@given(st.dictionaries(TEXT, st.integers(0, 9), min_size=2, max_size=6))
def test_keys_sorted_by_utf16_code_units(value: dict[str, int]) -> None:
    assert outcome(canonical.dumps, value) == outcome(rfc8785.dumps, value)


def test_the_orders_differ_where_jcs_says() -> None:
    """U+FF61 sorts before U+1F600 by code point, after it by UTF-16 (a surrogate pair)."""
    value = {"\uff61": 1, "\U0001f600": 2}
    assert canonical.dumps(value) == rfc8785.dumps(value) == '{"😀":2,"｡":1}'.encode()


@pytest.mark.parametrize("value", [2**53, -(2**53), 1.5, "\ud800", {1: 2}, {"a": float("nan")}])
def test_what_jcs_refuses_or_writes_its_own_way(value: Any) -> None:
    assert outcome(canonical.dumps, value) == outcome(rfc8785.dumps, value)


def random_games() -> list[tuple[str, list[Any]]]:
    games = []
    for number in range(12):
        rng = random.Random(number)
        players = 2 + number % 4
        edition = ("gamewright", "zoch")[number % 2]
        events, _, _ = random_sushi_go({"players": players, "edition": edition}, rng)
        games.append((f"00000000-0000-4000-8000-{number:012d}", events))
    for number in range(4):
        events, _ = random_sequence({"players": (2, 3, 4, 2)[number]}, random.Random(number))
        games.append((f"00000000-0000-4000-9000-{number:012d}", events))
    return games


def test_every_event_and_receipt_of_random_games() -> None:
    """The contents hashed by the chain (as decided, and as read back from JSON) and the
    receipts signed, of whole games of both games."""
    checked = 0
    for game_id, events in random_games():
        for version, event in enumerate(events, start=1):
            for data in (event.data, as_read_back(event.data)):
                record = {
                    "game_id": game_id,
                    "version": version,
                    "type": event.type,
                    "schema_version": event.schema_version,
                    "data": data,
                }
                content = chain.content(game_id, version, event.type, event.schema_version, data)
                assert content == rfc8785.dumps(record)
            receipt = {
                "format": receipts.FORMAT,
                "game_id": game_id,
                "version": version,
                "commitment": "ab" * 32,
                "kid": "kVz-3pYf0yvBm3u8qXjJ7Jp0qg8yqkJ6Xo9Yh3b1cEw",
            }
            assert receipts.signed_bytes(receipt) == rfc8785.dumps(receipt)
            checked += 1
    assert checked > 1000


def as_read_back(data: Any) -> Any:
    """``data`` as the store gives it back: parsed from JSON (lists, not tuples)."""
    return json.loads(json.dumps(data))
