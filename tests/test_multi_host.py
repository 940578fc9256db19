"""A multi-host DATABASE_URL (the hosts of a Patroni cluster, ``target_session_attrs=read-write``)
where one host does not answer at all (cut off the network): a new connection must not wait for
it (``connect_timeout``) before it tries the others. After a failover that is how long every host
of the service would take to find the new leader (service/store/db.py, ``FirstToAnswer``)."""

from __future__ import annotations

import threading
import time

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
