"""Client addresses behind reverse proxies: ``X-Forwarded-For`` is believed only from a peer in
``CARDROOM_TRUSTED_PROXIES`` (addresses or CIDRs), and then only as far as it was written by
trusted proxies: the client is the rightmost address that is not a trusted proxy. Anyone can
send the header, so addresses a client put at its left are never taken (a client cannot pick
another's rate limits, or escape its own, by sending one).

Applied as WSGI middleware: ``REMOTE_ADDR`` becomes the client's address for everything after
(the rate limits, the stream cap, the waiting-games cap); the peer stays in ``cardroom.peer``.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterable
from typing import Any

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
PEER = "cardroom.peer"


def networks(setting: str) -> list[Network]:
    """The networks of ``CARDROOM_TRUSTED_PROXIES`` (validated by service/settings.py)."""
    return [
        ipaddress.ip_network(part.strip(), strict=False)
        for part in setting.split(",")
        if part.strip()
    ]


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    text = text.strip()
    if text.startswith("[") and "]" in text:  # [v6]:port
        text = text[1 : text.index("]")]
    elif text.count(":") == 1:  # v4:port
        text = text.partition(":")[0]
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def client_address(peer: str, forwarded_for: str | None, trusted: Iterable[Network]) -> str:
    """The client's address: ``peer`` unless it is trusted; then, walking ``forwarded_for``
    from the right, the first address that is not trusted (an entry that is no address ends
    the walk at the hop that passed it on; all trusted: the leftmost)."""
    trusted = list(trusted)

    def is_trusted(address: Any) -> bool:
        return address is not None and any(address in network for network in trusted)

    if not forwarded_for or not is_trusted(_address(peer)):
        return peer
    client = peer
    for hop in reversed(forwarded_for.split(",")):
        address = _address(hop)
        if address is None:
            return client
        client = str(address)
        if not is_trusted(address):
            return client
    return client


class TrustedProxies:
    """WSGI middleware: ``REMOTE_ADDR`` from ``X-Forwarded-For`` when the peer is trusted."""

    def __init__(self, app: Callable[..., Any], trusted: list[Network]) -> None:
        self.app = app
        self.trusted = trusted

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        peer = environ.get("REMOTE_ADDR", "")
        environ[PEER] = peer
        environ["REMOTE_ADDR"] = client_address(
            peer, environ.get("HTTP_X_FORWARDED_FOR"), self.trusted
        )
        return self.app(environ, start_response)


def install(app: Any, setting: str) -> None:
    """Wrap ``app.wsgi_app`` if any proxy is trusted (no cost otherwise)."""
    trusted = networks(setting)
    if trusted:
        app.wsgi_app = TrustedProxies(app.wsgi_app, trusted)
