"""The yardstick of issue 32's CPU goal: a bare Flask app (one route, a small JSON object) served
the way ``cardroom serve`` serves the service: gevent monkey-patching before anything else,
gunicorn's gevent worker, the same connection settings (worker connections, keep-alive), no
access log, no preloading.

``python -m bench.bare_flask --port N [--workers W]``; ``start(port)`` runs it in a subprocess and
returns once it answers. What the CPU goal divides by: a request Flask itself serves.
"""

from __future__ import annotations

import argparse
import math
import subprocess
import sys
import time
import urllib.request
from typing import Any

PATH = "/hello"  # the one route


def _app() -> Any:
    from flask import Flask

    app = Flask(__name__)

    @app.get(PATH)
    def hello() -> dict[str, str]:
        return {"status": "ok"}

    return app


def serve(port: int, workers: int) -> None:
    from gevent import monkey

    monkey.patch_all()  # first, as `cardroom serve` does (service/cli/main.py)
    from gunicorn.app.base import BaseApplication

    from service.http.connections import ConnectionSettings

    limits = ConnectionSettings.from_env()
    options = {
        "bind": f"127.0.0.1:{port}",
        "workers": workers,
        "worker_class": "gevent",
        "worker_connections": limits.worker_connections,
        "keepalive": max(1, math.ceil(limits.header_timeout)),
        "preload_app": False,
        "accesslog": None,
        "loglevel": "warning",
    }

    class Application(BaseApplication):  # type: ignore[misc]
        def load_config(self) -> None:
            for key, value in options.items():
                self.cfg.set(key, value)
            if "control_socket_disable" in self.cfg.settings:
                self.cfg.set("control_socket_disable", True)

        def load(self) -> Any:
            return _app()

    Application().run()


def start(port: int, workers: int = 1) -> subprocess.Popen[bytes]:
    """The bare app on ``port``, answering."""
    command = [sys.executable, "-m", "bench.bare_flask", "--port", str(port)]
    server = subprocess.Popen(command + ["--workers", str(workers)], stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{PATH}", timeout=1):
                return server
        except OSError:
            time.sleep(0.1)
    server.kill()
    raise RuntimeError("the bare Flask app did not start within 60 s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    serve(args.port, args.workers)


if __name__ == "__main__":
    main()
