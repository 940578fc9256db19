"""Where a pick's server CPU goes: CPU per request of a few endpoints, one client, one worker.

``python -m bench.request_cpu [--requests N] [--games G]`` creates a scratch database on the
server ``DATABASE_URL`` names (else the embedded one), runs ``cardroom serve`` with one gunicorn
worker on it and reads the server's CPU seconds (/proc, as bench/http_bench.py does) around:

- ``GET /livez``: Flask, gunicorn and the request hooks alone (no database);
- ``GET /healthz``: the same and one ``SELECT 1``;
- ``GET /games/{id}`` as a seat: a tail read and the view, dumped by its schema;
- ``POST /games/{id}/moves``: the picks of G whole 4-player games (decide, hash, append, receipt,
  the view), timed one by one.

Times under a noisy machine move; CPU seconds per request move much less.
"""

from __future__ import annotations

import argparse
import secrets
from collections.abc import Callable

from bench import http_bench
from service.store import db

PLAYERS = 4


def _cpu_of(server_pid: int, call: Callable[[], object], count: int) -> float:
    """Server CPU milliseconds per call of ``call`` (after one warm-up call)."""
    call()
    before = http_bench.process_tree_cpu(server_pid)
    for _ in range(count):
        call()
    return (http_bench.process_tree_cpu(server_pid) - before) * 1e3 / count


def _new_game(client: http_bench.Client) -> tuple[str, list[str]]:
    _, headers, _ = client.call("POST", "/games", {"game": "sushi-go", "players": PLAYERS})
    game = headers["Location"]
    tokens = [
        client.call("POST", f"{game}/players", {"name": f"p{i}"})[2]["token"]
        for i in range(PLAYERS)
    ]
    return game, tokens


def _pick_cpu(server_pid: int, client: http_bench.Client, games: int) -> float:
    """Server CPU milliseconds per pick, the picks alone (each seat reads its view first)."""
    spent, picks = 0.0, 0
    for _ in range(games):
        game, tokens = _new_game(client)
        over = False
        while not over:
            for seat in range(PLAYERS):
                view = client.call("GET", game, token=tokens[seat])[2]
                if view["status"] == "over":
                    over = True
                    break
                body = {"round": view["round"], "turn": view["turn"]}
                body["cards"] = view["you"]["hand"][:1]
                before = http_bench.process_tree_cpu(server_pid)
                client.call("POST", f"{game}/moves", body, tokens[seat])
                spent += http_bench.process_tree_cpu(server_pid) - before
                picks += 1
    return spent * 1e3 / picks


def run(requests: int = 300, games: int = 3) -> dict[str, float]:
    admin = db.database_url()
    name = f"cardroom_bench_{secrets.token_hex(4)}"
    url = db.ensure_database(admin, name)
    try:
        db.migrate(url)
        port = http_bench.free_port()
        server = http_bench.start_server(url, port, workers=1, threads=1)
        try:
            client = http_bench.Client(f"http://127.0.0.1:{port}")
            game, tokens = _new_game(client)

            def view() -> object:
                return client.call("GET", game, token=tokens[0])

            return {
                "GET /livez": _cpu_of(server.pid, lambda: client.call("GET", "/livez"), requests),
                "GET /healthz": _cpu_of(
                    server.pid, lambda: client.call("GET", "/healthz"), requests
                ),
                "GET /games/{id} (a seat's view)": _cpu_of(server.pid, view, requests),
                "POST /games/{id}/moves": _pick_cpu(server.pid, client, games),
            }
        finally:
            server.terminate()
            server.wait(timeout=30)
    finally:
        db.drop_database(admin, name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=300, help="requests per GET endpoint")
    parser.add_argument("--games", type=int, default=3, help="whole games for the picks")
    args = parser.parse_args()
    for what, ms in run(args.requests, args.games).items():
        print(f"{what:<34} server CPU {ms:6.3f} ms per request")


if __name__ == "__main__":
    main()
