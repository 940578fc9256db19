"""``cardroom migrate``, ``cardroom serve``, ``cardroom deliver`` (webhooks), ``cardroom keys``
(the public signing keys), and offline ``cardroom audit`` and ``cardroom replay`` of game
exports (no server, no database)."""

from __future__ import annotations

import argparse
import atexit
import contextlib
import logging
import math
import os
import resource
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable, Sequence
from importlib import metadata
from typing import Any

# Not imported here: service.store.db (psycopg, psycopg_pool), psycopg
# itself (main() recognises its errors only once it is loaded). `cardroom serve` monkey-patches
# the process for gevent first, and they must see the patched threading and select modules.
from service import logs
from service.keys import KeysError
from service.settings import SettingsError, check_environment, settings

# The default worker: gevent's (service/http/worker.py), where an open stream, a long poll or a
# slow client costs a greenlet, not a thread. "gthread" keeps the former threaded worker.
log = logging.getLogger("cardroom.serve")
GEVENT_WORKER = "service.http.worker.CardroomWorker"
WORKER_CLASSES = {"gevent": GEVENT_WORKER, "gthread": "gthread"}
DEFAULT_THREADS = 16  # gthread only: each open stream or long poll holds one
KEY_ACTIONS = ("show", "init", "rotate", "retire", "check")


def _default_workers() -> int:
    # A few processes use every usable CPU (by the CPU quota and affinity, not the host's
    # count); each serves thousands of connections (gevent).
    from service.cli.capacity import default_workers

    return settings().web_concurrency or default_workers()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cardroom", description="An event-sourced card room.")
    parser.add_argument("--version", action="version", version=f"cardroom {_version()}")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("migrate", help="bring the database schema up to date")
    serve = commands.add_parser("serve", help="migrate, then serve the HTTP API with gunicorn")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--workers", type=int, default=_default_workers())
    serve.add_argument(
        "--worker-class",
        choices=sorted(WORKER_CLASSES),
        default="gevent",
        help="gevent (default): an open stream or long poll costs no thread; gthread: threads",
    )
    serve.add_argument(
        "--threads",
        type=int,
        default=DEFAULT_THREADS,
        help="threads per worker, gthread only; each open event stream or long poll holds one",
    )
    serve.add_argument(
        "--no-access-log", action="store_true", help="do not log each request (benchmarks)"
    )
    audit = commands.add_parser(
        "audit",
        help="verify game exports offline: hash chain, seed, deals, scores, provenance (S18)",
    )
    audit.add_argument("files", nargs="+", metavar="FILE", help="an export (.jsonl) or game URL")
    audit.add_argument("--json", action="store_true", help="print the report(s) as JSON")
    audit.add_argument(
        "--keys",
        metavar="FILE|URL",
        help="the service's public keys (a JWK Set as `cardroom keys` prints it, a PEM key, or"
        " http(s)://host/.well-known/cardroom-keys): checks the export's signed checkpoint",
    )
    audit.add_argument(
        "--receipts",
        metavar="FILE",
        help="receipts the players kept (JSON array, JSON Lines, or the web page's download):"
        " each is checked against the export; needs --keys",
    )
    keys = commands.add_parser(
        "keys",
        help="the service's keys: show (the public JWK Set), init, rotate, retire KID, check",
        description="show: print the public signing keys of the keys file (or CARDROOM_KEYS);"
        " init: create the keys file (a new deployment); rotate: add a new signing key and seed"
        " key, used by new games from each host's next start; retire KID: the database no longer"
        " asks hosts for that key's secret (README: Keys); check: do these keys hold every key"
        " id the database has used?",
    )
    keys.add_argument("action", nargs="?", default="show", choices=KEY_ACTIONS)
    keys.add_argument("kid", nargs="?", help="retire: the key id (after --: one may start with -)")
    keys.add_argument("--rotate", action="store_true", help=argparse.SUPPRESS)  # old spelling
    commands.add_parser(
        "sign-finished",
        help="sign the finished games that have no stored signature (finished before 0014)",
    )
    replay = commands.add_parser("replay", help="print a game turn by turn from its export")
    replay.add_argument(
        "source", metavar="FILE|URL", help="an export, or http(s)://host/games/<id>"
    )
    commands.add_parser(
        "openapi", help="print the API's contract (openapi.yaml), generated from the code"
    )
    rated = commands.add_parser("ratings", help="ratings: rebuild them from game exports")
    rated.add_argument("action", choices=["rebuild"])
    rated.add_argument(
        "exports",
        nargs="*",
        metavar="EXPORT",
        help="a game's export (.jsonl), its URL, or a folder of exports: every rated game's",
    )
    rated.add_argument(
        "--from",
        dest="from_url",
        metavar="URL",
        help="instead of EXPORTs: the service (http(s)://host); fetch every rated game's export",
    )
    rated.add_argument(
        "--pool",
        action="append",
        default=[],
        help="only this pool (repeatable; default: every pool)",
    )
    rated.add_argument(
        "--check",
        nargs="?",
        const="",
        metavar="URL",
        help="the service: compare every rebuilt mu and sigma with its own (--from's if no URL)",
    )
    commands.add_parser(
        "deliver",
        help="deliver webhooks only (cardroom serve's workers deliver too, unless"
        " CARDROOM_WEBHOOKS_DELIVER=0)",
    )
    return parser


