"""Connections the database or the network ended (issue 39, item 2), over a real server
(``cardroom serve``, gevent) whose connections go through a TCP proxy of the test's (so that
it can tell this server's sessions from those of the other tests, and cut them):

- sessions PostgreSQL ended (``pg_terminate_backend``, as a restart or a failover does) leave
  dead connections in the pool: each is replaced when it is taken, and the request goes on;
  once the database takes connections again no client sees a 503 for them;
- a keyed request's connection cut while PostgreSQL's side stays open (a partition, a server
  host that lost its power): the resend with its key is answered as the first one was, within
  the request's budget. (Before issue 40 the cut session kept the key's advisory lock, and every
  resend got 409 idempotency_key_in_use for as long as that session lived: about 2 h.)
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import requests
from api_client import ApiClient, Table, expect_status, wait_until
from patience import ANSWER
from psycopg.conninfo import conninfo_to_dict
from serve_support import Served, cardroom_serve
from tcp_proxy import Proxy, tcp_proxy

from service.store.budget import GRACE_SECONDS

pytest_plugins = ["api_fixtures"]

BUDGET = 2.0
SLACK = 0.5  # the most an answer may come after its budget
SESSIONS = 6  # pooled connections of the worker, every one opened before they are ended
QUICK = {"CARDROOM_REQUEST_BUDGET": str(BUDGET), "CARDROOM_POOL_MAX": str(SESSIONS)}


@contextmanager
def served_via_proxy(database_url: str) -> Iterator[tuple[Served, Proxy]]:
    params = conninfo_to_dict(database_url)
    port = int(params.get("port") or 5432)
    with tcp_proxy(str(params.get("host") or "127.0.0.1"), port) as proxy:
        via_proxy = database_url.replace(f":{port}/", f":{proxy.port}/")
        with cardroom_serve(via_proxy, env=QUICK) as served:
            yield served, proxy


def sessions(conn: psycopg.Connection[Any], proxy: Proxy) -> dict[int, int]:
    """The server's pooled sessions (not its watchdog's or others'): pid, and port."""
    rows = conn.execute(
        "SELECT pid, client_port FROM pg_stat_activity WHERE client_port = ANY(%s)"
        " AND application_name = 'cardroom'",
        (proxy.server_ports(),),
    )
    return dict(rows.fetchall())


def first_pick(player_view: dict[str, Any]) -> dict[str, Any]:
    return {"round": 1, "turn": 1, "cards": player_view["you"]["hand"][:1]}


def test_sessions_the_server_ended_are_replaced_and_no_request_fails(
    database_url: str, owner_connection: psycopg.Connection[Any]
) -> None:
    with served_via_proxy(database_url) as (served, proxy), ApiClient(served.url) as api:
        table = Table.open(api, 2)
        player = table.players[0]
        # Every connection of the pool opened: reads at once, each holding one.
        barrier = threading.Barrier(SESSIONS * 2)

        def read() -> None:
            with requests.Session() as session:
                barrier.wait(30)
                session.get(f"{served.url}/games/{table.game_id}", timeout=ANSWER)

        readers = [threading.Thread(target=read) for _ in range(SESSIONS * 2)]
        for reader in readers:
            reader.start()
        for reader in readers:
            reader.join(30)
        ended = sessions(owner_connection, proxy)
        assert len(ended) >= 2, ended
        owner_connection.execute(
            "SELECT pg_terminate_backend(pid) FROM unnest(%s::int[]) pid", (list(ended),)
        )
        # Gone, and their last words passed on by the proxy (as the network does at once).
        wait_until(lambda: set(ended.values()) <= proxy.ended, 10.0)
        # The database takes connections: every request is served, none on a dead connection.
        answers = []
        for _ in range(SESSIONS * 2):
            started = time.monotonic()
            answers.append(
                (api.get(f"/games/{table.game_id}").status_code, time.monotonic() - started)
            )
        assert all(status == 200 and seconds < BUDGET for status, seconds in answers), answers
        keyed = {"Idempotency-Key": str(uuid.uuid4())}
        moved = player.client.post(
            f"{table.path}/moves", first_pick(player.client.game(table.game_id)), headers=keyed
        )
        expect_status(moved, 200)


def test_a_keyed_request_cut_off_with_its_session_open_is_answered_on_its_resend(
    api: ApiClient, database_url: str, owner_connection: psycopg.Connection[Any]
) -> None:
    """A server whose first request is a keyed pick; its connections go silent, either way,
    just as the pick's append reaches PostgreSQL: the append commits, its answer never comes
    back, and PostgreSQL's side of each connection the server had open stays open (no keepalive
    ends it for hours). The resend with the same key is answered as the first pick was, within
    the budget; the first request itself answers 503 by its budget and the grace (its
    connection is cut, never used again: the watchdog finds its backend running nothing)."""
    table = Table.open(api, 2)  # on the tests' own server: the server below sees only the pick
    player = table.players[0]
    pick = first_pick(player.client.game(table.game_id))
    key = {"Idempotency-Key": str(uuid.uuid4())}
    headers = {**key, "Authorization": f"Bearer {player.token}"}
    with served_via_proxy(database_url) as (served, proxy):
        path = f"{served.url}{table.path}/moves"
        proxy.cut(on=b"idempotency_record AS (INSERT")
        first: list[Any] = []

        def send_first() -> None:
            started = time.monotonic()
            try:
                answer = requests.post(path, json=pick, headers=headers, timeout=ANSWER)
                first.append((answer.status_code, time.monotonic() - started))
            except requests.RequestException as exc:
                first.append((exc, time.monotonic() - started))

        sender = threading.Thread(target=send_first)
        sender.start()
        try:
            assert proxy.cut_done.wait(10), "the pick's append never reached the server"
            # Committed: the seat has picked, though the server never heard so.
            picked = "SELECT count(*) FROM events WHERE game_id = %s AND type = 'card_picked'"
            wait_until(
                lambda: owner_connection.execute(picked, (table.game_id,)).fetchone() == (1,),
                5.0,
            )
            # Resent through another server (another host, as a load balancer would): the cut
            # server's pool still holds its other silent connections, which only the deadline
            # of a request that takes one ends (a silent connection is not known to be dead).
            started = time.monotonic()
            resent = player.client.post(f"{table.path}/moves", pick, headers=key)
            waited = time.monotonic() - started
            assert resent.status_code == 200, resent.text
            assert resent.headers.get("Idempotent-Replayed") == "true"
            assert waited <= BUDGET, waited
            sender.join(30)
            assert first and first[0][0] == 503, first
            assert first[0][1] <= BUDGET + GRACE_SECONDS + SLACK, first
            assert owner_connection.execute(picked, (table.game_id,)).fetchone() == (1,)
        finally:
            sender.join(30)
    table.close()
