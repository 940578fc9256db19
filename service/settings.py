"""Every setting of the service, read from the environment and validated in one place.

``settings()`` follows the environment as it is at each call (tests change it on the fly); a bad
value raises ``SettingsError`` whose message names the variable, the value and what it must be,
on one line (``cardroom`` prints it and exits). The README's settings table lists these fields;
tests/test_settings.py checks that it does.
"""

from __future__ import annotations

import difflib
import functools
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

# Names the environment uses; those without the CARDROOM_ prefix are conventions of their own.
_UNPREFIXED = {"database_url": "DATABASE_URL", "web_concurrency": "WEB_CONCURRENCY"}


# Where rate limits may count (limits' storage schemes): one process, or Redis.
RATE_LIMIT_SCHEMES = ("memory", "redis", "rediss", "redis+sentinel", "redis+cluster")


class SettingsError(ValueError):
    """A setting is invalid; the message is one line naming the variable."""


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="CARDROOM_", extra="ignore", frozen=True)

    database_url: str | None = Field(
        None,
        validation_alias="DATABASE_URL",
        description="PostgreSQL URL: the owner's (it migrates) or the app role's (the database "
        "is migrated already); unset: the embedded server. `DATABASE_URL_FILE`: a file holding it",
    )
    hosts: int = Field(
        1,
        ge=1,
        description="hosts running `cardroom serve` on this database: hosts x workers x "
        "connections per worker must fit the server's max_connections (checked at start)",
    )
    data_dir: Path = Field(
        Path("data/postgres"), description="the embedded PostgreSQL's files (no DATABASE_URL)"
    )
    app_role: str | None = Field(
        None,
        description="role the workers connect as (default cardroom_app, whatever user "
        "DATABASE_URL names; its password from PGPASSFILE); empty: the owner's URL",
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
    request_budget: float = Field(
        5.0,
        gt=0,
        description="seconds a request may wait for the database in all (a connection, locks,"
        " statements, a synchronous standby) before it answers 503",
    )
    ready_timeout: float = Field(
        2.0, gt=0, description="seconds GET /readyz's probe write may take to commit (then 503)"
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
    live_interval: float = Field(
        0.05,
        gt=0,
        description="seconds between each process's polls of the log for appends (how soon a"
        " stream or long poll hears of one)",
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
    challenge_seconds: int = Field(
        600,
        ge=1,
        le=7 * 24 * 3600,
        description="seconds a challenge waits for its answer before it expires",
    )
    webhooks_insecure: bool = Field(
        False,
        description="development only: webhook URLs may be plain http:// and resolve to"
        " loopback or private addresses (/readyz names it when on)",
    )
    webhooks_deliver: bool = Field(
        True,
        description="each `cardroom serve` worker delivers webhooks (off: only `cardroom"
        " deliver` processes do)",
    )
    webhooks_timeout: float = Field(
        15.0, gt=0, le=60, description="seconds one webhook attempt may take (then it failed)"
    )
    webhooks_retry_schedule: str = Field(
        "5,300,1800,7200,18000,36000,50400,72000,86400",
        description="seconds before each retry of a failed webhook, after the first attempt"
        " (made at once); past the last, the message is given up",
    )
    webhooks_jitter: float = Field(
        0.1, ge=0, le=1, description="a retry's delay varies by up to this share, at random"
    )
    webhooks_disable_after: float = Field(
        5 * 24 * 3600.0,
        gt=0,
        description="seconds an endpoint may fail without one success before it is disabled",
    )
    webhooks_poll: float = Field(
        1.0,
        gt=0,
        description="seconds between a deliverer's looks for due retries (new events wake it"
        " at once)",
    )
    keys_check_seconds: float = Field(
        5.0,
        gt=0,
        description="seconds /readyz may reuse its check that this host's keys hold every key "
        "id the database has used",
    )
    rate_limits: Literal["on", "off"] = Field("on", description="rate limits on or off")
    rate_limit_create: str = Field("30/minute", description="POST /games per client address")
    rate_limit_accounts: str = Field("10/hour", description="POST /accounts per client address")
    rate_limit_join: str = Field(
        "60/minute", description="POST /games/{id}/players per client address"
    )
    rate_limit_join_game: str = Field(
        "12/minute", description="POST /games/{id}/players per client address and game"
    )
    rate_limit_moves: str = Field(
        "300/minute", description="POST /games/{id}/moves per bearer token"
    )
    rate_limit_storage: str = Field(
        "memory://",
        description="where rate limits count: `memory://` (each process alone: one worker"
        " only) or a Redis URI (`redis://host:6379/0`, shared by every process and host)",
    )
    trusted_proxies: str = Field(
        "",
        description="comma-separated addresses or CIDRs of reverse proxies whose"
        " X-Forwarded-For names the client; empty: the peer is the client",
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
        description="gunicorn worker processes (default: the CPUs this process may use, by its "
        "CPU quota and affinity, + 1)",
    )

    @field_validator("rate_limits", "log_format", "log_level", mode="before")
    @classmethod
    def _case_insensitive(cls, value: object, info: object) -> object:
        if not isinstance(value, str):
            return value
        return value.upper() if getattr(info, "field_name", "") == "log_level" else value.lower()

    @field_validator("app_role")
    @classmethod
    def _role_name(cls, value: str | None) -> str | None:
        # A PostgreSQL identifier as written unquoted (it becomes a URL's user name): anything
        # else is a typo or an injection, refused before a worker tries it on every request.
        if not value or re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$]*", value) and len(value) <= 63:
            return value
        raise ValueError(
            "must be a PostgreSQL role name: letters, digits, _ and $, starting with a letter"
            " or _, at most 63 characters (empty: the workers use DATABASE_URL's own user)"
        )

    @field_validator("database_url")
    @classmethod
    def _postgresql(cls, value: str | None) -> str | None:
        if value is None or _is_postgresql(value):
            return value
        scheme = value.partition("://")[0] if "://" in value else "none"
        raise ValueError(
            f"must be a PostgreSQL URL (postgresql://user@host:5432/db) or libpq key=value"
            f" settings; its scheme is {scheme[:20]!r}"
        )

    @field_validator(
        "rate_limit_create",
        "rate_limit_accounts",
        "rate_limit_join",
        "rate_limit_join_game",
        "rate_limit_moves",
    )
    @classmethod
    def _rate(cls, value: str) -> str:
        from limits import parse_many

        try:
            parse_many(value)
        except ValueError:
            raise ValueError("must be a rate like 30/minute or 10/minute;100/hour") from None
        return value

    @field_validator("rate_limit_storage")
    @classmethod
    def _storage(cls, value: str) -> str:
        scheme = value.partition("://")[0]
        if "://" not in value or scheme not in RATE_LIMIT_SCHEMES:
            raise ValueError(f"must be a URI of one of {', '.join(RATE_LIMIT_SCHEMES)}")
        return value

    @field_validator("webhooks_retry_schedule")
    @classmethod
    def _schedule(cls, value: str) -> str:
        try:
            delays = [float(part) for part in value.split(",") if part.strip()]
        except ValueError:
            delays = [-1.0]
        if not delays or any(not 0 <= d <= 7 * 24 * 3600 for d in delays):
            raise ValueError("must be comma-separated seconds, each from 0 to 604800 (5,300,1800)")
        return value

    @field_validator("trusted_proxies")
    @classmethod
    def _networks(cls, value: str) -> str:
        import ipaddress

        for part in filter(None, (p.strip() for p in value.split(","))):
            try:
                ipaddress.ip_network(part, strict=False)
            except ValueError:
                raise ValueError(f"{part!r} is not an address or CIDR (10.0.0.0/8)") from None
        return value


def _is_postgresql(url: str) -> bool:
    if "://" in url:
        return url.split("://", 1)[0].lower() in ("postgresql", "postgres")
    return "=" in url  # libpq's key=value form


# Secrets may come from files (Docker and Kubernetes secrets), never only from inline values:
# ``<NAME>_FILE`` names a file whose content (without its final newline) is the value.
SECRET_FILES = {"database_url": "DATABASE_URL_FILE"}
# Variables of the project's tools, not of the service: the start does not refuse them.
_TOOLS = ("CARDROOM_BENCH_", "CARDROOM_TEST_")
_TOOL_NAMES = {
    "CARDROOM_CHROMIUM",
    "CARDROOM_AXE_CACHE",
    "CARDROOM_PG_BIN",
    "CARDROOM_PROPERTY_SCALE",
    "CARDROOM_APP_PASSWORD_FILE",  # the database container's init script (deploy/)
}
# The keys' variables (service/keys.py): read there, never echoed (CARDROOM_KEYS is a secret).
KEYS_NAMES = {"CARDROOM_KEYS", "CARDROOM_KEYS_FILE"}


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


_ENVIRONMENT_NAMES = {name.upper() for name in (*_UNPREFIXED.values(), *SECRET_FILES.values())}
SECRET_FIELDS = {"database_url"}  # never echoed in an error: a URL may carry a password


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
        return Settings(**_from_files(dict(environment)))
    except ValidationError as error:
        raise SettingsError(_one_line(error)) from None


def _from_files(environment: dict[str, str]) -> dict[str, Any]:
    """The values of ``SECRET_FILES`` read from their files, by the names Settings takes."""
    values: dict[str, Any] = {}
    for field, variable in SECRET_FILES.items():
        path = environment.get(variable)
        if not path:
            continue
        if environment.get(env_name(field)):
            raise SettingsError(f"set {env_name(field)} or {variable}, not both")
        try:
            values[env_name(field)] = Path(path).read_text(encoding="utf-8").rstrip("\r\n")
        except OSError as exc:
            raise SettingsError(f"{variable}={path!r}: cannot read it: {exc.strerror}") from None
    return values


def known_names() -> set[str]:
    """Every CARDROOM_ variable the service (or one of the project's tools) reads."""
    fields = {env_name(field) for field in Settings.model_fields}
    return fields | set(SECRET_FILES.values()) | KEYS_NAMES | _TOOL_NAMES


def check_environment(environ: Mapping[str, str] | None = None) -> None:
    """Refuse unknown ``CARDROOM_*`` variables (a misspelt setting would be silently ignored),
    naming each with the nearest known name."""
    known = known_names()
    unknown = sorted(
        name.upper()
        for name in (os.environ if environ is None else environ)
        if name.upper().startswith("CARDROOM_")
        and name.upper() not in known
        and not name.upper().startswith(_TOOLS)
    )
    if not unknown:
        return
    described = []
    for name in unknown:
        near = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
        described.append(f"{name} (did you mean {near[0]}?)" if near else name)
    raise SettingsError(
        f"unknown setting {', '.join(described)}: the README's settings table lists them all"
    )


def _one_line(error: ValidationError) -> str:
    problems = []
    for item in error.errors():
        field = str(item["loc"][0]) if item["loc"] else ""
        name = env_name(field) if field in Settings.model_fields else field
        message = item["msg"].removeprefix("Value error, ")
        secret = field in SECRET_FIELDS or name in {env_name(f) for f in SECRET_FIELDS}
        shown = "<hidden>" if secret else repr(item.get("input"))
        problems.append(f"{name}={shown}: {message}")
    return "invalid setting " + "; ".join(problems)