def _version() -> str:
    try:
        return metadata.version("cardroom")
    except metadata.PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown"


def migrate() -> str:
    """Resolve the database (starting the embedded one if need be), migrate it, return its URL."""
    from service.store import db

    url = db.database_url()
    db.check_reachable(url)  # a one-line error, before alembic's traceback could
    db.migrate(url)
    return url


def serve(
    host: str,
    port: int,
    workers: int,
    threads: int = 1,
    access_log: bool = True,
    worker_class: str = "gevent",
) -> None:
    if worker_class == "gevent":
        _patch_for_gevent()
        # Every request enters the app at once (no thread to wait for), so a busy moment
        # queues them on the connection pool, not in the listen backlog: waiting there is not
        # an outage (a database known to be down still answers 503 at once: db.py).
        os.environ.setdefault("CARDROOM_POOL_TIMEOUT", "30")
    _share_metrics_between_workers()
    from service import key_registry, keys
    from service.cli import capacity
    from service.http.connections import ConnectionSettings
    from service.store import db, replicas

    with contextlib.suppress(keys.KeysMissing):  # a bad CARDROOM_KEYS: one line, before all
        keys.load()
    url = db.database_url()
    db.check_reachable(url)  # a one-line error, before alembic's traceback could
    configured = settings()
    budget = capacity.check_connection_budget(
        url, configured.hosts, workers, configured.pool_max, len(replicas.replica_urls())
    )
    # Before the workers fork (they inherit the keyring checked here), and before migrating when
    # the schema has the key ids already: refuses to start if these keys lack an id the
    # database has used; creates keys only for a brand-new database.
    checked = key_registry.prepare(url)
    if db.is_app_role(url):  # compose: a one-shot step migrated as the owner
        db.check_migrated(url)
    else:
        db.migrate(url)
    if not checked:
        key_registry.prepare(url)
    db.check_app_role(url)  # after migrating: the migrations create cardroom_app
    log.info("connections: %s", budget)
    # Why: the workers are forked from this process; they must use the database resolved here
    # (this process owns the embedded server, if any) rather than start their own. They connect
    # as the least privileged role (SELECT and INSERT only) whatever user the URL names:
    # db.app_url.
    os.environ["DATABASE_URL"] = db.app_url(url)
    _warn_of_per_process_limits(workers)
    limits = ConnectionSettings.from_env()
    _raise_open_files_limit(limits.worker_connections + 1024)
    _run_gunicorn(
        {
            "bind": f"{host}:{port}",
            "workers": workers,
            "threads": threads,
            "worker_class": WORKER_CLASSES[worker_class],
            "worker_connections": limits.worker_connections,
            # gunicorn's most (its default is 4094): every URL the contract allows fits, e.g.
            # GET /games with every filter at its documented maximum, percent-encoded (~5.7 KB)
            "limit_request_line": REQUEST_LINE_BYTES,
            # gevent: the worker bounds reading a request's head by the header timeout (float)
            "keepalive": max(1, math.ceil(limits.header_timeout)),
            # No preload: each worker builds its own app and connection pool after the fork
            # (a pool's connections and threads must not be shared across processes).
            "preload_app": False,
            "accesslog": None,  # the app logs each request itself (service/http/observe.py)
            "logger_class": "service.logs.GunicornLogger",
            "logconfig_dict": logs.gunicorn_logconfig(settings(), access_log),
            "post_worker_init": _worker_started,
            "child_exit": _forget_worker_metrics,
        }
    )


