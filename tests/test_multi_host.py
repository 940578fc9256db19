"""A multi-host DATABASE_URL (the hosts of a Patroni cluster, ``target_session_attrs=read-write``)
where one host does not answer at all (cut off the network): a new connection must not wait for
it (``connect_timeout``) before it tries the others. After a failover that is how long every host
of the service would take to find the new leader (service/store/db.py, ``FirstToAnswer``). And a
pool whose database was down uses it again within half a second of its return (``Pool``)."""

from __future__ import annotations

import contextlib
import threading
import time

import psycopg
from patience import scaled
from psycopg.conninfo import conninfo_to_dict
from tcp_proxy import tcp_proxy

from service.store import db

CONNECT_TIMEOUT = 4  # what each attempt on the silent host would cost, one after the other


def test_a_silent_host_does_not_delay_a_connection_to_the_others(database_url: str) -> None:
    params = conninfo_to_dict(database_url)
    host, port = str(params.get("host") or "127.0.0.1"), int(params.get("port") or 5432)
    with tcp_proxy(host, port) as silent:
        silent.blackhole()  # accepts connections, never answers
        hosts = {"host": f"127.0.0.1,{host}", "port": f"{silent.port},{port}"}
        url = db.with_database(database_url, str(params.get("dbname") or "test"))
        options = {
            **hosts,
            "load_balance_hosts": "disable",  # the silent one first, every time
            "target_session_attrs": "read-write",
            "connect_timeout": CONNECT_TIMEOUT,
        }
        started = time.monotonic()
        with db.FirstToAnswer.connect(url, autocommit=True, **options) as conn:
            took = time.monotonic() - started
            assert conn.info.port == port
            assert conn.execute("SELECT 1").fetchone() == (1,)
        print(f"connected in {took:.2f} s past a silent host")
        assert took < CONNECT_TIMEOUT / 2
        # The service's pools connect the same way.
        pool = db.make_pool(url.replace(f"{host}:{port}", f"127.0.0.1:{silent.port},{host}:{port}"))
        try:
            started = time.monotonic()
            with pool.connection(timeout=CONNECT_TIMEOUT) as conn:
                assert conn.info.port == port
            assert time.monotonic() - started < CONNECT_TIMEOUT / 2
        finally:
            pool.close()


def test_a_host_that_refuses_is_asked_again_while_another_is_silent(database_url: str) -> None:
    """After a failover: the old leader silent, the new one refusing until it is promoted. The
    attempt ends once the new one takes it, not when the silent host's timeout runs out."""
    params = conninfo_to_dict(database_url)
    host, port = str(params.get("host") or "127.0.0.1"), int(params.get("port") or 5432)
    with tcp_proxy(host, port) as silent, tcp_proxy(host, port) as promoted:
        silent.blackhole()
        promoted.refuse()  # connections refused, at once, as by a server not there yet
        options = {
            "host": "127.0.0.1,127.0.0.1",
            "port": f"{silent.port},{promoted.port}",
            "connect_timeout": CONNECT_TIMEOUT,
        }
        threading.Timer(0.5, promoted.accept).start()
        started = time.monotonic()
        with db.FirstToAnswer.connect(database_url, autocommit=True, **options) as conn:
            took = time.monotonic() - started
            assert conn.info.port == promoted.port
        print(f"connected {took:.2f} s after asking, the host taking it from 0.5 s on")
        assert took < 0.5 + 2 * db.ASK_AGAIN_SECONDS + 0.5


def test_a_pool_reconnects_soon_after_its_database_is_back(database_url: str) -> None:
    """psycopg_pool alone tries again 1, 2, 4 s... after each failure (1, 3, 7 s after the
    first): a database back after 3 s would be used at 7. The service's pools try again every
    RECONNECT_SECONDS at most."""
    params = conninfo_to_dict(database_url)
    host, port = str(params.get("host") or "127.0.0.1"), int(params.get("port") or 5432)
    with tcp_proxy(host, port) as proxy:
        url = database_url.replace(f"{host}:{port}", f"127.0.0.1:{proxy.port}")
        pool = db.make_pool(url, min_size=1, max_size=1)  # no growing past the broken one
        try:
            with pool.connection(timeout=5) as conn:
                conn.execute("SELECT 1")
            proxy.refuse()  # its connection cut, new ones refused
            with contextlib.suppress(psycopg.Error), pool.connection(timeout=1) as conn:
                conn.execute("SELECT 1")  # finds it cut: the pool starts reconnecting
            time.sleep(3.2)  # down this long: the pool's backoff grows meanwhile
            proxy.accept()
            back = time.monotonic()
            with pool.connection(timeout=10) as conn:
                conn.execute("SELECT 1")
            took = time.monotonic() - back
            print(f"connected {took:.2f} s after the database was back")
            # The margin grows with the machine's load (a loaded CI failed it at 0.5 s) but stays
            # below what psycopg_pool alone would take here (its next try 3.8 s after this).
            assert took < db.RECONNECT_SECONDS + min(scaled(0.5), 2.5)
        finally:
            pool.close()
