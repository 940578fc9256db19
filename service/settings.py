"""Every setting of the service, read from the environment and validated in one place.

``settings()`` follows the environment as it is at each call (tests change it on the fly); a bad
value raises ``SettingsError`` whose message names the variable, the value and what it must be,
on one line (``cardroom`` prints it and exits). The README's settings table lists these fields;
tests/test_settings.py checks that it does.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

# Names the environment uses; those without the CARDROOM_ prefix are conventions of their own.
_UNPREFIXED = {"database_url": "DATABASE_URL", "web_concurrency": "WEB_CONCURRENCY"}


class SettingsError(ValueError):
    """A setting is invalid; the message is one line naming the variable."""


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="CARDROOM_", extra="ignore", frozen=True)

    database_url: str | None = Field(
        None,
        validation_alias="DATABASE_URL",
        description="PostgreSQL URL (the owner: it migrates); unset: the embedded server",
    )
    data_dir: Path = Field(
        Path("data/postgres"), description="the embedded PostgreSQL's files (no DATABASE_URL)"
    )
    app_role: str | None = Field(
        None,
        description="role the workers connect as (default cardroom_app, unless DATABASE_URL "
        "names a user); empty: the owner's URL",
    )
    pool_max: int = Field(10, ge=1, description="database connections per worker process")
    pool_timeout: float = Field(5.0, gt=0, description="seconds a request waits for a connection")
    down_timeout: float = Field(
        0.05, ge=0, description="the same wait while the database is known to be down (then 503)"
    )
    connect_timeout: int = Field(3, ge=1, description="seconds a connection attempt may take")
    statement_timeout: float = Field(
        5.0, gt=0, description="seconds a statement may run before PostgreSQL cancels it (503)"
    )
    lock_timeout: float = Field(
        3.0, gt=0, description="seconds a statement may wait for a lock (then cancelled: 503)"
    )
    idle_in_transaction_timeout: float = Field(
        10.0, gt=0, description="seconds a transaction may stay idle before its session ends"
    )
    stream_seconds: float = Field(
        300.0, gt=0, description="the longest an event stream lives before its client reconnects"
    )
    streams_per_address: int = Field(
        32,
        ge=0,
        description="open event streams and waiting long polls per client address and process "
        "(then 429 too_many_streams); 0: no cap",
    )
    header_timeout: float = Field(
        5.0, gt=0, description="seconds a request line and headers may take to arrive"
    )
    body_timeout: float = Field(
        10.0, gt=0, description="seconds a request body may take to arrive (then 408)"
    )
    send_timeout: float = Field(
        30.0, gt=0, description="seconds a stream's client may read nothing before it is closed"
    )
    stream_buffer: int = Field(
        64 * 1024, ge=1, description="bytes of a stream's socket send buffer"
    )
    worker_connections: int = Field(
        10_000, ge=1, description="open connections per server process (gevent)"
    )
    idempotency_ttl: float = Field(
        24 * 3600.0, gt=0, description="seconds an Idempotency-Key's stored response is kept"
    )
    clock_interval: float = Field(
        1.0, ge=0, description="seconds between the turn clock's sweeps per process; 0: none"
    )
    stall_seconds: int = Field(
        3600,
        ge=1,
        description="seconds a started game's turn waits for a seat before the greedy bot takes"
        " the seat over (`seat_taken_over`, `by: stalled`)",
    )
    fill_seconds: int = Field(
        24 * 3600,
        ge=1,
        description="seconds a waiting game waits for its seats to fill before it is cancelled"
        " (`game_cancelled`)",
    )
    rate_limits: Literal["on", "off"] = Field("on", description="rate limits on or off")
    rate_limit_create: str = Field("30/minute", description="POST /games per client address")
    rate_limit_join: str = Field(
        "60/minute", description="POST /games/{id}/players per client address"
    )
    rate_limit_join_game: str = Field(
        "12/minute", description="POST /games/{id}/players per client address and game"
    )
    rate_limit_moves: str = Field(
        "300/minute", description="POST /games/{id}/moves per bearer token"
    )
    waiting_games_per_address: int = Field(
        10, ge=0, description="games not yet started one address may hold seats in; 0: no cap"
    )
    cors_origins: str = Field("", description="comma-separated origins allowed by CORS")
    log_format: Literal["text", "json"] = Field(
        "text", description="`text` for people, `json` (one object a line) for log collectors"
    )
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        "INFO", description="the lowest level logged"
    )
    fault_injection: bool = Field(
        False, description="tests only: requests may ask for a crash or a drop (X-Cardroom-Fault)"
    )
    web_concurrency: int | None = Field(
        None,
        ge=1,
        validation_alias="WEB_CONCURRENCY",
        description="gunicorn worker processes (default: cores + 1)",
    )

    @field_validator("rate_limits", "log_format", "log_level", mode="before")
    @classmethod
    def _case_insensitive(cls, value: object, info: object) -> object:
        if not isinstance(value, str):
            return value
        return value.upper() if getattr(info, "field_name", "") == "log_level" else value.lower()

    @field_validator(
        "rate_limit_create", "rate_limit_join", "rate_limit_join_game", "rate_limit_moves"
    )
    @classmethod
    def _rate(cls, value: str) -> str:
        from limits import parse_many

        try:
            parse_many(value)
        except ValueError:
            raise ValueError("must be a rate like 30/minute or 10/minute;100/hour") from None
        return value


def env_name(field: str) -> str:
    """The environment variable of ``field``."""
    return _UNPREFIXED.get(field) or f"CARDROOM_{field.upper()}"


def settings() -> Settings:
    """The settings as the environment gives them now. Built once per state of the variables
    they read: building them costs about a millisecond, and every request asks (the fault
    points, service/faults.py), which made a fifth of a busy worker's time. Whether the
    environment changed at all is one comparison of ``os.environ``'s own table with a copy:
    picking the variables out of it, every one decoded, cost 50-140 µs a call (a keyed
    request's receipt lifetime asks)."""
    global _last
    raw = os.environ._data  # type: ignore[attr-defined]  # the variables, as os keeps them
    last = _last
    if last is not None and last[0] == raw:
        return last[1]
    current = _settings(_environment())
    _last = (dict(raw), current)
    return current


_last: tuple[dict[Any, Any], Settings] | None = None  # the environment last seen, its settings


_ENVIRONMENT_NAMES = {name.upper() for name in _UNPREFIXED.values()}


def _environment() -> frozenset[tuple[str, str]]:
    """The variables Settings reads (pydantic-settings matches names in any case)."""
    return frozenset(
        (name, value)
        for name, value in os.environ.items()
        if name.upper().startswith("CARDROOM_") or name.upper() in _ENVIRONMENT_NAMES
    )


@functools.lru_cache(maxsize=16)
def _settings(environment: frozenset[tuple[str, str]]) -> Settings:
    try:
        return Settings()
    except ValidationError as error:
        raise SettingsError(_one_line(error)) from None


def _one_line(error: ValidationError) -> str:
    problems = []
    for item in error.errors():
        field = str(item["loc"][0]) if item["loc"] else ""
        name = env_name(field) if field in Settings.model_fields else field
        message = item["msg"].removeprefix("Value error, ")
        problems.append(f"{name}={item.get('input')!r}: {message}")
    return "invalid setting " + "; ".join(problems)
