"""Where a pick's server CPU goes: CPU per request of a few endpoints, one client, one worker.

``python -m bench.request_cpu [--requests N] [--games G] [--baseline DIR]`` creates a scratch
database on the server ``DATABASE_URL`` names (else the embedded one), runs ``cardroom serve``
(its defaults, as bench/http_bench.py runs it) with one gunicorn worker on it and reads the
server's CPU seconds (/proc) around:

- ``GET /livez``: Flask, gunicorn and the request hooks alone (no database);
- ``GET /healthz``: the same and one ``SELECT 1``;
- ``GET /games/{id}`` as a seat: a tail read and the view, dumped by its schema;
- ``POST /games/{id}/moves``: the picks of G whole 4-player games (decide, hash, append, receipt,
  the view), timed one by one.

``--baseline DIR``: a second server runs the code of the source tree ``DIR`` (say
``git archive <commit> | tar -x -C DIR``) on the same database, and every figure is measured on
both, interleaved in slices, so that the machine's moods fall on both alike.
Times under a noisy machine move; CPU seconds per request move much less.
"""

from __future__ import annotations

import argparse
import secrets
import subprocess
from dataclasses import dataclass, field

from bench import http_bench
from service.store import db

PLAYERS = 4
SLICES = 20  # each figure is taken in this many slices, alternating between the servers


@dataclass
class Server:
    """One ``cardroom serve`` under measurement, its client, and a game to read."""

    process: subprocess.Popen[bytes]
    client: http_bench.Client
    game: str = ""
    tokens: list[str] = field(default_factory=list)
    spent: dict[str, float] = field(default_factory=dict)  # CPU seconds per figure
    counts: dict[str, int] = field(default_factory=dict)

    def add(self, what: str, seconds: float, count: int) -> None:
        self.spent[what] = self.spent.get(what, 0.0) + seconds
        self.counts[what] = self.counts.get(what, 0) + count

    def ms_per_request(self) -> dict[str, float]:
        return {what: self.spent[what] * 1e3 / self.counts[what] for what in self.spent}


def _cpu_of(
    server: Server, what: str, client: http_bench.Client, path: str, token: str | None, count: int
) -> None:
    """Adds the server's CPU seconds for ``count`` GETs of ``path`` to ``what``."""
    before = http_bench.process_tree_cpu(server.process.pid)
    for _ in range(count):
        client.call("GET", path, token=token)
    server.add(what, http_bench.process_tree_cpu(server.process.pid) - before, count)


def _new_game(client: http_bench.Client) -> tuple[str, list[str]]:
    _, headers, _ = client.call("POST", "/games", {"game": "sushi-go", "players": PLAYERS})
    game = headers["Location"]
    tokens = [
        client.call("POST", f"{game}/players", {"name": f"p{i}"})[2]["token"]
        for i in range(PLAYERS)
    ]
    return game, tokens


def _play_game(server: Server, what: str) -> None:
    """One whole game; the server's CPU for its picks alone (each seat reads its view first)."""
    client, pid = server.client, server.process.pid
    game, tokens = _new_game(client)
    while True:
        for seat in range(PLAYERS):
            view = client.call("GET", game, token=tokens[seat])[2]
            if view["status"] == "over":
                return
            body = {"round": view["round"], "turn": view["turn"]}
            body["cards"] = view["you"]["hand"][:1]
            before = http_bench.process_tree_cpu(pid)
            client.call("POST", f"{game}/moves", body, tokens[seat])
            server.add(what, http_bench.process_tree_cpu(pid) - before, 1)


def _start(url: str, checkout: str | None) -> Server:
    port = http_bench.free_port()
    process = http_bench.start_server(url, port, workers=1, checkout=checkout)
    server = Server(process, http_bench.Client(f"http://127.0.0.1:{port}"))
    server.game, server.tokens = _new_game(server.client)
    return server


def _measure(servers: list[Server], requests: int, games: int) -> None:
    per_slice = max(1, requests // SLICES)
    for server in servers:  # warm-up: each path once, a game played
        for path in ("/livez", "/healthz"):
            server.client.call("GET", path)
        _play_game(server, "warm-up")
    for turn in range(SLICES):
        for server in servers[:: 1 if turn % 2 else -1]:  # neither always goes first
            game, token = server.game, server.tokens[0]
            for what, path, bearer in (
                ("GET /livez", "/livez", None),
                ("GET /healthz", "/healthz", None),
                ("GET /games/{id} (a seat's view)", game, token),
            ):
                _cpu_of(server, what, server.client, path, bearer, per_slice)
    for turn in range(games):
        for server in servers[:: 1 if turn % 2 else -1]:
            _play_game(server, "POST /games/{id}/moves")


def run(
    requests: int = 2000, games: int = 6, baseline: str | None = None
) -> dict[str, dict[str, float]]:
    """Server CPU ms per request by figure, for ``"this"`` checkout (and ``"baseline"``)."""
    admin = db.database_url()
    name = f"cardroom_bench_{secrets.token_hex(4)}"
    url = db.ensure_database(admin, name)
    servers: dict[str, Server] = {}
    try:
        db.migrate(url)
        servers["this"] = _start(url, None)
        if baseline is not None:
            servers["baseline"] = _start(url, baseline)
        _measure(list(servers.values()), requests, games)
        results = {label: server.ms_per_request() for label, server in servers.items()}
        for figures in results.values():
            figures.pop("warm-up", None)
        return results
    finally:
        for server in servers.values():
            server.process.terminate()
            server.process.wait(timeout=30)
        db.drop_database(admin, name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=2000, help="requests per GET endpoint")
    parser.add_argument("--games", type=int, default=6, help="whole games for the picks")
    parser.add_argument("--baseline", metavar="DIR", help="a source tree to compare with")
    args = parser.parse_args()
    results = run(args.requests, args.games, args.baseline)
    print(f"server: one worker, {http_bench.SERVER}")
    this = results["this"]
    base = results.get("baseline")
    for what, ms in this.items():
        line = f"{what:<34} server CPU {ms:6.3f} ms per request"
        if base is not None:
            line += f"  (baseline {base[what]:6.3f} ms: {ms / base[what] - 1:+.0%})"
        print(line)


if __name__ == "__main__":
    main()
