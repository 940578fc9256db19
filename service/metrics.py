"""The service's Prometheus metrics (prometheus-client), served at ``GET /metrics``.

Under gunicorn each worker is a process: ``cardroom serve`` sets ``PROMETHEUS_MULTIPROC_DIR`` to a
fresh folder before the workers start, so that every worker's samples are summed at each scrape
(``prometheus_client.multiprocess``). A gauge then says how it combines across workers
(``livesum``: the live workers' values added).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from typing import Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"

REQUEST_SECONDS = Histogram(
    "cardroom_http_request_duration_seconds",
    "Time to answer an HTTP request (streams: until the first byte)",
    ["method", "route", "status"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)
UNAVAILABLE = Counter(
    "cardroom_database_unavailable_total", "Answers 503 because the database could not be reached"
)
MOVES = Counter("cardroom_moves_total", "Moves (picks, plays) accepted from seats", ["game"])
TIMED_OUT_MOVES = Counter(
    "cardroom_clock_moves_total", "Moves the turn clock made for seats whose time ran out"
)
APPENDS = Counter("cardroom_appends_total", "Appends to the event store (one per command)")
EVENTS_APPENDED = Counter("cardroom_events_appended_total", "Events appended to the event store")
APPEND_CONFLICTS = Counter(
    "cardroom_append_conflicts_total", "Appends refused: another request appended first"
)
APPEND_RETRIES = Counter(
    "cardroom_append_retries_total", "Commands decided again on a fresh state after a conflict"
)
IDEMPOTENT_REPLAYS = Counter(
    "cardroom_idempotent_replays_total", "Requests answered with a stored Idempotency-Key answer"
)
SEATS_LEFT = Counter(
    "cardroom_seats_left_total", "Seats given up before their game started (seat_left)"
)
SEATS_TAKEN_OVER = Counter(
    "cardroom_seats_taken_over_total",
    "Seats the greedy bot took over (seat_taken_over), by reason: resigned or stalled",
    ["reason"],
)
GAMES_CANCELLED = Counter(
    "cardroom_games_cancelled_total",
    "Waiting games cancelled because their seats did not fill in time (game_cancelled)",
)
CLOCK_SWEEPS = Counter("cardroom_clock_sweeps_total", "Sweeps of the turn clock for expired turns")
OPEN_STREAMS = Gauge(
    "cardroom_open_streams", "Event streams being served", multiprocess_mode="livesum"
)
LONG_POLLS = Gauge("cardroom_long_polls", "Long polls waiting", multiprocess_mode="livesum")
POOL_SIZE = Gauge(
    "cardroom_pool_connections",
    "Database connections open in the pools",
    multiprocess_mode="livesum",
)
POOL_IDLE = Gauge(
    "cardroom_pool_connections_idle", "Connections idle in the pools", multiprocess_mode="livesum"
)
POOL_WAITING = Gauge(
    "cardroom_pool_requests_waiting",
    "Requests waiting for a connection now",
    multiprocess_mode="livesum",
)
POOL_WAITS = Counter(
    "cardroom_pool_waits_total", "Requests that had to wait for a connection of the pool"
)
POOL_WAIT_SECONDS = Counter(
    "cardroom_pool_wait_seconds_total", "Time requests spent waiting for a connection"
)
POOL_ERRORS = Counter(
    "cardroom_pool_errors_total", "Requests for a connection that failed (timeout, database down)"
)

POOL_SAMPLE_SECONDS = 1.0  # how often a process copies its pool's statistics into the gauges
_last_pool_sample = 0.0


def sample_pool(pool: Any, force: bool = False) -> None:
    """Copy ``pool``'s statistics (psycopg_pool's, reset as they are read) into the metrics."""
    global _last_pool_sample
    now = time.monotonic()
    if not force and now - _last_pool_sample < POOL_SAMPLE_SECONDS:
        return
    _last_pool_sample = now
    stats = pool.pop_stats()
    POOL_SIZE.set(stats.get("pool_size", 0))
    POOL_IDLE.set(stats.get("pool_available", 0))
    POOL_WAITING.set(stats.get("requests_waiting", 0))
    POOL_WAITS.inc(stats.get("requests_queued", 0))
    POOL_WAIT_SECONDS.inc(stats.get("requests_wait_ms", 0) / 1000)
    POOL_ERRORS.inc(stats.get("requests_errors", 0))


def count_seat_changes(events: Iterable[Any]) -> None:
    """Count the appended events an operator watches seats by (``domain.decider.Event``s):
    seats left, taken over, and games cancelled (a pick's events cost a comparison or three)."""
    for event in events:
        kind = event.type
        if kind == "seat_taken_over":
            SEATS_TAKEN_OVER.labels(event.data.get("reason", "unknown")).inc()
        elif kind == "seat_left":
            SEATS_LEFT.inc()
        elif kind == "game_cancelled":
            GAMES_CANCELLED.inc()


def exposition() -> tuple[bytes, str]:
    """The metrics in Prometheus' text format: every worker's, summed, under gunicorn."""
    if os.environ.get(MULTIPROC_ENV):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return generate_latest(registry), CONTENT_TYPE_LATEST
    return generate_latest(REGISTRY), CONTENT_TYPE_LATEST
