"""Fixtures for the web page's end-to-end tests: Debian's Chromium driven by Playwright.

Load them with ``pytest_plugins = ["api_fixtures", "web_fixtures"]``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import pytest
from api_client import LiveServer
from playwright.sync_api import Browser, sync_playwright
from web_support import CHROMIUM_ARGS, Watched, chromium_path


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def contexts(browser: Browser, live_server: LiveServer) -> Iterator[Callable[..., Watched]]:
    """``contexts(width=..., height=..., url=..., bypass_csp=...)`` opens a fresh browser
    context (its own storage: one person) on the live server (or ``url``); at the end of the
    test each must have seen no error. ``bypass_csp`` lets a test inject a checker (axe-core)."""
    opened: list[Watched] = []
    base_url = live_server.url

    def open_context(
        width: int = 1280, height: int = 900, url: str = base_url, bypass_csp: bool = False
    ) -> Watched:
        viewport = {"width": width, "height": height}
        context = browser.new_context(base_url=url, viewport=viewport, bypass_csp=bypass_csp)
        watched = Watched(context, url)
        opened.append(watched)
        return watched

    yield open_context
    errors = [error for watched in opened for error in watched.errors]
    for watched in opened:
        watched.context.close()
    # A stream cut when the test closes its page is not an error of the page.
    errors = [e for e in errors if not re.search(r"net::ERR_ABORTED|aborted", e)]
    assert errors == [], "the page reported errors"
