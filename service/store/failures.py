"""Why the database could not serve a request: :class:`StoreUnavailable` and its ``cause``.

Each cause is a different thing for an operator to look at, so the 503 a client gets names it
(service/http/problems.py): a lock held too long is not a network fault.
"""

from __future__ import annotations

import logging
from typing import Literal

import psycopg
from psycopg import errors
from psycopg_pool import PoolTimeout

Cause = Literal[
    "down",  # the database cannot be reached, or refuses connections
    "pool",  # every connection of this process's pool is busy
    "lock",  # a statement waited for a lock held elsewhere
    "statement",  # a statement ran past its time
    "standby",  # a commit waited for a synchronous standby that did not confirm it
    "read_only",  # a standby, or default_transaction_read_only
    "disk_full",
]


class StoreError(Exception):
    """Base of the store's errors."""


class KeyTaken(StoreError):
    """A keyed request's record (or kept answer) could not be written: its key has one already,
    committed by another send of it (a copy that ran at the same time, or earlier), or a record
    that expired and was not purged yet. Nothing of the request was written: its transaction
    rolled back (service/http/idempotency.py then replays the first answer)."""


class StoreUnavailable(StoreError):
    """The database cannot serve the request now; ``cause`` says why."""

    def __init__(self, message: str, cause: Cause = "down") -> None:
        super().__init__(message)
        self.cause: Cause = cause


def cause_of(error: BaseException) -> Cause:
    """The cause of a psycopg (or pool) error met while using the database."""
    if isinstance(error, errors.LockNotAvailable):
        return "lock"
    if isinstance(error, errors.QueryCanceled):
        return "statement"
    if isinstance(error, errors.ReadOnlySqlTransaction):
        return "read_only"
    if isinstance(error, errors.DiskFull):
        return "disk_full"
    if isinstance(error, PoolTimeout):
        return "pool"
    return "down"


def unavailable(error: psycopg.Error, cause: Cause | None = None) -> StoreUnavailable:
    """``error`` as a :class:`StoreUnavailable` (raise it ``from error``)."""
    return StoreUnavailable(str(error), cause or cause_of(error))


def database_away(error: BaseException) -> Cause | None:
    """Why the database was away, if ``error`` says it was (not a fault of the code): a
    background loop logs it as one line, not a traceback, and tries again."""
    if isinstance(error, StoreUnavailable):
        return error.cause
    if isinstance(error, (psycopg.OperationalError, PoolTimeout)):
        return cause_of(error)
    return None


def log_failure(
    log: logging.Logger, what: str, error: BaseException, fault: int = logging.WARNING
) -> None:
    """Log a background loop's failure: the database away in one line (it is not a fault of
    the code, and a failover would log a traceback per attempt), anything else with its
    traceback at level ``fault``."""
    cause = database_away(error)
    if cause is None:
        log.log(fault, what, exc_info=error)
    else:
        log.warning("%s: the database is away (%s): %s", what, cause, error)
