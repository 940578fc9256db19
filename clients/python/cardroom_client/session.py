"""What the client's parts need of a ``Client`` (client.py): its base URL, its HTTP
connection, its retry patience and sleep, and requests retried by its rule.

Games, seats, accounts and streams take a client as this protocol rather than importing
client.py, which imports them: the package has no import cycle."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import httpx

from .retry import Patience


class Session(Protocol):
    base_url: str
    http: httpx.Client

    def patience(self, what: str) -> Patience: ...

    def sleep(self, seconds: float) -> None: ...

    def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        token: str | None = None,
        params: dict[str, Any] | None = None,
        ok: Sequence[int] = ...,
    ) -> httpx.Response: ...

    def json(self, method: str, path: str, **kwargs: Any) -> Any: ...
