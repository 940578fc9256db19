"""Sending one webhook attempt: the target checked (HTTPS, no forbidden address, also at connect
time), no redirect followed, at most 1 KiB of the answer read, never an exception for a network
error.

A minimal stand-in with the interface the delivery uses; the full module comes from the
webhook-transport work."""

from __future__ import annotations

import http.client
import ipaddress
import socket
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

Resolver = Callable[[str, int], list[str]]
MAX_BODY = 1024


def system_resolver(host: str, port: int) -> list[str]:
    return sorted({str(info[4][0]) for info in socket.getaddrinfo(host, port)})


class Refused(Exception):
    """The URL may not be a webhook's target; the message says why and what to do."""


@dataclass(frozen=True)
class Attempt:
    status: int | None
    duration_ms: int
    body_head: str
    retry_after: float | None
    error: str | None


def _target(url: str, insecure: bool) -> tuple[str, str, int, str]:
    parts = urlsplit(url)
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise Refused(f"{url!r} is not an http(s) URL with a host")
    if parts.scheme == "http" and not insecure:
        raise Refused(
            "webhook URLs must be https:// (plain http only with CARDROOM_WEBHOOKS_INSECURE=1)"
        )
    port = parts.port or (443 if parts.scheme == "https" else 80)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return parts.scheme, parts.hostname, port, path


def _check_address(address: str, insecure: bool) -> None:
    ip = ipaddress.ip_address(address.split("%")[0])
    if not insecure and not ip.is_global:
        raise Refused(
            f"the URL's host resolves to {address}, a loopback, private, link-local or other"
            " special address: a webhook must reach a public address"
        )


def check_url(url: str, *, insecure: bool, resolve: Resolver = system_resolver) -> None:
    _, host, port, _ = _target(url, insecure)
    try:
        addresses = resolve(host, port)
    except OSError as exc:
        raise Refused(f"the URL's host {host!r} does not resolve: {exc}") from None
    if not addresses:
        raise Refused(f"the URL's host {host!r} resolves to no address")
    for address in addresses:
        _check_address(address, insecure)


def _retry_after(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


def post(
    url: str,
    body: bytes,
    headers: Mapping[str, str],
    *,
    insecure: bool,
    timeout: float = 15.0,
    resolve: Resolver = system_resolver,
) -> Attempt:
    started = time.monotonic()

    def took() -> int:
        return int((time.monotonic() - started) * 1000)

    try:
        scheme, host, port, path = _target(url, insecure)
        addresses = resolve(host, port)
        if not addresses:
            raise Refused(f"{host!r} resolves to no address")
        for address in addresses:
            _check_address(address, insecure)
        connection: http.client.HTTPConnection
        if scheme == "https":
            # By name, for the certificate's check (this stand-in resolves it again there).
            connection = http.client.HTTPSConnection(host, port, timeout=timeout)
        else:
            connection = http.client.HTTPConnection(addresses[0], port, timeout=timeout)
        try:
            sent = {"Host": host, "Content-Type": "application/json", **headers}
            connection.request("POST", path, body=body, headers=sent)
            answer = connection.getresponse()
            head = answer.read(MAX_BODY).decode("utf-8", "replace")
            retry = _retry_after(answer.getheader("Retry-After"))
            return Attempt(answer.status, took(), head, retry, None)
        finally:
            connection.close()
    except Refused as exc:
        return Attempt(None, took(), "", None, f"refused: {exc}")
    except (OSError, http.client.HTTPException, ValueError) as exc:
        return Attempt(None, took(), "", None, f"{type(exc).__name__}: {exc}")
