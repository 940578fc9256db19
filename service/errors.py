"""What the service layer refuses, in its own terms (no HTTP here): service/http/problems.py
turns a ``ServiceError`` into problem+json the way it turns a domain error, by its ``kind``."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class ServiceError(Exception):
    """A request the service refuses; ``code`` is stable and machine-readable. ``kind`` is the
    domain's (``rule``, ``conflict``); ``retry_after``: seconds after which the same request may
    succeed (the game was busy), None when retrying cannot help."""

    code: str
    message: str
    kind: str = "rule"
    retry_after: int | None = None

    def __post_init__(self) -> None:
        super().__init__(self.message)


def rule_broken(code: str, message: str) -> ServiceError:
    return ServiceError(code, message, "rule")


def conflict(code: str, message: str, retry_after: int | None = None) -> ServiceError:
    return ServiceError(code, message, "conflict", retry_after)
