"""What a refused request looks like, and when to try it again: no input or output here, the
sync ``Client`` and the ``AsyncClient`` each send and sleep as this says (issue 38, items 2, 5).

The retry budget (``Client(retry_budget=…)``, ``RETRY_BUDGET`` = 120 s by default): a request
that cannot reach the service (connection refused or dropped, a timeout) is tried again after a
short pause (0.25 s, doubling up to 2 s), and one answered ``429``, ``503`` or ``409
too_many_conflicts`` after its ``Retry-After``, for as long as the failures have lasted less than
the budget; then it raises ``Unavailable`` (``RateLimited`` for a 429). A ``POST`` keeps its
``Idempotency-Key`` across the tries, so it takes effect once. ``events()`` and ``Bot.play``
wait out an outage the same way: a server restarted within the budget loses nothing."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx

from .errors import (
    CardroomError,
    ProtocolError,
    RateLimited,
    Refused,
    Unavailable,
)

RETRY_AFTER_CAP = 60.0  # seconds: a Retry-After longer than this is waited this long
RETRY_BUDGET = 120.0  # seconds a run of failures may last before Unavailable
FIRST_PAUSE, LONGEST_PAUSE = 0.25, 2.0  # seconds between tries of an unreachable service

__all__ = ["CardroomError", "Patience", "is_busy", "problem", "refused", "retry_after"]


def retry_after(response: httpx.Response | None, default: float = 1.0) -> float:
    """The seconds ``Retry-After`` asks for (a number; a date or nothing: ``default``)."""
    if response is None:
        return default
    try:
        return min(max(float(response.headers.get("Retry-After", default)), 0.0), RETRY_AFTER_CAP)
    except ValueError:
        return default


def is_busy(response: httpx.Response) -> bool:
    """An answer to retry after ``Retry-After``: nothing was done, and later it may be."""
    if response.status_code in (429, 503):
        return True
    if response.status_code == 409:
        return problem(response).get("code") == "too_many_conflicts"
    return False


def problem(answer: httpx.Response) -> dict[str, Any]:
    try:
        body = answer.json()
    except ValueError:
        return {"code": "", "detail": answer.text[:500]}
    return body if isinstance(body, dict) else {"detail": str(body)}


def refused(answer: httpx.Response, method: str) -> Refused:
    """The error a final answer outside the expected statuses raises."""
    url = str(answer.url)
    if answer.status_code == 429:
        return RateLimited(problem(answer), method, url, retry_after(answer))
    return Refused(answer.status_code, problem(answer), method, url)


def decoded(answer: httpx.Response) -> Any:
    """The answer's JSON body, or ProtocolError."""
    try:
        return answer.json()
    except ValueError:
        raise ProtocolError(
            f"{answer.request.method} {answer.url}: {answer.status_code}, not JSON:"
            f" {answer.text[:200]!r}"
        ) from None


def describe(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__


class Patience:
    """One run of failures against the retry budget: ``transport_failed`` and ``busy`` say how
    long to pause before the next try, or raise once the run has lasted ``budget`` seconds
    (time slept counts even when ``sleep`` is a test's stand-in) or ``retries`` tries were
    made; ``ok`` ends the run."""

    def __init__(
        self,
        what: str,
        budget: float = RETRY_BUDGET,
        retries: int | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.what, self.budget, self.retries, self.clock = what, budget, retries, clock
        self.ok()

    def ok(self) -> None:
        self.since: float | None = None
        self.slept = 0.0
        self.tries = 0

    @property
    def waited(self) -> float:
        return 0.0 if self.since is None else max(self.clock() - self.since, self.slept)

    def _pause(self, wanted: float, error: Callable[[float], CardroomError]) -> float:
        if self.since is None:
            self.since = self.clock()
        self.tries += 1
        waited = self.waited
        if waited >= self.budget or (self.retries is not None and self.tries >= self.retries):
            raise error(waited)
        pause = max(0.0, min(wanted, self.budget - waited))
        self.slept += pause
        return pause

    def transport_failed(self, exc: BaseException) -> float:
        """After a connection refused, dropped or timed out: the pause, or Unavailable."""
        wanted = min(FIRST_PAUSE * 2.0**self.tries, LONGEST_PAUSE)

        def unavailable(waited: float) -> CardroomError:
            error = Unavailable(self.what, describe(exc), waited)
            error.__cause__ = exc
            return error

        return self._pause(wanted, unavailable)

    def busy(self, answer: httpx.Response) -> float:
        """After a 429, 503 or 409 too_many_conflicts: its Retry-After, or its error."""

        def gave_up(waited: float) -> CardroomError:
            if answer.status_code != 503:
                return refused(answer, answer.request.method)
            body = problem(answer)
            cause = str(body.get("cause") or body.get("code") or "503")
            return Unavailable(self.what, cause, waited, status=503, problem=body)

        return self._pause(retry_after(answer), gave_up)
