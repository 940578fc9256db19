"""What an operator relies on: request ids, logs with their context and a timestamp, Prometheus
metrics (summed over gunicorn's workers), and probes that tell a read-only database apart."""

from __future__ import annotations

import io
import json
import logging
import os
import random
import re
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
import requests
from api_client import ApiClient, Table, expect_problem, metric_sample, random_move
from patience import ANSWER
from psycopg import sql

from service import logs
from service.http.app import create_app
from service.settings import Settings
from service.store import db

pytest_plugins = ["api_fixtures"]
ROOT = Path(__file__).resolve().parents[1]


# --- request ids and log lines -----------------------------------------------------------------


def test_a_request_id_is_echoed_or_made(api: ApiClient) -> None:
    sent = api.get("/livez", headers={"X-Request-ID": "trace-42.a"})
    assert sent.headers["X-Request-ID"] == "trace-42.a"
    made = api.get("/livez")
    assert uuid.UUID(made.headers["X-Request-ID"])
    # Not a usable id (a space, too long): replaced, never echoed into a log line as is.
    for bad in ("two words", "x" * 200):
        answer = api.get("/livez", headers={"X-Request-ID": bad})
        assert uuid.UUID(answer.headers["X-Request-ID"])
    # Problems carry it too.
    missing = api.get(f"/games/{uuid.uuid4()}", headers={"X-Request-ID": "r1"})
    assert missing.status_code == 404 and missing.headers["X-Request-ID"] == "r1"


def test_log_lines_name_the_request_the_game_and_the_seat(api: ApiClient) -> None:
    table = Table.open(api, 2)
    player = table.players[1]
    view = player.client.get(table.path).json()
    with _collecting() as lines:
        player.client.post(
            f"{table.path}/moves",
            random_move(view, random.Random(1)),
            headers={"X-Request-ID": "move-of-seat-1"},
        )
    (line,) = [entry for entry in lines if entry.get("request_id") == "move-of-seat-1"]
    assert line["game_id"] == table.game_id and line["seat"] == 1
    assert line["http"]["method"] == "POST" and line["http"]["status"] == 200
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", line["time"])
    assert player.token not in json.dumps(lines)
    table.close()


class _collecting:
    """``with _collecting() as lines``: the access log's lines (JSON, parsed) during the block."""

    def __enter__(self) -> list[dict]:
        self.lines: list[dict] = []
        self.handler = logging.Handler()
        self.handler.setFormatter(logs.JsonFormatter())
        self.handler.addFilter(logs.ContextFilter())
        self.handler.emit = lambda record: self.lines.append(  # type: ignore[method-assign]
            json.loads(self.handler.format(record))
        )
        self.logger = logging.getLogger(logs.ACCESS)
        self.level = self.logger.level
        self.logger.setLevel(logging.INFO)
        self.logger.addHandler(self.handler)
        return self.lines

    def __exit__(self, *exc: object) -> None:
        self.logger.removeHandler(self.handler)
        self.logger.setLevel(self.level)


def test_text_log_lines_have_a_timestamp_and_the_context() -> None:
    record = logging.LogRecord("cardroom", logging.WARNING, __file__, 1, "hello %s", ("x",), None)
    logs.start(request_id="r-9", game_id="g-1")
    logs.bind(seat=2)
    try:
        logs.ContextFilter().filter(record)
    finally:
        logs.end()
    line = logs.TextFormatter().format(record)
    assert re.fullmatch(
        r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z WARNING cardroom: hello x "
        r"\[request_id=r-9 game_id=g-1 seat=2\]",
        line,
    ), line


def test_the_log_handler_writes_to_stderr_as_it_is_now(monkeypatch: pytest.MonkeyPatch) -> None:
    """`cardroom` configures logging once; whatever replaces sys.stderr later (a test harness
    that captures output, then closes its stream) must not make each later line a "Logging
    error" on a closed file: the handler writes to the current sys.stderr."""
    root = logging.getLogger()
    saved = root.handlers[:], root.level
    first, second = io.StringIO(), io.StringIO()
    try:
        monkeypatch.setattr(sys, "stderr", first)
        logs.configure(Settings(log_format="text", log_level="INFO"))
        first.close()  # the stream that was stderr at configure time is gone
        monkeypatch.setattr(sys, "stderr", second)
        logging.getLogger("cardroom.test").warning("after the swap")
    finally:
        root.handlers[:], level = saved
        root.setLevel(level)
    written = second.getvalue()
    assert "WARNING cardroom.test: after the swap" in written and "Logging error" not in written


# --- metrics -----------------------------------------------------------------------------------


