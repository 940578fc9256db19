"""What the service layer refuses, in its own terms (no HTTP here): service/http/problems.py
turns a ``ServiceError`` into problem+json the way it turns a domain error, by its ``kind``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from domain.decider import DomainError


@dataclass
class ServiceError(Exception):
    """A request the service refuses; ``code`` is stable and machine-readable. ``kind`` is the
    domain's (``rule``, ``conflict``); ``retry_after``: seconds after which the same request may
    succeed (the game was busy), None when retrying cannot help. ``where``: the game's version
    and turn when the refusal is about a game, so a client can resynchronise without a GET."""

    code: str
    message: str
    kind: str = "rule"
    retry_after: int | None = None
    where: dict[str, Any] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        super().__init__(self.message)


def rule_broken(code: str, message: str) -> ServiceError:
    return ServiceError(code, message, "rule")


def conflict(code: str, message: str, retry_after: int | None = None, **where: Any) -> ServiceError:
    return ServiceError(code, message, "conflict", retry_after, where)


INVALID_INVITATION = (
    "this is not the game's invitation, or its creator revoked it: ask them for the current link"
)


def invalid_invitation() -> ServiceError:
    """403: the invitation presented to join a private game is not (or no longer) in force."""
    return ServiceError("invalid_invitation", INVALID_INVITATION, "forbidden")


def refused(error: DomainError, **where: Any) -> ServiceError:
    """The rules' refusal, with where the game is (``where``)."""
    return ServiceError(
        error.code, error.message, error.kind, None, where, dict(error.details or {})
    )
