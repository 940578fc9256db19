"""What a refused request looks like, and when to try it again."""

from __future__ import annotations

from typing import Any

import httpx

RETRY_AFTER_CAP = 60.0  # seconds: a Retry-After longer than this is waited this long


class CardroomError(Exception):
    """A request the service refused: its status and its problem+json (``code``, ``detail``)."""

    def __init__(self, status: int, problem: dict[str, Any], method: str, url: str) -> None:
        self.status = status
        self.problem = problem
        self.code: str = problem.get("code", "")
        self.detail: str = problem.get("detail", "")
        super().__init__(f"{method} {url}: {status} {self.code}: {self.detail}")


def retry_after(response: httpx.Response, default: float = 1.0) -> float:
    """The seconds ``Retry-After`` asks for (a number; a date or nothing: ``default``)."""
    try:
        return min(max(float(response.headers.get("Retry-After", default)), 0.0), RETRY_AFTER_CAP)
    except ValueError:
        return default


def is_busy(response: httpx.Response) -> bool:
    """An answer to retry after ``Retry-After``: nothing was done, and later it may be."""
    if response.status_code in (429, 503):
        return True
    if response.status_code == 409:
        try:
            return bool(response.json().get("code") == "too_many_conflicts")
        except ValueError:
            return False
    return False


def problem(answer: httpx.Response) -> dict[str, Any]:
    try:
        body = answer.json()
    except ValueError:
        return {"code": "", "detail": answer.text[:500]}
    return body if isinstance(body, dict) else {"detail": str(body)}
