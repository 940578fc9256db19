"""Every error the client raises is a ``CardroomError`` (issue 38, item 2): no ``httpx``
exception escapes a public call.

- ``Refused``: the service answered, and refused (4xx, or a 5xx other than 503): its ``status``
  and its problem+json (``code``, ``detail``; see the service's docs/errors.md).
- ``RateLimited`` (a ``Refused``): ``429`` for longer than the retry budget; ``retry_after``.
- ``Unavailable``: the service could not be reached (connection refused or dropped, a timeout)
  or answered ``503`` for longer than the retry budget (``Client(retry_budget=…)``, 120 s by
  default): ``cause`` says why (the last transport error, or the 503's ``cause``: ``down``,
  ``pool``, …), ``waited`` how many seconds were spent trying; ``status`` is 503 or None.
- ``ReceiptError``: a receipt that does not verify (receipts.py).
- ``WebhookError``: a webhook delivery not shown to be the service's (webhooks.py).
- ``RulesNotInstalled``: ``audit_export`` without the rules package (audit.py).
- ``ProtocolError``: an answer this client cannot read (not JSON where JSON is due)."""

from __future__ import annotations

from typing import Any


class CardroomError(Exception):
    """The base of every error of this package. ``status``, ``problem``, ``code``, ``detail``
    and ``cause`` describe the service's answer when there was one (else None / empty)."""

    status: int | None = None
    code: str = ""
    detail: str = ""
    cause: str | None = None

    def __init__(self, message: str, *, status: int | None = None, problem: Any = None) -> None:
        super().__init__(message)
        self.problem: dict[str, Any] = problem if isinstance(problem, dict) else {}
        self.status = status
        self.code = str(self.problem.get("code") or "")
        self.detail = str(self.problem.get("detail") or "")
        cause = self.problem.get("cause")
        self.cause = str(cause) if cause is not None else None


def _described(status: int, problem: dict[str, Any], method: str, url: str) -> str:
    code, detail, cause = problem.get("code", ""), problem.get("detail", ""), problem.get("cause")
    because = f" (cause: {cause})" if cause else ""
    return f"{method} {url}: {status} {code}{because}: {detail}"


class Refused(CardroomError):
    """A request the service refused: its ``status``, ``code`` and ``detail``."""

    status: int

    def __init__(self, status: int, problem: dict[str, Any], method: str, url: str) -> None:
        super().__init__(_described(status, problem, method, url), status=status, problem=problem)
        self.method, self.url = method, url


class RateLimited(Refused):
    """``429``, still, once the retry budget was spent; ``retry_after``: the seconds it asked."""

    def __init__(
        self, problem: dict[str, Any], method: str, url: str, retry_after: float = 0.0
    ) -> None:
        super().__init__(429, problem, method, url)
        self.retry_after = retry_after


class Unavailable(CardroomError):
    """The service could not be reached, or said ``503``, for ``waited`` seconds (the retry
    budget): ``cause`` says why (the transport error, or the 503's ``cause``)."""

    def __init__(
        self,
        what: str,
        cause: str,
        waited: float,
        *,
        status: int | None = None,
        problem: dict[str, Any] | None = None,
    ) -> None:
        answered = f" {status} {(problem or {}).get('code', '')}" if status else ""
        super().__init__(
            f"{what}:{answered} unavailable for {waited:.1f} s (cause: {cause})",
            status=status,
            problem=problem,
        )
        self.cause = cause
        self.waited = waited


class ProtocolError(CardroomError):
    """An answer this client cannot read (a proxy's HTML page where JSON was due, say)."""


class RulesNotInstalled(CardroomError):
    """``audit_export`` needs the game rules (the repository's ``domain/`` package)."""
