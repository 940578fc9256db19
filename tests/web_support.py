"""Helpers for the web page's end-to-end tests (fixtures: tests/web_fixtures.py).

Playwright's own browser download is never used: ``executable_path`` points at the system's
Chromium (``CARDROOM_CHROMIUM``, else ``chromium`` on PATH), which ``.ci/run`` installs.
Screenshots go to ``test-output/web/`` (``CARDROOM_TEST_OUTPUT`` overrides) for a reviewer.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from patience import scaled
from playwright.sync_api import BrowserContext, ConsoleMessage, Page, expect

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
TIMEOUT_MS = 20_000  # on an idle machine; scaled by its load (``timeout_ms``)
# axe-core (the accessibility checker) from the npm registry, installed once into a cache dir
# rather than vendored: its minified file is half a megabyte, and npm checks its integrity.
AXE_VERSION = "4.11.0"
AXE_CACHE = Path(
    os.environ.get("CARDROOM_AXE_CACHE", Path.home() / ".cache" / "cardroom" / "axe-core")
)


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
        waits = timeout_ms()
        page.set_default_timeout(waits)
        expect.set_options(timeout=waits)  # assertions too (Playwright's own default: 5 s)
        return page


def timeout_ms(base: int = TIMEOUT_MS) -> int:
    """How long a page's wait may take here and now: ``base`` on an idle machine, longer under
    load (the run's own workers, or other work on a shared machine: load average 5-10 on 2
    cores once timed out a lobby of 100 games, issue 39 item 14). Waits end when the page gets
    there, so a passing test is no slower; only a failing one takes longer to say so."""
    return int(scaled(base))


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


def axe_core() -> Path:
    """axe-core's browser script, from ``npm install axe-core@AXE_VERSION`` into ``AXE_CACHE``
    (installed in a scratch folder and moved into place: parallel test workers may race)."""
    home = AXE_CACHE / AXE_VERSION
    script = home / "node_modules" / "axe-core" / "axe.min.js"
    if script.is_file():
        return script
    npm = shutil.which("npm")
    if not npm:
        pytest.fail("the accessibility tests need npm (to install axe-core from its registry)")
    home.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(dir=home.parent))
    command = [npm, "install", "--no-save", "--no-audit", "--no-fund", "--prefix", str(scratch)]
    subprocess.run([*command, f"axe-core@{AXE_VERSION}"], check=True, timeout=300)
    try:
        scratch.rename(home)
    except OSError:  # another worker was first
        shutil.rmtree(scratch, ignore_errors=True)
    return script


def axe_violations(page: Page) -> list[dict[str, object]]:
    """axe-core's WCAG 2.x A/AA violations on the page as it is now (the page's context must
    bypass the CSP: the checker is a script the page itself would refuse)."""
    page.add_script_tag(path=str(axe_core()))
    return page.evaluate(
        """async () => {
          const result = await axe.run(document, {
            runOnly: {
              type: "tag",
              values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"],
            },
            resultTypes: ["violations"],
          });
          return result.violations.map((v) => ({
            id: v.id, impact: v.impact, help: v.help,
            nodes: v.nodes.slice(0, 5).map((n) => n.target.join(" ")),
          }));
        }"""
    )
