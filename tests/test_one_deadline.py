"""One deadline per request (issue 27, point 4): from arrival to answer a request waits at most
its budget in all (the pool, locks, statements, a synchronous standby), then answers 503 with
Retry-After and a ``cause`` (service/store/budget.py). Real servers (``cardroom serve``, gevent):
48 clients behind a held lock, a database that refuses connections, a synchronous standby that
is not there. The budget is small here (2 s) to keep the tests fast."""

from __future__ import annotations

import re
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import psycopg
import requests
from patience import ANSWER
from psycopg.conninfo import conninfo_to_dict
from serve_support import cardroom_serve
from solo_postgres import solo_postgres
from tcp_proxy import tcp_proxy

from service.store.budget import GRACE_SECONDS

BUDGET = 2.0
SLACK = 0.5  # the most an answer may come after its budget
QUICK = {
    "CARDROOM_REQUEST_BUDGET": str(BUDGET),
    "CARDROOM_READY_TIMEOUT": "1",
    "CARDROOM_POOL_MAX": "4",  # 48 clients: most of them wait for a connection first
}
NEW_GAME = {"game": "sushi-go", "players": 2}

Answer = tuple[float, int, dict[str, Any], dict[str, str]]  # seconds, status, body, headers


def timed(call: Callable[[], requests.Response]) -> Answer:
    started = time.monotonic()
    response = call()
    seconds = time.monotonic() - started
    body = response.json() if response.content else {}
    return seconds, response.status_code, body, dict(response.headers)


def together(
    count: int, base: str, call: Callable[[requests.Session, int], requests.Response]
) -> list[Answer]:
    """``count`` clients at once, each on a connection of its own made beforehand (its time is
    not the server's), all sending when the last is ready; the answers in order."""
    ready = threading.Barrier(count)

    def client(n: int) -> Answer:
        with requests.Session() as session:
            session.get(f"{base}/livez", timeout=ANSWER)
            ready.wait(30)
            return timed(lambda: call(session, n))

    with ThreadPoolExecutor(count) as clients:
        return list(clients.map(client, range(count)))


def post_game(client: Any, base: str, **headers: str) -> requests.Response:
    return client.post(f"{base}/games", json=NEW_GAME, headers=headers, timeout=BUDGET + 10)


def assert_in_budget(answers: list[Answer], budget: float = BUDGET, queued: float = 0.0) -> None:
    """Every answer within the budget plus the slack; ``queued``: what as many answers that
    wait for nothing (``GET /livez``) took on this server at the same time (the machine is
    shared: its CPU, not a wait, may delay the last of them)."""
    slowest = max(seconds for seconds, *_ in answers)
    print(f"slowest of {len(answers)}: {slowest:.2f} s (budget {budget}, queued {queued:.2f})")
    assert slowest <= budget + SLACK + queued, sorted(round(a[0], 2) for a in answers)


def served_seconds(access: list[str], request: str, status: int) -> list[float]:
    """The durations the access log gives the answers to ``request`` with ``status``."""
    pattern = re.compile(rf'"{re.escape(request)} HTTP/1.1" {status} ([0-9.]+) ms')
    return [float(m.group(1)) / 1000 for line in access if (m := pattern.search(line))]


def queueing(count: int, base: str) -> float:
    """The slowest of ``count`` answers at once that wait for nothing (``GET /livez``)."""
    answers = together(count, base, lambda c, _: c.get(f"{base}/livez", timeout=ANSWER))
    return max(seconds for seconds, *_ in answers)


def assert_unavailable(answer: Answer, *causes: str) -> None:
    _, status, body, headers = answer
    assert status == 503, body
    assert body["code"] == "database_unavailable" and body["cause"] in causes, body
    assert int(headers["Retry-After"]) >= 1


def test_48_clients_behind_a_held_lock_answer_within_the_budget(
    database_url: str, owner_connection: psycopg.Connection[Any]
) -> None:
    with cardroom_serve(database_url, env=QUICK, access_log=True) as served:
        queued = queueing(48, served.url)
        with owner_connection.transaction():
            owner_connection.execute("LOCK TABLE events IN SHARE MODE")  # appends wait
            answers = together(48, served.url, lambda c, _: post_game(c, served.url))
        # From arrival (the app's first hook) to answer, as the access log times it. The
        # machine is shared: what answering 48 at once costs this server now (``queued``) may
        # delay the last answers past the budget too, as CPU, not as a wait.
        waited = served_seconds(served.access, "POST /games", 503)
        print(f"server side, 48 under a lock: slowest {max(waited):.2f} s of {len(waited)}")
        assert len(waited) == 48 and max(waited) <= BUDGET + SLACK + queued, sorted(waited)
        assert_in_budget(answers, queued=2 * queued)  # at the client: its queueing too
        for answer in answers:
            assert_unavailable(answer, "lock", "pool", "down")
        causes = {body["cause"] for _, _, body, _ in answers}
        # 4 behind the lock, 44 waiting for them; on a loaded machine a lock waiter whose server
        # did not answer the watchdog within the grace is cut off (``down``), within the budget
        assert {"lock", "pool"} <= causes <= {"lock", "pool", "down"}, causes
        lock = next(body for _, _, body, _ in answers if body["cause"] == "lock")
        assert "lock" in lock["detail"] and "cannot be reached" not in lock["detail"]
        # The lock is gone: at once, and the pool is whole again.
        assert all(
            status == 201
            for _, status, _, _ in together(8, served.url, lambda c, _: post_game(c, served.url))
        )


