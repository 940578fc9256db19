"""The probes an operator's tooling asks: ``GET /livez`` (the process answers), ``GET /metrics``
(Prometheus) and ``GET /readyz`` (service/http/readiness.py's checks). ``GET /healthz``
(routes/operations.py) stays as it was: the database answers a read. Apart from the API's
blueprint: no rate limit, no idempotency, and the metrics of every worker."""

from __future__ import annotations

import logging

from flask import Blueprint, Response, current_app

from service import metrics
from service.http import readiness
from service.http.json_provider import json_response
from service.http.problems import Problem, problem_response
from service.http.schemas import Liveness

log = logging.getLogger(__name__)

probes = Blueprint("probes", __name__)
LIVENESS = Liveness()
ALIVE = LIVENESS.dump({"status": "ok"})  # the same answer every time


@probes.get("/livez")
def livez() -> Response:
    """The process answers: nothing else is checked (a restart would not help a database).
    ---
    get:
      tags:
      - operations
      operationId: liveness
      summary: Liveness probe
      description: >-
        `200` as long as the process answers; the database is not asked (restarting the process
        would not mend it). For a Kubernetes `livenessProbe`.
      security: []
      responses:
        '200':
          description: The process is alive.
          content:
            application/json:
              schema: {$ref: '#/components/schemas/Liveness'}
        '500': InternalError
    """
    return json_response(ALIVE)


@probes.get("/metrics")
def prometheus() -> Response:
    """The metrics, summed over every worker process.
    ---
    get:
      tags:
      - operations
      operationId: metrics
      summary: Prometheus metrics
      description: >-
        The service's metrics in Prometheus' text format, summed over every worker process:
        request latency per route and status (`cardroom_http_request_duration_seconds`), moves,
        appends, append conflicts and retries, open streams and long polls, the connection pool,
        idempotent replays, clock sweeps, 503s. The README lists them.
      security: []
      responses:
        '200':
          description: The metrics.
          content:
            text/plain:
              schema:
                type: string
        '500': InternalError
    """
    metrics.sample_pool(current_app.extensions["cardroom_store"].pool, force=True)
    body, content_type = metrics.exposition()
    return Response(body, content_type=content_type)


@probes.get("/readyz")
def readyz() -> Response:
    """Ready for traffic: every readiness check passes (503 problem+json naming the failures).
    ---
    get:
      tags:
      - operations
      operationId: readiness
      summary: Readiness probe
      description: >-
        `200` when every check passes, else `503` (`not_ready`) whose `checks` say each
        check's result and whose `detail` names those that failed. The checks:
        `database_read_write` (not a standby, not read-only), `database_commits` (a write
        behind the locks every append takes, needing new disk space, commits within
        `CARDROOM_READY_TIMEOUT`: a held lock, a full disk, a missing synchronous standby or a
        lost privilege fail it), and those the service adds (the keys, the rate limits' store,
        which is reported but never fails the probe). `/livez` stays `200` meanwhile. For a
        Kubernetes `readinessProbe` or a load balancer's health check.
      security: []
      responses:
        '200':
          description: Ready for traffic.
          content:
            application/json:
              schema: {$ref: '#/components/schemas/Readiness'}
        '500': InternalError
        '503': NotReady
    """
    checks, failed = readiness.results(current_app)
    if failed:
        log.warning("not ready: %s", "; ".join(f"{name}: {checks[name]}" for name in failed))
        detail = "not ready: " + "; ".join(f"{name}: {checks[name]}" for name in failed)
        problem = Problem(503, "not_ready", detail, headers={"Retry-After": "5"}, checks=checks)
        return problem_response(problem)
    return json_response({"status": "ok", "database": "ok", "checks": checks})
