"""Where a pick's CPU goes, in-process: the Flask test client on a real PostgreSQL database.

``python -m bench.pick_profile [--games G] [--profile] [--top N] [--keyed]`` creates a scratch
database on the server ``DATABASE_URL`` names (else the embedded one), plays G whole 4-player
Sushi Go! games through the app's test client (every seat reads its view, then picks its first
card) and prints this process's CPU time per pick and per ``GET /livez`` (the generic part of a
request, measured in the same run): their difference is what is specific to a pick.
``--profile`` adds cProfile's functions by cumulative CPU time, over the picks alone;
``--keyed`` sends each pick with an ``Idempotency-Key``.

In-process, so no gunicorn and no HTTP parsing: ``bench.request_cpu`` gives the server's figure.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import secrets
import time
import uuid
from typing import Any

from service.store import db

PLAYERS = 4


def _call(
    client: Any,
    method: str,
    path: str,
    body: Any = None,
    token: str | None = None,
    extra: dict[str, str] | None = None,
) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    headers.update(extra or {})
    response = client.open(path, method=method, json=body, headers=headers)
    assert response.status_code < 400, (path, response.status_code, response.get_data())
    return response


def _new_game(client: Any) -> tuple[str, list[str]]:
    game = _call(client, "POST", "/games", {"game": "sushi-go", "players": PLAYERS}).location
    tokens = [
        _call(client, "POST", f"{game}/players", {"name": f"p{i}"}).get_json()["token"]
        for i in range(PLAYERS)
    ]
    return game, tokens


def picks(
    client: Any, games: int, profiler: cProfile.Profile | None, keyed: bool = False
) -> tuple[float, float, int]:
    """CPU seconds spent in the picks of ``games`` whole games (by the whole process, and by
    the requests' thread alone), and how many picks; ``keyed``: each with an
    ``Idempotency-Key``, as the client guide tells clients."""
    spent, own, count = 0.0, 0.0, 0
    for _ in range(games):
        game, tokens = _new_game(client)
        while True:
            views = [_call(client, "GET", game, token=t).get_json() for t in tokens]
            if views[0]["status"] == "over":
                break
            for seat, view in enumerate(views):
                body = {"round": view["round"], "turn": view["turn"]}
                body["cards"] = view["you"]["hand"][:1]
                extra = {"Idempotency-Key": str(uuid.uuid4())} if keyed else None
                before, thread_before = time.process_time(), time.thread_time()
                if profiler is not None:
                    profiler.enable()
                _call(client, "POST", f"{game}/moves", body, tokens[seat], extra)
                if profiler is not None:
                    profiler.disable()
                spent += time.process_time() - before
                own += time.thread_time() - thread_before
                count += 1
    return spent, own, count


def livez(client: Any, count: int) -> float:
    _call(client, "GET", "/livez")
    before = time.process_time()
    for _ in range(count):
        _call(client, "GET", "/livez")
    return (time.process_time() - before) / count


def run(games: int, profile: bool, top: int, keyed: bool = False) -> None:
    from service.http.app import create_app

    admin = db.database_url()
    name = f"cardroom_bench_{secrets.token_hex(4)}"
    url = db.ensure_database(admin, name)
    try:
        db.migrate(url)
        pool = db.make_pool(url)
        try:
            client = create_app(pool=pool).test_client()
            picks(client, 1, None, keyed)  # warm up: imports, caches, prepared statements
            profiler = cProfile.Profile(time.process_time) if profile else None
            spent, own, count = picks(client, games, profiler, keyed)
            per_livez = livez(client, 500)
            per_pick = spent / count
            print(f"pick   {per_pick * 1e3:6.3f} ms CPU ({count} picks)")
            other = (spent - own) / count
            print(f"  of which other threads {other * 1e3:6.3f} ms (the pool's, the live hub's)")
            print(f"livez  {per_livez * 1e3:6.3f} ms CPU")
            print(f"pick - livez {1e3 * (per_pick - per_livez):6.3f} ms CPU")
            if profiler is not None:
                stats = pstats.Stats(profiler)
                stats.sort_stats("cumulative").print_stats(top)
        finally:
            pool.close()
    finally:
        db.drop_database(admin, name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=5)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--top", type=int, default=60)
    parser.add_argument("--keyed", action="store_true", help="picks with an Idempotency-Key")
    args = parser.parse_args()
    run(args.games, args.profile, args.top, args.keyed)


if __name__ == "__main__":
    main()
