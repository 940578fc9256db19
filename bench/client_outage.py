"""Kill and restart the server mid-game while cardroom-client bots play (issue 38, item 2).

Three players, each with its own ``Client`` and the guide's ``Bot`` (``FirstMoveBot``), play one
Sushi Go! game while a spectator follows it with ``game.events()``. Once the spectator has seen
``KILL_AT`` events, the server (gunicorn master and workers) gets SIGKILL; it stays down at least
``--down`` seconds, and until every player has met a refused connection, then starts again on
the same port and database. Nothing but the clients' own retry budget rides the outage out.

It reports: the players who finished, the moves lost (acknowledged to a bot, missing from the
log) and repeated (a seat's pick recorded twice for one turn), the spectator's events lost or
repeated, and the down time.

    python -m bench.client_outage --down 60                       # an embedded PostgreSQL
    python -m bench.client_outage --down 60 --url postgresql://...  # a migrated database
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from cardroom_client import Client, FirstMoveBot, Move, Refused, Seat, View
from cardroom_client.base import TIMEOUT
from cardroom_client.bot import MOVED_ON

from bench.load import Database, Server, free_port

KILL_AT = 8  # events seen by the spectator: the joins and the first picks
PLAYERS = 3


class Counting(httpx.HTTPTransport):
    """An ``httpx`` transport that counts the connections refused (the server down)."""

    def __init__(self) -> None:
        super().__init__()
        self.refused = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        try:
            return super().handle_request(request)
        except httpx.ConnectError:
            self.refused += 1
            raise


class Recording(FirstMoveBot):
    """The guide's bot, keeping each move the service acknowledged (its view came back)."""

    def __init__(self) -> None:
        self.acked: list[tuple[int, int]] = []

    def _act(self, seat: Seat, view: View) -> View:
        while view.my_move:
            move = self.choose(view)
            after = self._send(seat, move, view)
            if after is not None:
                self.acked.append((getattr(move, "round", 0), move.turn))
                view = after
            else:
                view = seat.view()
        return view

    @staticmethod
    def _send(seat: Seat, move: Move, view: View) -> View | None:
        try:
            return seat.move(move)
        except Refused as refused:
            if refused.code not in MOVED_ON:
                raise
            return None


@dataclass
class Outcome:
    finished: int = 0
    errors: list[str] = field(default_factory=list)
    lost_moves: int = 0
    repeated_moves: int = 0
    lost_events: int = 0
    repeated_events: int = 0
    down_seconds: float = 0.0
    refused_connections: list[int] = field(default_factory=list)
    killed_at_version: int = 0
    final_version: int = 0

    @property
    def ok(self) -> bool:
        return (
            self.finished == PLAYERS
            and not self.errors
            and self.lost_moves == self.repeated_moves == 0
            and self.lost_events == self.repeated_events == 0
            and 0 < self.killed_at_version < self.final_version
        )

    def summary(self) -> str:
        return json.dumps({"ok": self.ok, **self.__dict__})


def drill(database_url: str, down: float, budget: float, log: Path) -> Outcome:
    """One game played through one kill and restart (see the module's docstring)."""
    server = Server(database_url, free_port(), 1, 16, log)
    server.start()
    outcome = Outcome()
    try:
        _play_through(server, down, budget, outcome)
    finally:
        server.stop()
    return outcome


def _client(server: Server, budget: float) -> tuple[Client, Counting]:
    transport = Counting()
    http = httpx.Client(base_url=server.base, transport=transport, timeout=TIMEOUT)
    return Client(server.base, retry_budget=budget, http=http), transport


def _play_through(server: Server, down: float, budget: float, outcome: Outcome) -> None:
    clients = [_client(server, budget) for _ in range(PLAYERS + 1)]
    spectator = clients[PLAYERS][0]
    game = spectator.create_game("sushi-go", PLAYERS)
    bots = [Recording() for _ in range(PLAYERS)]
    seats = [clients[i][0].game(game.id).join(f"P{i}") for i in range(PLAYERS)]
    seen: list[int] = []
    progress = threading.Condition()

    def follow() -> None:
        try:
            for event in game.events():
                with progress:
                    seen.append(event.version)
                    progress.notify_all()
        except Exception as exc:  # reported with the outcome
            outcome.errors.append(f"spectator: {exc!r}")

    def play(index: int) -> None:
        try:
            if bots[index].play(seats[index]).status == "over":
                outcome.finished += 1
        except Exception as exc:
            outcome.errors.append(f"player {index}: {exc!r}")

    threads = [threading.Thread(target=play, args=(i,)) for i in range(PLAYERS)]
    threads.append(threading.Thread(target=follow))
    for thread in threads:
        thread.start()
    with progress:
        progress.wait_for(lambda: len(seen) >= KILL_AT, timeout=60)
        outcome.killed_at_version = seen[-1] if seen else 0
    server.kill()
    killed = time.monotonic()
    players = [transport for _, transport in clients[:PLAYERS]]
    while time.monotonic() - killed < down or not all(t.refused for t in players):
        time.sleep(0.1)  # the outage itself: the clients meanwhile meet refused connections
    server.start()
    outcome.down_seconds = round(time.monotonic() - killed, 2)
    outcome.refused_connections = [t.refused for _, t in clients]
    for thread in threads:
        thread.join(budget + 120)
    _check_log(spectator, game.id, bots, seen, outcome)
    for client, _ in clients:
        client.close()


def _check_log(
    client: Client, game_id: str, bots: list[Recording], seen: list[int], outcome: Outcome
) -> None:
    log: list[dict[str, Any]] = []
    after: int | None = 0
    while after is not None:
        page = client.json("GET", f"/games/{game_id}/events", params={"after": after})
        log += page["events"]
        after = page.get("next_after")
    outcome.final_version = log[-1]["version"] if log else 0
    picks = Counter(
        (e["data"]["seat"], e["data"].get("round"), e["data"].get("turn"))
        for e in log
        if e["type"] == "card_picked"
    )
    outcome.repeated_moves = sum(n - 1 for n in picks.values() if n > 1)
    for seat, bot in enumerate(bots):
        outcome.lost_moves += sum(1 for r, t in bot.acked if (seat, r, t) not in picks)
    counted = Counter(seen)
    outcome.repeated_events = sum(n - 1 for n in counted.values() if n > 1)
    outcome.lost_events = len(set(range(1, outcome.final_version + 1)) - set(counted))


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.client_outage", description=__doc__)
    parser.add_argument("--down", type=float, default=60.0, help="seconds the server stays down")
    parser.add_argument("--budget", type=float, default=120.0, help="the clients' retry budget")
    parser.add_argument("--url", help="a migrated database (default: an embedded PostgreSQL)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="cardroom-outage-") as directory:
        database = None if args.url else Database(Path(directory))
        try:
            url = args.url or (database.url if database else "")
            outcome = drill(url, args.down, args.budget, Path(directory) / "server.log")
        finally:
            if database is not None:
                database.close()
    print(outcome.summary())
    return 0 if outcome.ok else 1


if __name__ == "__main__":
    sys.exit(main())