def test_metrics_count_requests_moves_and_appends(api: ApiClient) -> None:
    before = api.get("/metrics")
    assert before.status_code == 200
    assert before.headers["Content-Type"].startswith("text/plain")
    table = Table.open(api, 2)
    for player in table.players:
        view = player.client.get(table.path).json()
        assert player.client.post(f"{table.path}/moves", random_move(view, random.Random(2)))
    after = api.get("/metrics").text
    moves = "cardroom_moves_total"
    sushi_go = {"game": "sushi-go"}  # other tests in this process may have played Sequence
    assert (
        metric_sample(after, moves, **sushi_go) - metric_sample(before.text, moves, **sushi_go) >= 2
    )
    assert metric_sample(after, "cardroom_appends_total") > metric_sample(
        before.text, "cardroom_appends_total"
    )
    route = "/games/<game_id>/moves"
    count = "cardroom_http_request_duration_seconds_count"
    assert metric_sample(after, count, method="POST", route=route, status="200") >= 2
    for name in [
        "cardroom_append_conflicts_total",
        "cardroom_append_retries_total",
        "cardroom_open_streams",
        "cardroom_long_polls",
        "cardroom_pool_connections",
        "cardroom_pool_waits_total",
        "cardroom_idempotent_replays_total",
        "cardroom_clock_sweeps_total",
        "cardroom_database_unavailable_total",
    ]:
        assert re.search(rf"^# TYPE {name} ", after, re.M), name
    table.close()


# --- probes ------------------------------------------------------------------------------------


@pytest.fixture
def scratch_database(database_url: str) -> Iterator[str]:
    name = f"cardroom_ops_{uuid.uuid4().hex[:8]}"
    url = db.ensure_database(database_url, name)
    db.migrate(url)
    try:
        yield url
    finally:
        db.drop_database(database_url, name)


def _read_only(url: str, on: bool) -> None:
    name = psycopg.conninfo.conninfo_to_dict(url)["dbname"]
    value = sql.SQL("on" if on else "off")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET default_transaction_read_only = off")  # this session may change it
        conn.execute(
            sql.SQL("ALTER DATABASE {} SET default_transaction_read_only = {}").format(
                sql.Identifier(name), value
            )
        )


def test_readyz_is_false_while_the_database_refuses_writes(scratch_database: str) -> None:
    with db.make_pool(scratch_database, max_size=2) as pool:
        client = create_app(pool=pool).test_client()
        assert client.get("/readyz").status_code == 200
        assert client.get("/livez").status_code == 200
    _read_only(scratch_database, True)
    try:
        with db.make_pool(scratch_database, max_size=2) as pool:
            client = create_app(pool=pool).test_client()
            assert client.get("/healthz").status_code == 200  # reads still work
            ready = client.get("/readyz")
            assert ready.status_code == 503
            assert ready.json["code"] == "not_ready"
            assert ready.json["checks"]["database_read_write"].startswith("read_only: ")
            assert "database_read_write" in ready.json["detail"]
            assert ready.headers["Retry-After"]
            assert client.get("/livez").status_code == 200  # no reason to restart the process
            # A write is a 503 too (retry later), not a 500.
            created = client.post("/games", json={"game": "sushi-go", "players": 2})
            assert created.status_code == 503, created.json
            assert created.json["cause"] == "read_only", created.json
    finally:
        _read_only(scratch_database, False)
    with db.make_pool(scratch_database, max_size=2) as pool:
        assert create_app(pool=pool).test_client().get("/readyz").status_code == 200


# --- under gunicorn ----------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_gunicorn_workers_share_metrics_and_log_json(database_url: str, tmp_path: Path) -> None:
    port = _free_port()
    command = [sys.executable, "-m", "service.cli.main", "serve", "--port", str(port)]
    command += ["--workers", "2", "--threads", "2"]
    env = {**os.environ, "DATABASE_URL": database_url, "CARDROOM_LOG_FORMAT": "json"}
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    out, err = tmp_path / "out.log", tmp_path / "err.log"
    with out.open("w") as stdout, err.open("w") as stderr:
        server = subprocess.Popen(command, cwd=ROOT, env=env, stdout=stdout, stderr=stderr)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            assert server.poll() is None, err.read_text()
            try:
                if requests.get(f"{base}/readyz", timeout=ANSWER).status_code == 200:
                    break
            except requests.ConnectionError:
                pass
            assert time.monotonic() < deadline, err.read_text()
            time.sleep(0.1)
        # New connections each time: gunicorn hands them to either worker.
        for n in range(40):
            requests.get(f"{base}/livez", headers={"X-Request-ID": f"probe-{n}"}, timeout=ANSWER)
        text = requests.get(f"{base}/metrics", timeout=ANSWER).text
        count = "cardroom_http_request_duration_seconds_count"
        assert metric_sample(text, count, route="/livez", status="200") == 40
        with ApiClient(base) as api:
            expect_problem(api.get(f"/games/{uuid.uuid4()}"), 404, "game_not_found")
    finally:
        server.terminate()
        server.wait(30)
    lines = [*out.read_text().splitlines(), *err.read_text().splitlines()]
    entries = [json.loads(line) for line in lines if line.strip()]  # every line is JSON
    assert all(re.fullmatch(r"\d{4}-.*Z", entry["time"]) for entry in entries)
    ids = {entry.get("request_id") for entry in entries if entry["logger"] == logs.ACCESS}
    assert {f"probe-{n}" for n in range(40)} <= ids
