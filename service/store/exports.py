"""Reading a game's export (JSON Lines, see domain/audit.py) from a file or from the service."""

from __future__ import annotations

import re
import urllib.request
from pathlib import Path

TIMEOUT = 30  # seconds
_GAME_URL = re.compile(r"^(https?://.+/games/[^/?#]+)/?(?:export)?/?$")


def export_url(url: str) -> str:
    """``http(s)://host/games/<id>`` (or its ``/export``) -> the export's URL."""
    match = _GAME_URL.match(url)
    if match is None:
        raise ValueError(f"{url} is not a game's URL (http(s)://host/games/<id>)")
    return match.group(1) + "/export"


def is_url(source: str) -> bool:
    return source.startswith(("http://", "https://"))


def read_export(source: str) -> str:
    """The export's text: ``source`` is a file, or a game's URL (fetched with GET .../export).
    Raises OSError (ValueError for a URL that names no game) when it cannot be read."""
    if not is_url(source):
        return Path(source).read_text(encoding="utf-8")
    request = urllib.request.Request(export_url(source), headers={"Accept": "application/x-ndjson"})
    with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
        return response.read().decode("utf-8")
