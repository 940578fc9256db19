"""The web page's load, measured in Chromium: the lobby and a game page (first render, requests,
bytes over the wire) and the requests one pick costs the page that makes it.

``python -m bench.web_load URL [--root DIR] [--repeats N] [--json]``

``URL`` is a migrated scratch database (the benchmark writes games). The server is ``cardroom
serve`` (gunicorn, one worker, four threads) run from ``--root`` (default: this checkout), so a
baseline is measured the same way from another checkout of the code, e.g. ``git archive`` of the
base commit unpacked in /tmp. Each figure is the median of ``--repeats`` fresh browser contexts
(an empty cache: a first visit).

- first render: from navigation start until the lobby lists its open games / the game page shows
  the player's hand (CPU on this shared machine is noisy: compare within one run).
- requests and bytes: every request the page made until then; bytes are the encoded sizes as
  received (``transferSize`` of the Resource Timing entries, headers included).
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

from playwright.sync_api import Page, sync_playwright

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


def _first_render(page: Page, path: str, selector: str) -> dict[str, float]:
    started = time.perf_counter()
    page.goto(path)
    page.wait_for_selector(selector)
    elapsed = (time.perf_counter() - started) * 1000
    requests, transferred = _transferred(page)
    return {"render_ms": elapsed, "requests": requests, "bytes": transferred}


def _one_pick(page: Page) -> int:
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url))
    before = page.get_attribute("#game", "data-version")
    page.locator("#hand button.pickable").first.click()
    page.click("#pick")
    page.wait_for_selector(f"#game:not([data-version='{before}']) #hand button.pickable")
    page.wait_for_timeout(500)  # late refreshes of this burst still count
    return len([u for u in asked if "/stream" not in u])


def measure(base: str, repeats: int) -> dict[str, Any]:
    samples: dict[str, list[float]] = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS
        )
        for _ in range(repeats):
            game = post(
                base,
                "/games",
                {"game": "sushi-go", "players": 2, "bots": [{"seat": 1, "kind": "greedy"}]},
            )
            grant = post(base, f"/games/{game['game_id']}/players", {"name": "Bench"})
            seat = {
                game["game_id"]: {"seat": grant["seat"], "name": "Bench", "token": grant["token"]}
            }
            for kind, path, selector in [
                ("lobby", "/", "#games-playing li[data-game]"),
                ("game", f"/#/game/{game['game_id']}", "#hand button.pickable"),
            ]:
                context = browser.new_context(base_url=base)
                context.add_init_script(
                    f"localStorage.setItem('cardroom.seats', {json.dumps(json.dumps(seat))})"
                )
                page = context.new_page()
                for key, value in _first_render(page, path, selector).items():
                    samples.setdefault(f"{kind}_{key}", []).append(value)
                if kind == "game":
                    samples.setdefault("requests_per_pick", []).append(_one_pick(page))
                context.close()
        browser.close()
    return {key: statistics.median(values) for key, values in samples.items()}


def run(url: str, root: Path = ROOT, repeats: int = 5) -> dict[str, Any]:
    port = free_port()
    server = start_server(url, root, port)
    try:
        return measure(f"http://127.0.0.1:{port}", repeats)
    finally:
        server.terminate()
        server.wait(timeout=30)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("url", help="a migrated scratch database (the benchmark writes games)")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to serve")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    figures = run(args.url, args.root.resolve(), args.repeats)
    if args.json:
        print(json.dumps(figures))
    else:
        for key, value in figures.items():
            print(f"{key:>22}: {value:,.0f}")


if __name__ == "__main__":
    main()
