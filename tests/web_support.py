"""Helpers for the web page's end-to-end tests (fixtures: tests/web_fixtures.py).

Playwright's own browser download is never used: ``executable_path`` points at the system's
Chromium (``CARDROOM_CHROMIUM``, else ``chromium`` on PATH), which ``.ci/run`` installs.
Screenshots go to ``test-output/web/`` (``CARDROOM_TEST_OUTPUT`` overrides) for a reviewer.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import BrowserContext, ConsoleMessage, Page

# As the machine's probe found: without the background-networking flags Chromium keeps trying
# Google's hosts, which this closed network refuses.
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
OUTPUT = Path(os.environ.get("CARDROOM_TEST_OUTPUT", Path(__file__).parent.parent / "test-output"))
SHOTS = OUTPUT / "web"
TIMEOUT_MS = 20_000


def chromium_path() -> str:
    path = os.environ.get("CARDROOM_CHROMIUM") or shutil.which("chromium")
    if not path:
        pytest.fail(
            "no Chromium: install Debian's package (apt-get install chromium; .ci/run does) "
            "or set CARDROOM_CHROMIUM to a Chromium executable"
        )
    return path


class Watched:
    """A browser context whose pages report script errors, console errors and any request that
    leaves the service (assets must be local: no CDN)."""

    def __init__(self, context: BrowserContext, base_url: str) -> None:
        self.context = context
        self.host = urlsplit(base_url).netloc
        self.errors: list[str] = []
        self.allowed: set[int] = set()  # 5xx statuses a test causes on purpose
        context.on("page", self._watch)
        context.on("request", self._request)
        context.on("response", self._response)

    def _watch(self, page: Page) -> None:
        page.on("pageerror", lambda error: self.errors.append(f"script error: {error}"))
        page.on(
            "console",
            lambda msg: self.errors.append(f"console: {msg.text}") if _is_error(msg) else None,
        )

    def _response(self, response: object) -> None:
        status = response.status  # type: ignore[attr-defined]
        if status >= 500 and status not in self.allowed:
            self.errors.append(f"{status} from {response.url}")  # type: ignore[attr-defined]

    def _request(self, request: object) -> None:
        url = request.url  # type: ignore[attr-defined]
        if not url.startswith("data:") and urlsplit(url).netloc != self.host:
            self.errors.append(f"request outside the service: {url}")

    def new_page(self) -> Page:
        page = self.context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        return page


def screenshot(page: Page, name: str) -> Path:
    """A full-page screenshot under test-output/web/ (kept after the run for review)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def _is_error(message: ConsoleMessage) -> bool:
    # Chromium logs every 4xx answer as "Failed to load resource"; a refused move is a normal
    # answer the page shows in words (5xx answers are caught from the responses instead).
    return message.type == "error" and not message.text.startswith("Failed to load resource")
