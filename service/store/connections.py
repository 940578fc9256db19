"""What the store's parts need of the event store (service/store/events.py): its connections.

The event store imports those parts to write their rows in its own statements; they take it
as this protocol rather than importing it back, so the store has no import cycle."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Protocol

import psycopg


class Connections(Protocol):
    """A source of pooled connections; an unreachable database is ``StoreUnavailable``."""

    def connection(self) -> AbstractContextManager[psycopg.Connection[Any]]: ...
