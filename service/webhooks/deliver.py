"""Delivery: claims due endpoints, posts what each is owed, moves each one's checkpoint in the
transaction that records the attempt (service/store/webhooks.py).

- **Never lost.** Nothing is copied into a queue at commit (the append is untouched: no
  statement more on a pick's path). What an endpoint is owed is read from the log past its
  checkpoint (messages.py); a crash anywhere before the record leaves the checkpoint where it
  was, and the message is posted again once the lease runs out (at least once, the same
  ``webhook-id``).
- **In order.** An endpoint is held by one deliverer at a time (its lease, claimed with ``FOR
  UPDATE SKIP LOCKED``) and its messages go one after the other: version v of a game is not
  posted before every lower one succeeded or was given up. An account's endpoint is one line
  for all its games: a failing message holds back the ones after it (head of line).
- **Retries** (Standard Webhooks' schedule, ``CARDROOM_WEBHOOKS_RETRY_SCHEDULE``): at once, then
  about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and 24 h later, each delay varied by up
  to ``CARDROOM_WEBHOOKS_JITTER`` at random (the ``rng`` given: tests pin it), or the answer's
  ``Retry-After`` if longer; past the last, the message is given up (logged ``given_up``) and
  the next one goes. ``410 Gone`` disables the endpoint; so does failing without one success
  for ``CARDROOM_WEBHOOKS_DISABLE_AFTER`` (5 days), which the endpoint's ``disabled_reason``
  says. One attempt may take ``CARDROOM_WEBHOOKS_TIMEOUT`` (15 s).
- **Who delivers.** Every ``cardroom serve`` worker (``CARDROOM_WEBHOOKS_DELIVER``, default on)
  and every ``cardroom deliver`` process runs a :class:`Deliverer`: any number on any hosts,
  the claims make exactly one post each message at a time. It wakes when the log reader sees a
  commit (service/live/hub.py) and otherwise every ``CARDROOM_WEBHOOKS_POLL`` seconds, for
  retries that came due; it purges the delivery log's rows older than 3 days.
"""

from __future__ import annotations

import logging
import random
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from service.keys import Keyring
from service.settings import settings
from service.store import webhooks as store
from service.store.failures import log_failure
from service.store.recent import Recent
from service.store.webhooks import Attempted, Checkpoint, Endpoint, Outcome
from service.webhooks import sign, transport
from service.webhooks.messages import Message, States, Step, steps

log = logging.getLogger(__name__)

SLOTS = 8  # endpoints one deliverer posts to at once
STATES_KEPT = 4096  # game states kept between looks (a few KB each)
PURGE_SECONDS = 60.0
MARGIN_SECONDS = 5.0  # a lease outlives the attempt it covers by this much at least


@dataclass
class Schedule:
    """When a failed message is tried again: ``delays`` (seconds after each failure: the first
    attempt is at once), varied by up to ``jitter`` of each at random (``rng``)."""

    delays: tuple[float, ...]
    jitter: float = 0.0
    rng: random.Random = field(default_factory=random.Random)

    @classmethod
    def from_settings(cls, rng: random.Random | None = None) -> Schedule:
        configured = settings()
        delays = tuple(float(d) for d in configured.webhooks_retry_schedule.split(",") if d)
        return cls(delays, configured.webhooks_jitter, rng or random.Random())

    def delay(self, failures: int, retry_after: float | None) -> float | None:
        """Seconds before the next attempt after ``failures`` failed ones; None: give up."""
        if failures > len(self.delays):
            return None
        base = self.delays[failures - 1]
        varied = base * (1 + self.jitter * (2 * self.rng.random() - 1))
        return max(varied, min(retry_after or 0.0, self.delays[-1]))


@dataclass
class Options:
    timeout: float
    disable_after: float
    insecure: bool
    poll: float

    @classmethod
    def from_settings(cls) -> Options:
        s = settings()
        return cls(
            s.webhooks_timeout, s.webhooks_disable_after, s.webhooks_insecure, s.webhooks_poll
        )

    @property
    def lease_seconds(self) -> float:
        return 2 * self.timeout + MARGIN_SECONDS