REQUEST_LINE_BYTES = 8190


def _warn_of_per_process_limits(workers: int) -> None:
    """Rate limits kept in memory count in each worker: say so once, with the way out."""
    configured = settings()
    in_memory = configured.rate_limit_storage.startswith("memory://")
    if workers > 1 and configured.rate_limits == "on" and in_memory:
        logging.getLogger(__name__).warning(
            "rate limits count in each of the %d worker processes (CARDROOM_RATE_LIMIT_"
            "STORAGE=memory://): a client gets up to %d times each limit; set it to a "
            "Redis URI (redis://host:6379/0) to count once for the service",
            workers,
            workers,
        )


def _patch_for_gevent() -> None:
    """Make blocking calls cooperative in this process and the workers it forks, before
    psycopg, psycopg_pool and the hub are imported: they bind threading's locks and pick
    psycopg's wait function at import time."""
    if "psycopg" in sys.modules:
        raise RuntimeError("psycopg was imported before gevent's monkey-patching")
    from gevent import monkey

    monkey.patch_all()


def _raise_open_files_limit(wanted: int) -> None:
    """Each open connection is a file descriptor: raise the soft limit as far as allowed."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    if target < wanted:
        logging.getLogger(__name__).warning(
            "open files limited to %d (hard limit): fewer connections than %d", target, wanted
        )


def _share_metrics_between_workers() -> None:
    """GET /metrics sums every worker's samples, kept in files in a folder of this server's own
    (service/metrics.py). Set before prometheus_client is first imported, here or in a worker."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        return  # the operator's folder (empty it between runs)
    folder = tempfile.mkdtemp(prefix="cardroom-metrics-")
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = folder
    master = os.getpid()

    def remove() -> None:
        if os.getpid() == master:  # workers inherit this handler: only the master removes it
            shutil.rmtree(folder, ignore_errors=True)

    atexit.register(remove)


def _forget_worker_metrics(server: Any, worker: Any) -> None:
    """gunicorn's child_exit, in the master: a dead worker's live gauges no longer count."""
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)


def _worker_started(worker: Any) -> None:
    """gunicorn's post_worker_init: streams end on exit; the worker delivers webhooks."""
    _end_live_requests_on_exit(worker)
    from service.webhooks.deliver import run_in_app

    run_in_app(getattr(worker, "flask_app", worker.wsgi))


def _end_live_requests_on_exit(worker: Any) -> None:
    """When the worker is told to stop, its event streams and long polls end at once (clients
    resume elsewhere) instead of holding the shutdown for their whole lifetime."""
    app = getattr(worker, "flask_app", worker.wsgi)
    hub = app.extensions["cardroom_live"]
    cooperative = "gevent.monkey" in sys.modules

    def stop() -> None:
        if cooperative:
            import gevent

            # Not in the signal handler itself: it may have interrupted the event loop or a
            # greenlet holding the hub's lock.
            gevent.spawn(hub.stop, False)
        else:
            hub.stop(join=False)

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGQUIT):
        previous = signal.getsignal(signum)
        if not callable(previous):
            continue

        def handler(number: int, frame: Any, previous: Callable[..., Any] = previous) -> None:
            stop()
            previous(number, frame)

        signal.signal(signum, handler)


