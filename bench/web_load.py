"""The web page's load, measured in Chromium: the lobby and a game page (first render, requests,
bytes over the wire) and the requests one pick costs the page that makes it.

``python -m bench.web_load URL [--root DIR] [--against DIR] [--repeats N] [--json]``

``URL`` is a migrated scratch database (the benchmark writes games). The server is ``cardroom
serve`` (gunicorn, one worker, four threads) run from ``--root`` (default: this checkout), so a
baseline is measured the same way from another checkout of the code, e.g. ``git archive`` of the
base commit unpacked in /tmp; ``--against DIR`` serves that one too and visits both in turn
within one run (the machine's load then weighs on both alike), printing both and their ratio.
Each figure is the median of ``--repeats`` fresh browser contexts
(an empty cache: a first visit).

- first render: from navigation start until the lobby lists its open games / the game page shows
  the player's hand (CPU on this shared machine is noisy: compare within one run). ``render_ms``
  is timed from the test driver (it includes its round trips to the browser); ``painted_ms`` in
  the page, by a MutationObserver, from the page's own navigation start.
- requests and bytes: every request the page made until then; bytes are the encoded sizes as
  received (``transferSize`` of the Resource Timing entries, headers included).
- game again: the game page reloaded after its first visit (warm cache; the page may know
  the game by then).
- requests per pick: what the picking page asks for after clicking Pick until the game's next
  turn is on the screen (the opponent is a bot).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, Page, sync_playwright

from bench.http_bench import free_port

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run"]
CHROMIUM_ARGS += ["--disable-background-networking", "--disable-component-update"]


def start_server(url: str, root: Path, port: int) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "DATABASE_URL": url,
        "CARDROOM_RATE_LIMITS": "off",
        "PYTHONPATH": str(root),
    }
    command = [sys.executable, "-m", "service.cli.main", "serve", "--port", str(port)]
    command += ["--workers", "1", "--threads", "4", "--no-access-log"]
    server = subprocess.Popen(command, env=env, cwd=root, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1):
                return server
        except OSError:
            time.sleep(0.1)
    server.kill()
    raise RuntimeError("the server did not start within 60 s")


def post(base: str, path: str, body: dict[str, Any]) -> Any:
    request = urllib.request.Request(
        base + path, json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.load(answer)


RESOURCES = (
    "performance.getEntriesByType('resource').concat(performance.getEntriesByType('navigation'))"
)


def _transferred(page: Page) -> tuple[int, int]:
    entries = page.evaluate(f"{RESOURCES}.map((e) => e.transferSize)")
    return len(entries), sum(entries)


def _watch_for(selector: str) -> str:
    """An init script: the page's own clock when ``selector`` first matches (no driver lag)."""
    return f"""new MutationObserver((changes, observer) => {{
      if (document.querySelector({json.dumps(selector)})) {{
        window.__firstRender = performance.now();
        observer.disconnect();
      }}
    }}).observe(document, {{ childList: true, subtree: true }});"""


def _first_render(page: Page, path: str, selector: str) -> dict[str, float]:
    started = time.perf_counter()
    page.goto(path)
    page.wait_for_selector(selector)
    elapsed = (time.perf_counter() - started) * 1000
    requests, transferred = _transferred(page)
    painted = page.evaluate("window.__firstRender")
    return {"render_ms": elapsed, "painted_ms": painted, "requests": requests, "bytes": transferred}


def _reload_render(page: Page, selector: str) -> dict[str, float]:
    """The same page again (a reload: the browser's cache and storage as the first visit left
    them)."""
    started = time.perf_counter()
    page.reload()
    page.wait_for_selector(selector)
    elapsed = (time.perf_counter() - started) * 1000
    requests, transferred = _transferred(page)
    painted = page.evaluate("window.__firstRender")
    return {"render_ms": elapsed, "painted_ms": painted, "requests": requests, "bytes": transferred}


def _one_pick(page: Page) -> int:
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url))
    before = page.get_attribute("#game", "data-version")
    page.locator("#hand button.pickable").first.click()
    page.click("#pick")
    page.wait_for_selector(f"#game:not([data-version='{before}']) #hand button.pickable")
    page.wait_for_timeout(500)  # late refreshes of this burst still count
    return len([u for u in asked if "/stream" not in u])


def _sample(browser: Browser, base: str, samples: dict[str, list[float]]) -> None:
    """One first visit of the lobby and of a new game's page (and one pick there)."""
    game = post(
        base,
        "/games",
        {"game": "sushi-go", "players": 2, "bots": [{"seat": 1, "kind": "greedy"}]},
    )
    grant = post(base, f"/games/{game['game_id']}/players", {"name": "Bench"})
    seat = {game["game_id"]: {"seat": grant["seat"], "name": "Bench", "token": grant["token"]}}
    for kind, path, selector in [
        ("lobby", "/", "#games-playing li[data-game]"),
        ("game", f"/#/game/{game['game_id']}", "#hand button.pickable"),
    ]:
        context = browser.new_context(base_url=base)
        context.add_init_script(
            f"localStorage.setItem('cardroom.seats', {json.dumps(json.dumps(seat))})"
        )
        context.add_init_script(_watch_for(selector))
        page = context.new_page()
        for key, value in _first_render(page, path, selector).items():
            samples.setdefault(f"{kind}_{key}", []).append(value)
        if kind == "game":
            for key, value in _reload_render(page, selector).items():
                samples.setdefault(f"game_again_{key}", []).append(value)
            samples.setdefault("requests_per_pick", []).append(_one_pick(page))
        context.close()


def measure(bases: list[str], repeats: int) -> list[dict[str, Any]]:
    """The medians for each server in ``bases``, visited in turn at each repeat (so that the
    machine's load varies alike for all of them)."""
    samples: list[dict[str, list[float]]] = [{} for _ in bases]
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS
        )
        for _ in range(repeats):
            for base, taken in zip(bases, samples, strict=True):
                _sample(browser, base, taken)
        browser.close()
    return [{key: statistics.median(values) for key, values in s.items()} for s in samples]


def run(url: str, roots: list[Path], repeats: int = 5) -> list[dict[str, Any]]:
    servers = []
    try:
        for root in roots:
            port = free_port()
            servers.append((start_server(url, root, port), f"http://127.0.0.1:{port}"))
        return measure([base for _, base in servers], repeats)
    finally:
        for server, _ in servers:
            server.terminate()
            server.wait(timeout=30)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("url", help="a migrated scratch database (the benchmark writes games)")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to serve")
    parser.add_argument(
        "--against",
        type=Path,
        help="another checkout (e.g. the base commit's), measured in the same run, in turn",
    )
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    roots = [args.root.resolve()] + ([args.against.resolve()] if args.against else [])
    figures = run(args.url, roots, args.repeats)
    if args.json:
        print(json.dumps(figures[0] if len(figures) == 1 else figures))
    elif len(figures) == 1:
        for key, value in figures[0].items():
            print(f"{key:>22}: {value:,.0f}")
    else:
        print(f"{'':>22}  {'--against':>10}  {'--root':>10}  ratio")
        for key, value in figures[0].items():
            other = figures[1][key]
            ratio = f"{value / other:.2f}" if other else "-"
            print(f"{key:>22}  {other:>10,.0f}  {value:>10,.0f}  {ratio}")


if __name__ == "__main__":
    main()