def test_readyz_fails_while_a_lock_holds_every_write(
    database_url: str, owner_connection: psycopg.Connection[Any]
) -> None:
    with cardroom_serve(database_url, env=QUICK) as served:
        assert requests.get(f"{served.url}/readyz", timeout=ANSWER).status_code == 200
        with owner_connection.transaction():
            owner_connection.execute("LOCK TABLE events IN SHARE MODE")
            seconds, status, body, headers = timed(
                lambda: requests.get(f"{served.url}/readyz", timeout=ANSWER)
            )
            live = requests.get(f"{served.url}/livez", timeout=ANSWER)
        assert status == 503 and body["code"] == "not_ready", body
        assert body["checks"]["database_commits"].startswith("lock: "), body
        assert body["checks"]["database_read_write"] == "ok"
        assert seconds <= 1 + SLACK and int(headers["Retry-After"]) >= 1
        assert live.status_code == 200  # the process is fine: no restart
        assert requests.get(f"{served.url}/readyz", timeout=ANSWER).status_code == 200


def test_a_database_that_refuses_connections_gets_503s_within_the_budget(
    database_url: str,
) -> None:
    params = conninfo_to_dict(database_url)
    with tcp_proxy(
        str(params.get("host") or "127.0.0.1"), int(params.get("port") or 5432)
    ) as proxy:
        via_proxy = database_url.replace(f":{params.get('port') or 5432}/", f":{proxy.port}/")
        with cardroom_serve(via_proxy, env=QUICK) as served:
            game_id = post_game(requests, served.url).json()["game_id"]
            proxy.refuse()  # open connections cut, new ones refused
            answers = together(
                16,
                served.url,
                lambda c, n: (
                    post_game(c, served.url)
                    if n % 2
                    else c.get(f"{served.url}/games/{game_id}", timeout=BUDGET + 10)
                ),
            )
            assert_in_budget(answers)
            for n, answer in enumerate(answers):
                if n % 2 or answer[1] != 200:  # a read may still be vouched for in memory
                    assert_unavailable(answer, "down")
            proxy.accept()  # back: the next requests are served again
            until = time.monotonic() + 10
            while post_game(requests, served.url).status_code != 201:
                assert time.monotonic() < until, "the service did not come back"
            assert_in_budget(together(8, served.url, lambda c, _: post_game(c, served.url)))


def test_a_database_cut_off_during_a_commit_answers_503_within_the_budget(
    database_url: str,
) -> None:
    """The network to the database goes dark (nothing forwarded either way, nothing closed) just
    as a keyed write's COMMIT reaches the server: the commit happens, its answer never comes,
    and neither the watchdog's cancel nor libpq's gets through. The request must not wait for
    TCP to give up: it answers 503 ``down`` within the budget and the grace, and the retry with
    its Idempotency-Key, once the database is back, gets the answer of the write that was
    committed."""
    params = conninfo_to_dict(database_url)
    with tcp_proxy(
        str(params.get("host") or "127.0.0.1"), int(params.get("port") or 5432)
    ) as proxy:
        via_proxy = database_url.replace(f":{params.get('port') or 5432}/", f":{proxy.port}/")
        with cardroom_serve(via_proxy, env=QUICK) as served:
            assert post_game(requests, served.url).status_code == 201
            key = {"Idempotency-Key": str(uuid.uuid4())}
            proxy.blackhole(after=(b"INSERT INTO games", b"COMMIT"))
            answer = timed(lambda: post_game(requests, served.url, **key))
            assert proxy.dark(), "the write never reached its COMMIT"
            print(f"cut off during the commit: answered in {answer[0]:.2f} s")
            assert answer[0] <= BUDGET + GRACE_SECONDS + SLACK, answer
            assert_unavailable(answer, "down")
            proxy.restore()
            until = time.monotonic() + 10
            while (retried := timed(lambda: post_game(requests, served.url, **key)))[1] == 503:
                assert time.monotonic() < until, "the service did not come back"
            assert retried[1] == 201 and retried[3].get("Idempotent-Replayed") == "true", retried
            game = requests.get(f"{served.url}/games/{retried[2]['game_id']}", timeout=ANSWER)
            assert game.status_code == 200
            # No connection cut off is used again: the next requests are served at once.
            answers = together(8, served.url, lambda c, _: post_game(c, served.url))
            assert all(status == 201 for _, status, _, _ in answers), answers


def test_a_missing_synchronous_standby_ends_a_write_at_the_budget() -> None:
    with solo_postgres() as node:
        node.execute("ALTER SYSTEM SET synchronous_standby_names = 'not_there'")
        node.execute("SELECT pg_reload_conf()")
        with cardroom_serve(node.url(), env=QUICK) as served:
            key = {"Idempotency-Key": str(uuid.uuid4())}
            answer = timed(lambda: post_game(requests, served.url, **key))
            assert_in_budget([answer])
            assert_unavailable(answer, "standby")
            assert "standby" in answer[2]["detail"]
            # Committed on the primary all the same (PostgreSQL only warns): the retry with
            # the key gets the answer stored with it, at once.
            games = node.execute("SELECT count(*) FROM games", "cardroom")
            assert games == [(1,)]
            retried = timed(lambda: post_game(requests, served.url, **key))
            assert retried[1] == 201 and retried[3]["Idempotent-Replayed"] == "true", retried
            assert retried[0] < 1.0
            # Reads go on; readiness says why writes do not.
            game = requests.get(f"{served.url}/games/{retried[2]['game_id']}", timeout=ANSWER)
            assert game.status_code == 200
            ready = timed(lambda: requests.get(f"{served.url}/readyz", timeout=ANSWER))
            assert ready[1] == 503 and ready[0] <= 1 + SLACK, ready
            assert ready[2]["checks"]["database_commits"].startswith("standby: "), ready
            answers = together(8, served.url, lambda c, _: post_game(c, served.url))
            assert_in_budget(answers)
            for answer in answers:
                assert_unavailable(answer, "standby", "pool")