def _run_gunicorn(options: dict[str, Any]) -> None:
    from gunicorn.app.base import BaseApplication

    class Application(BaseApplication):
        def load_config(self) -> None:
            for key, value in options.items():
                self.cfg.set(key, value)
            # Recent gunicorn opens a control socket at a fixed path (~/.gunicorn); unused here,
            # and two servers on one machine (tests, `make run`) would fight over it.
            if "control_socket_disable" in self.cfg.settings:
                self.cfg.set("control_socket_disable", True)

        def load(self) -> Callable[..., Any]:
            # Imported lazily, in each worker: the app factory lives in service/http/app.py.
            from service.http.app import create_app

            return create_app()

    Application().run()


def _audit(args: argparse.Namespace) -> int:
    from service.cli.terminal import audit_command
    from service.store.exports import read_keys, read_receipts

    if args.receipts and not args.keys:
        print(
            "cardroom audit: --receipts needs --keys, the service's public keys (saved from"
            " GET /.well-known/cardroom-keys, or printed by `cardroom keys`)",
            file=sys.stderr,
        )
        return 2
    try:
        keys = read_keys(args.keys) if args.keys else None
        receipts = read_receipts(args.receipts) if args.receipts else []
    except (OSError, ValueError) as exc:
        print(f"cardroom audit: {exc}", file=sys.stderr)
        return 2
    return audit_command(args.files, args.json, keys=keys, receipts=receipts)


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; returns the exit status. A bad setting or an unreachable database is
    one line on stderr (exit 2 and 1), not a traceback."""
    try:
        return _main(argv)
    except (SettingsError, KeysError) as error:
        print(f"cardroom: {error}", file=sys.stderr)
        return 2
    except Exception as error:
        # Not imported at the top (gevent's patching comes first): their errors can only have
        # been raised once they were loaded.
        db = sys.modules.get("service.store.db")
        psycopg = sys.modules.get("psycopg")
        if db is not None and isinstance(error, (db.EmbeddedUnavailable, db.NotMigrated)):
            print(f"cardroom: {error}", file=sys.stderr)
            return 2
        capacity = sys.modules.get("service.cli.capacity")
        if capacity is not None and isinstance(error, capacity.BudgetExceeded):
            print(f"cardroom: {error}", file=sys.stderr)
            return 2
        if psycopg is not None and isinstance(error, psycopg.Error):
            reason = " ".join(line.strip() for line in str(error).splitlines()) or repr(error)
            what = (
                "cannot reach the database"
                if isinstance(error, psycopg.OperationalError)
                else "the database refused"
            )
            print(f"cardroom: {what}: {reason}", file=sys.stderr)
            return 1
        raise


def _main(argv: Sequence[str] | None) -> int:
    args = _parser().parse_args(argv)
    if args.command in ("serve", "migrate", "keys", "deliver"):
        check_environment()  # a misspelt setting stops the start rather than being ignored
    logs.configure(settings(), access_log=not getattr(args, "no_access_log", False))
    if args.command == "migrate":
        migrate()
        print("database is up to date")
    elif args.command == "serve":
        serve(
            args.host,
            args.port,
            args.workers,
            args.threads,
            not args.no_access_log,
            args.worker_class,
        )
    elif args.command == "audit":
        return _audit(args)
    elif args.command == "keys":
        from service.cli.keys_command import keys_command

        return keys_command(args)
    elif args.command == "sign-finished":
        from service.cli.sign_finished import sign_finished_command

        return sign_finished_command()
    elif args.command == "replay":
        from service.cli.replay import replay_command

        return replay_command(args.source)
    elif args.command == "ratings":
        from service.cli.ratings_command import ratings_command

        return ratings_command(args.exports, args.check, args.from_url, args.pool)
    elif args.command == "deliver":
        from service.cli.deliver_command import deliver_command

        return deliver_command()
    elif args.command == "openapi":
        from service.http import contract

        print(contract.to_yaml(contract.build(contract.routes_app())), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
