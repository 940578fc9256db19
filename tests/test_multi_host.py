"""A multi-host DATABASE_URL (the hosts of a Patroni cluster, ``target_session_attrs=read-write``)
where one host does not answer at all (cut off the network): a new connection must not wait for
it (``connect_timeout``) before it tries the others. After a failover that is how long every host
of the service would take to find the new leader (service/store/db.py, ``FirstToAnswer``)."""

from __future__ import annotations

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