class Deliverer:
    """Delivers webhooks from ``pool``'s database, signing with ``keyring()``'s key, on a
    thread (a greenlet under gevent) started by :meth:`start`. :meth:`wake` makes it look at
    once (the log reader calls it on every commit it sees)."""

    def __init__(
        self,
        pool: ConnectionPool,
        keyring: Callable[[], Keyring],
        *,
        schedule: Schedule | None = None,
        options: Options | None = None,
        resolve: transport.Resolver = transport.system_resolver,
        slots: int = SLOTS,
    ) -> None:
        self.pool = pool
        self.keyring = keyring
        self.schedule = schedule or Schedule.from_settings()
        self.options = options or Options.from_settings()
        self.resolve = resolve
        self._free = threading.BoundedSemaphore(slots)
        self._slots = slots
        self._woken = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._next_purge = 0.0
        self.states: States = Recent(STATES_KEPT)  # game states where endpoints stand

    def wake(self, *_: Any) -> None:
        self._woken.set()

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="cardroom-webhooks", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        self._woken.set()

    def _run(self) -> None:
        while not self._stopping.is_set():
            claimed = self.run_once_logged()
            if claimed == 0:
                self._woken.wait(self.options.poll)
                self._woken.clear()

    def run_once_logged(self) -> int:
        """:meth:`run_once`; a failure is logged (the database away: one line) and counts 0."""
        try:
            return self.run_once()
        except Exception as exc:  # the database away, say: try again after a pause
            log_failure(log, "webhooks: claiming failed; trying again", exc)
            return 0

    def run_once(self) -> int:
        """Claim what free slots allow and post to each claimed endpoint on its own thread;
        the number claimed."""
        self._purge()
        free = 0
        while self._free.acquire(blocking=False):
            free += 1
        if free == 0:
            return 0  # every slot busy: each one's end wakes the loop
        lease = uuid.uuid4()
        try:
            with self.pool.connection() as conn:
                claimed = store.claim(conn, lease, self.options.lease_seconds, free)
        except BaseException:
            for _ in range(free):
                self._free.release()
            raise
        for _ in range(free - len(claimed)):
            self._free.release()
        for endpoint in claimed:
            threading.Thread(
                target=self._serve, args=(endpoint, lease), name="cardroom-webhook", daemon=True
            ).start()
        return len(claimed)

    def deliver_due(self, limit: int = 100, only: Sequence[uuid.UUID] | None = None) -> int:
        """Claim due endpoints (``only``: among these) and deliver to each in this thread, one
        after the other (tests and benchmarks drive delivery so); the number claimed."""
        lease = uuid.uuid4()
        with self.pool.connection() as conn:
            claimed = store.claim(conn, lease, self.options.lease_seconds, limit, only)
        for endpoint in claimed:
            self.deliver(endpoint, lease)
        return len(claimed)

    def _serve(self, endpoint: Endpoint, lease: uuid.UUID) -> None:
        try:
            self.deliver(endpoint, lease)
        except Exception as exc:
            log_failure(log, f"webhooks: delivering to endpoint {endpoint.id} failed", exc)
        finally:
            self._free.release()
            self._woken.set()  # it may have more: look again

    def deliver(self, endpoint: Endpoint, lease: uuid.UUID) -> None:
        """Post what ``endpoint`` (leased to ``lease``) is owed, one message after the other,
        while each succeeds and the lease has time for another attempt. The claim's last
        record gives the lease up in its own transaction (else a release after it does)."""
        until = time.monotonic() + self.options.lease_seconds - MARGIN_SECONDS
        with self.pool.connection() as conn:
            owed = steps(conn, endpoint, self.states)
        current = _checkpoint(endpoint)  # where the endpoint is, as this claim moves it
        walked = False  # steps with nothing to send passed since the last record
        attempts = endpoint.attempts
        released = False
        try:
            for index, step in enumerate(owed):
                if step.message is None:
                    current, walked = step.after, True
                    continue
                if time.monotonic() + self.options.timeout > until:
                    break  # not enough lease left for one more attempt: the next claim goes on
                final = _past_the_rest(owed, index)
                went, released = self._attempt(endpoint, lease, step, current, attempts, final)
                if went != "next":
                    return  # it failed (retried later), disabled the endpoint, or lost the lease
                current, walked, attempts = final or step.after, False, 0
                if final is not None:
                    break  # past every step owed, in the record that gave the lease up
            if walked:
                with self.pool.connection() as conn:
                    outcome = Outcome(current, attempts, 0.0, False, False)
                    status = self._record(conn, endpoint, lease, outcome, None, release=True)
                    released = status is not None
        finally:
            if not released:
                with self.pool.connection() as conn:
                    store.release(conn, endpoint.id, lease)  # for its retry's time

    def _attempt(
        self,
        endpoint: Endpoint,
        lease: uuid.UUID,
        step: Step,
        before: Checkpoint,
        attempts: int,
        final: Checkpoint | None,
    ) -> tuple[str | None, bool]:
        """One attempt of ``step``'s message and its record: "next" (delivered or given up),
        "stop" (it will be retried later, or the endpoint is disabled), None (lease lost); and
        whether the record gave the lease up. ``final``: the message is the last one owed,
        and once it is delivered or given up the endpoint stands there (past the steps after
        it, which send nothing)."""
        message = step.message
        assert message is not None
        answer = self.post(endpoint, message)
        ok = answer.status is not None and 200 <= answer.status < 300
        failures = attempts + 1
        passed = final or step.after
        if ok:
            outcome = Outcome(passed, 0, 0.0, True, False)
            kind = "delivered"
        elif answer.status == 410:
            reason = "the endpoint answered 410 Gone: enable it again once it takes deliveries"
            outcome = Outcome(before, failures, 0.0, False, True, disable=reason)
            kind = "gone"
        else:
            delay = self.schedule.delay(failures, answer.retry_after)
            if delay is None:
                outcome = Outcome(passed, 0, 0.0, False, True)
                kind = "given_up"
            else:
                outcome = Outcome(before, failures, delay, False, True)
                kind = "failed"
        attempted = Attempted(
            message.msg_id,
            message.type,
            message.game_id,
            message.version,
            message.body,
            failures,
            kind,
            answer.status,
            answer.duration_ms,
            answer.body_head,
            answer.error,
        )
        ends = final is not None or kind in ("gone", "failed")  # the claim's last record
        with self.pool.connection() as conn:
            status = self._record(conn, endpoint, lease, outcome, attempted, release=ends)
        if status is None:
            return None, False
        went = "next" if kind in ("delivered", "given_up") and status == "active" else "stop"
        return went, ends

    def _record(
        self,
        conn: psycopg.Connection[Any],
        endpoint: Endpoint,
        lease: uuid.UUID,
        outcome: Outcome,
        attempted: Attempted | None,
        release: bool = False,
    ) -> str | None:
        return store.record(
            conn,
            endpoint,
            lease,
            outcome,
            attempted,
            disable_after=self.options.disable_after,
            lease_seconds=self.options.lease_seconds,
            release=release,
        )

    def post(self, endpoint: Endpoint, message: Message) -> transport.Attempt:
        """One signed POST of ``message`` to ``endpoint`` (a fresh timestamp each time)."""
        headers = sign.headers(
            message.msg_id, int(time.time()), message.body, endpoint.secret, self.keyring()
        )
        return transport.post(
            endpoint.url,
            message.body,
            headers,
            insecure=self.options.insecure,
            timeout=self.options.timeout,
            resolve=self.resolve,
        )

    def _purge(self) -> None:
        now = time.monotonic()
        if now < self._next_purge:
            return
        self._next_purge = now + PURGE_SECONDS
        try:
            with self.pool.connection() as conn:
                purged = store.purge(conn)
        except (psycopg.Error, PoolTimeout) as exc:  # the next one will do
            log.warning("webhooks: could not purge the delivery log: %s", exc)
            return
        if purged:
            log.info("webhooks: purged %d attempts older than %d days", purged, store.KEPT_DAYS)


def _past_the_rest(owed: Sequence[Step], index: int) -> Checkpoint | None:
    """Where the endpoint stands once ``owed[index]``'s message is done, if no step after it
    has a message to send (it is the claim's last attempt); else None."""
    rest = owed[index + 1 :]
    if any(step.message is not None for step in rest):
        return None
    return rest[-1].after if rest else owed[index].after


def _checkpoint(endpoint: Endpoint) -> Checkpoint:
    return Checkpoint(
        endpoint.done_version,
        endpoint.done_count,
        endpoint.rematch_done,
        endpoint.feed_tx,
        endpoint.feed_id,
    )


def run_in_app(app: Any) -> Deliverer | None:
    """Deliver from a ``cardroom serve`` worker (its pool, keys and log reader), unless
    ``CARDROOM_WEBHOOKS_DELIVER`` is off."""
    if not settings().webhooks_deliver:
        return None
    games = app.extensions["cardroom"]
    hub = app.extensions["cardroom_live"]
    deliverer = Deliverer(games.store.pool, lambda: games.keys)
    hub.follow(deliverer.wake)
    hub.start()
    deliverer.start()
    app.extensions["cardroom_webhooks"] = deliverer
    return deliverer
