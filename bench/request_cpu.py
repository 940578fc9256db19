"""Server CPU per request, one client, one worker, against a bare Flask app (issue 32, goal 1).

``python -m bench.request_cpu [--requests N] [--games G] [--baseline DIR]`` creates a scratch
database on the server ``DATABASE_URL`` names (else the embedded one), runs ``cardroom serve``
(its defaults, as bench/http_bench.py runs it: rate limits and the access log on) with one
gunicorn worker on it, and bench/bare_flask.py's app (one route, a small JSON object) with one
gunicorn gevent worker beside it, and reads each server's CPU seconds (/proc) around:

- ``GET /hello`` of the bare Flask app: the yardstick;
- ``GET /livez``: Flask, gunicorn and the request hooks alone (no database);
- ``GET /healthz``: the same and one ``SELECT 1``;
- ``GET /games/{id}`` as a seat: the view, dumped by its schema;
- ``POST /games/{id}/moves`` with an ``Idempotency-Key`` (as the client guide tells clients),
  the picks of G whole 4-player games (decide, hash, append, receipt, the view), each timed
  alone; and without a key, the picks of G/2 games.

``--baseline DIR``: a third server runs the code of the source tree ``DIR`` (say
``git archive <commit> | tar -x -C DIR``) on a database of its own, migrated by that code.
Every figure is taken in slices alternating between the servers, so that the machine's moods
fall on all alike. Times under a noisy machine move; CPU seconds per request move much less.
"""

from __future__ import annotations

import argparse
import secrets
import subprocess
import uuid
from dataclasses import dataclass, field

from bench import bare_flask, http_bench
from service.store import db

PLAYERS = 4
SLICES = 20  # each figure is taken in this many slices, alternating between the servers
BARE = "GET /hello (bare Flask)"
LIVEZ = "GET /livez"
HEALTHZ = "GET /healthz"
VIEW = "GET /games/{id} (a seat's view)"
KEYED_PICK = "POST /games/{id}/moves (Idempotency-Key)"
PICK = "POST /games/{id}/moves (no key)"


@dataclass
class Server:
    """One server under measurement, its client, and a game to read (none for the bare app)."""

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


def _cpu_of(server: Server, what: str, path: str, token: str | None, count: int) -> None:
    """Adds the server's CPU seconds for ``count`` GETs of ``path`` to ``what``."""
    before = http_bench.process_tree_cpu(server.process.pid)
    for _ in range(count):
        server.client.call("GET", path, token=token)
    server.add(what, http_bench.process_tree_cpu(server.process.pid) - before, count)


def _new_game(client: http_bench.Client) -> tuple[str, list[str]]:
    _, headers, _ = client.call("POST", "/games", {"game": "sushi-go", "players": PLAYERS})
    game = headers["Location"]
    tokens = [
        client.call("POST", f"{game}/players", {"name": f"p{i}"})[2]["token"]
        for i in range(PLAYERS)
    ]
    return game, tokens


def _play_game(server: Server, what: str, keyed: bool) -> None:
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
            extra = {"Idempotency-Key": str(uuid.uuid4())} if keyed else None
            before = http_bench.process_tree_cpu(pid)
            status = client.call("POST", f"{game}/moves", body, tokens[seat], extra)[0]
            server.add(what, http_bench.process_tree_cpu(pid) - before, 1)
            if status != 200:
                raise RuntimeError(f"a pick was answered {status}")


def _start(url: str, checkout: str | None) -> Server:
    port = http_bench.free_port()
    process = http_bench.start_server(url, port, workers=1, checkout=checkout)
    server = Server(process, http_bench.Client(f"http://127.0.0.1:{port}"))
    server.game, server.tokens = _new_game(server.client)
    return server


def _start_bare() -> Server:
    port = http_bench.free_port()
    return Server(bare_flask.start(port), http_bench.Client(f"http://127.0.0.1:{port}"))


def _measure(bare: Server, servers: list[Server], requests: int, games: int) -> None:
    per_slice = max(1, requests // SLICES)
    bare.client.call("GET", bare_flask.PATH)
    for server in servers:  # warm-up: each path once, a game played
        for path in ("/livez", "/healthz"):
            server.client.call("GET", path)
        _play_game(server, "warm-up", keyed=True)
    everyone = [bare, *servers]
    for turn in range(SLICES):
        for server in everyone[:: 1 if turn % 2 else -1]:  # none always goes first
            if server is bare:
                _cpu_of(bare, BARE, bare_flask.PATH, None, per_slice)
                continue
            game, token = server.game, server.tokens[0]
            for what, path, bearer in (
                (LIVEZ, "/livez", None),
                (HEALTHZ, "/healthz", None),
                (VIEW, game, token),
            ):
                _cpu_of(server, what, path, bearer, per_slice)
    for turn in range(games + games // 2):
        keyed = turn % 3 != 2  # two games with a key, then one without
        for server in servers[:: 1 if turn % 2 else -1]:
            _play_game(server, KEYED_PICK if keyed else PICK, keyed)
        _cpu_of(bare, BARE, bare_flask.PATH, None, per_slice)  # the yardstick meanwhile too


def run(
    requests: int = 2000, games: int = 4, baseline: str | None = None
) -> dict[str, dict[str, float]]:
    """Server CPU ms per request by figure, for ``"this"`` checkout, the ``"bare"`` Flask app
    (its one figure, ``BARE``), and the ``"baseline"`` tree if given."""
    admin = db.database_url()
    names = [f"cardroom_bench_{secrets.token_hex(4)}" for _ in range(2)]
    servers: dict[str, Server] = {}
    created: list[str] = []
    try:
        url = db.ensure_database(admin, names[0])
        created.append(names[0])
        db.migrate(url)
        servers["bare"] = _start_bare()
        servers["this"] = _start(url, None)
        if baseline is not None:
            # Its own database, migrated by its own code (`serve` migrates): this code's
            # migrations may be ahead of what it knows.
            base_url = db.ensure_database(admin, names[1])
            created.append(names[1])
            servers["baseline"] = _start(base_url, baseline)
        served = [server for label, server in servers.items() if label != "bare"]
        _measure(servers["bare"], served, requests, games)
        results = {label: server.ms_per_request() for label, server in servers.items()}
        for figures in results.values():
            figures.pop("warm-up", None)
        return results
    finally:
        for server in servers.values():
            server.process.terminate()
            server.process.wait(timeout=30)
        for name in created:
            db.drop_database(admin, name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=2000, help="requests per GET endpoint")
    parser.add_argument("--games", type=int, default=4, help="whole games of keyed picks")
    parser.add_argument("--baseline", metavar="DIR", help="a source tree to compare with")
    args = parser.parse_args()
    results = run(args.requests, args.games, args.baseline)
    print(f"server: one worker, {http_bench.SERVER}; bare Flask: gunicorn's gevent worker")
    print(table(results))


def table(results: dict[str, dict[str, float]]) -> str:
    """Each figure's CPU ms per request, its ratio to the bare app's, and the baseline's."""
    bare = results["bare"][BARE]
    base = results.get("baseline")
    lines = [f"{BARE:<42} server CPU {bare:6.3f} ms per request"]
    for what, ms in results["this"].items():
        line = f"{what:<42} server CPU {ms:6.3f} ms per request ({ms / bare:4.2f}x bare)"
        if base is not None and what in base:
            line += f"  (baseline {base[what]:6.3f} ms: {ms / base[what] - 1:+.0%})"
        lines.append(line)
    return "\n".join(lines)


if __name__ == "__main__":
    main()
