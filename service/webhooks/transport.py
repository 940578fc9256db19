"""The outgoing POST of a webhook delivery, and which URLs may receive one (issue 36, item 5).

A delivery goes only to a public address: the URL's host is resolved once, every address it
resolves to is checked (``check_url``), and the connection goes to one of those checked
addresses, pinned: nothing resolves the name again between the check and the connect, so a name
that rebinds to 127.0.0.1 after its check (DNS rebinding) never gets a connection there. The
name still travels where it belongs: in ``Host``, in TLS's SNI, and as the name the certificate
must match. urllib3 does this with public arguments: a connection to the address with
``server_hostname`` set to the name (httpx would need its ``sni_hostname`` extension, and brings
four more packages); its connection class follows no redirect and reads what it is asked to.

A whole attempt (connect, TLS, request, answer) has one deadline: per-read socket timeouts alone
let a server that drips a byte at a time hold a delivery for hours, so a watchdog timer shuts
the socket down when the deadline passes. It works in a plain process (a thread) and in
gunicorn's gevent workers (the monkey-patched timer is a greenlet; shutting a gevent socket down
wakes the greenlet that waits on it).
"""

from __future__ import annotations

import contextlib
import http.client
import ipaddress
import socket
import ssl
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC
from email.utils import parsedate_to_datetime
from urllib.parse import urlsplit

import urllib3
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.util.ssl_match_hostname import CertificateError

Resolver = Callable[[str, int], list[str]]
IP = ipaddress.IPv4Address | ipaddress.IPv6Address

BODY_HEAD = 1024  # bytes of an answer read, and kept in the delivery log
USER_AGENT = "cardroom-webhooks/1"
INSECURE_HINT = "CARDROOM_WEBHOOKS_INSECURE=1 allows it for local development"
_DROPPED = {"host", "content-type", "content-length", "transfer-encoding", "connection"}

_THIS_NETWORK = ipaddress.ip_network("0.0.0.0/8")
_RFC1918 = [ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")]
_SHARED = ipaddress.ip_network("100.64.0.0/10")
_UNIQUE_LOCAL = ipaddress.ip_network("fc00::/7")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")

# Each class of address refused, what it is, and whether the insecure (development) setting
# allows it: loopback and private networks are where a developer's receiver runs; link-local
# (the cloud metadata service), multicast and the rest are never a webhook receiver.
KINDS: dict[str, tuple[str, bool]] = {
    "loopback": ("a loopback address (this host itself)", True),
    "private": ("a private address (RFC 1918: 10/8, 172.16/12, 192.168/16)", True),
    "shared": ("a shared address (100.64.0.0/10, carrier-grade NAT, RFC 6598)", True),
    "unique-local": ("a unique-local IPv6 address (fc00::/7, RFC 4193)", True),
    "link-local": (
        "a link-local address (169.254.0.0/16 or fe80::/10, where cloud metadata services"
        " such as 169.254.169.254 answer)",
        False,
    ),
    "this-network": ("an unspecified address (0.0.0.0/8 or ::, which reach this host)", False),
    "multicast": ("a multicast address", False),
    "site-local": ("a site-local IPv6 address (fec0::/10, deprecated)", False),
    "reserved": ("a reserved address (240.0.0.0/4, broadcast, or reserved IPv6)", False),
    "special": (
        "a special-purpose address that is not globally reachable (documentation,"
        " benchmarking or protocol ranges in IANA's special-purpose registries)",
        False,
    ),
}


class Refused(Exception):
    """A URL no delivery may go to; the message says which part of it and why."""


class Unresolvable(Refused):
    """The URL's host name does not resolve (now): nothing was checked, nothing sent."""


def system_resolver(host: str, port: int) -> list[str]:
    """The addresses ``host`` resolves to, in the resolver's order (gevent's when patched)."""
    found: list[str] = []
    for family, _, _, _, sockaddr in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM):
        address = str(sockaddr[0])
        if family in (socket.AF_INET, socket.AF_INET6) and address not in found:
            found.append(address)
    return found


# --- which addresses ---------------------------------------------------------------------------


def address_kind(ip: IP) -> tuple[str, IP | None] | None:
    """The class of a non-public address (a key of KINDS), with the IPv4 address an IPv6 one
    carries when that is what decided it (IPv4-mapped, NAT64, 6to4); None for a public one."""
    if isinstance(ip, ipaddress.IPv6Address):
        inner = ip.ipv4_mapped or ip.sixtofour
        if ip in _NAT64:
            inner = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if inner is not None:
            carried = address_kind(inner)
            if carried is not None:
                return carried[0], inner
            if ip.ipv4_mapped or ip in _NAT64:  # the packets go to that IPv4 address
                return None
    kind = _plain_kind(ip)
    return (kind, None) if kind else None


def _plain_kind(ip: IP) -> str | None:
    # Order matters only for the message: the most specific reason first.
    if ip.is_loopback:
        return "loopback"
    if ip.is_unspecified or ip in _THIS_NETWORK:
        return "this-network"
    if ip.is_link_local:
        return "link-local"
    if ip.is_multicast:
        return "multicast"
    if any(ip in network for network in _RFC1918):
        return "private"
    if ip in _SHARED:
        return "shared"
    if ip in _UNIQUE_LOCAL:
        return "unique-local"
    if isinstance(ip, ipaddress.IPv6Address) and ip.is_site_local:
        return "site-local"
    if ip.is_reserved:
        return "reserved"
    return None if ip.is_global else "special"


def check_address(address: str, *, insecure: bool, host: str | None = None) -> None:
    """Raise Refused unless a delivery may connect to ``address`` (which ``host`` resolved to)."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        raise Refused(f"{address!r} is not an IP address") from None
    found = address_kind(ip)
    if found is None:
        return
    kind, inner = found
    description, allowed_when_insecure = KINDS[kind]
    if insecure and allowed_when_insecure:
        return
    named = host is not None and host != address
    if inner is None:
        subject = f"{host} resolves to {address}," if named else f"{address} is"
    else:
        carries = f"carries the IPv4 address {inner},"
        subject = (
            f"{host} resolves to {address}, which {carries}" if named else f"{address} {carries}"
        )
    hint = f"; {INSECURE_HINT}" if allowed_when_insecure else ""
    only = "webhooks are delivered only to public addresses"
    raise Refused(f"{subject} {description}: {only}{hint}")


# --- which URLs --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """A checked URL: where to connect (``addresses``, all checked) and what to send."""

    scheme: str
    host: str  # ASCII (IDNA), no brackets: SNI and the certificate's name
    port: int
    host_header: str
    path: str  # the request target: path and query
    addresses: tuple[str, ...]


def check_url(url: str, *, insecure: bool, resolve: Resolver = system_resolver) -> None:
    """Raise Refused unless ``url`` may receive deliveries now: ``https`` (``http`` too when
    ``insecure``), no credentials, and every address its host resolves to public (loopback and
    private ones too when ``insecure``). Unresolvable (a Refused) when the name does not
    resolve."""
    target(url, insecure=insecure, resolve=resolve)


def target(url: str, *, insecure: bool, resolve: Resolver = system_resolver) -> Target:
    """``url`` checked as check_url does, with the addresses it was checked at."""
    scheme, host, port, host_header, path = _parse(url, insecure)
    try:
        literal: IP | None = ipaddress.ip_address(host)
    except ValueError:
        literal = None
    if literal is not None:
        addresses = [host]
    else:
        try:
            addresses = list(resolve(host, port))
        except (OSError, UnicodeError) as exc:
            raise Unresolvable(f"cannot resolve {host}: {exc}") from None
        if not addresses:
            raise Unresolvable(f"cannot resolve {host}: no address")
    for address in addresses:
        check_address(address, insecure=insecure, host=None if literal else host)
    return Target(scheme, host, port, host_header, path, tuple(addresses))


def _parse(url: str, insecure: bool) -> tuple[str, str, int, str, str]:
    if any(ch.isspace() or ord(ch) < 0x20 or ord(ch) == 0x7F for ch in url):
        raise Refused("the URL contains whitespace or control characters")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise Refused(f"the URL is malformed: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in ("https", "http"):
        raise Refused(f"the URL's scheme is {scheme or 'missing'!r}: use https://")
    if scheme == "http" and not insecure:
        raise Refused(f"plain http:// is refused: use https:// ({INSECURE_HINT})")
    if parts.username is not None or parts.password is not None:
        raise Refused(
            "the URL carries credentials (user:password@): leave them out and check each"
            " delivery's signature instead"
        )
    if not parts.hostname:
        raise Refused("the URL has no host")
    if port == 0:
        raise Refused("the URL's port is 0")
    try:
        host = parts.hostname.rstrip(".").encode("idna").decode("ascii")
    except UnicodeError:
        raise Refused(f"the host name {parts.hostname!r} is not a valid (IDNA) name") from None
    default = 443 if scheme == "https" else 80
    bracketed = f"[{host}]" if ":" in host else host
    host_header = bracketed if port in (None, default) else f"{bracketed}:{port}"
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return scheme, host, port or default, host_header, path


# --- the POST ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Attempt:
    """One delivery attempt. ``status`` is None when no HTTP answer came (``error`` says why:
    "timeout after 15 s", "refused: 127.0.0.1 is a loopback address: ...", "connection
    refused"); an answer has ``error`` None, except a redirect, which is not followed
    ("redirect not followed: ..."). ``body_head``: the answer's first 1 KiB, as text."""

    status: int | None
    duration_ms: int
    body_head: str
    retry_after: float | None  # seconds, from Retry-After (a number or an HTTP date)
    error: str | None

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


def post(
    url: str,
    body: bytes,
    headers: Mapping[str, str],
    *,
    insecure: bool,
    timeout: float = 15.0,
    resolve: Resolver = system_resolver,
    ssl_context: ssl.SSLContext | None = None,
) -> Attempt:
    """POST ``body`` (JSON) with ``headers`` to ``url``, once, within ``timeout`` seconds in
    all; never raises for the network's or the endpoint's failures. ``ssl_context``: the
    certificates trusted (default: the system's); tests pass their own CA."""
    started = time.monotonic()
    deadline = started + timeout
    try:
        checked = target(url, insecure=insecure, resolve=resolve)
    except Unresolvable as exc:
        return _failed(started, str(exc))
    except Refused as exc:
        return _failed(started, f"refused: {exc}")
    sent = {k: v for k, v in headers.items() if k.lower() not in _DROPPED}
    sent.setdefault("User-Agent", USER_AGENT)
    sent.update({"Host": checked.host_header, "Content-Type": "application/json"})
    error = "no address to connect to"
    for address in checked.addresses:  # each checked above: no second resolution
        if time.monotonic() >= deadline:
            return _failed(started, f"timeout after {timeout:g} s")
        exchange = _Exchange(checked, address, deadline, ssl_context)
        attempt, connected = exchange.run(body, sent, started, timeout)
        if attempt.status is not None or connected:
            return attempt
        error = attempt.error or error  # could not connect to this address: try the next
    return _failed(started, error)


def _failed(started: float, error: str) -> Attempt:
    return Attempt(None, _elapsed_ms(started), "", None, error)


def _elapsed_ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


class _Exchange:
    """One connection to one checked address, cut by a watchdog at the deadline."""

    def __init__(
        self, checked: Target, address: str, deadline: float, context: ssl.SSLContext | None
    ) -> None:
        self.checked = checked
        self.deadline = deadline
        self.cut = threading.Event()
        remaining = max(deadline - time.monotonic(), 0.001)
        self.conn: HTTPConnection
        if checked.scheme == "https":  # TLS speaks the name to the address: SNI and cert check
            self.conn = HTTPSConnection(
                address,
                checked.port,
                timeout=remaining,
                server_hostname=checked.host,
                ssl_context=context,
            )
        else:
            self.conn = HTTPConnection(address, checked.port, timeout=remaining)

    def _cut(self) -> None:
        self.cut.set()
        sock = self.conn.sock
        if sock is not None:
            with contextlib.suppress(OSError):  # closed meanwhile
                sock.shutdown(socket.SHUT_RDWR)  # wakes the read or write waiting on it

    def run(
        self, body: bytes, headers: dict[str, str], started: float, timeout: float
    ) -> tuple[Attempt, bool]:
        """The attempt, and whether a connection was made (else the next address may do)."""
        watchdog = threading.Timer(max(self.deadline - time.monotonic(), 0.0), self._cut)
        watchdog.daemon = True
        watchdog.start()
        connected = False
        try:
            self.conn.connect()
            connected = True
            self.conn.request("POST", self.checked.path, body=body, headers=headers,
                              preload_content=False, decode_content=False)  # fmt: skip
            answer = self.conn.getresponse()
            head = answer.read(BODY_HEAD, decode_content=False)
            return _answered(answer, head, started), True
        except Exception as exc:  # every failure of the network or the endpoint is an Attempt
            if self.cut.is_set() or _timed_out(exc):
                return _failed(started, f"timeout after {timeout:g} s"), connected
            return _failed(started, describe(exc, self.checked.host)), connected
        finally:
            watchdog.cancel()
            self.conn.close()


def _answered(answer: urllib3.BaseHTTPResponse, head: bytes, started: float) -> Attempt:
    error = None
    if 300 <= answer.status < 400:
        location = (answer.headers.get("Location") or "")[:200]
        error = f"redirect not followed: {answer.status} to {location or 'no Location'}"
    return Attempt(
        status=answer.status,
        duration_ms=_elapsed_ms(started),
        body_head=head.decode("utf-8", "replace"),
        retry_after=parse_retry_after(answer.headers.get("Retry-After"), time.time()),
        error=error,
    )


def _timed_out(exc: BaseException) -> bool:
    # urllib3's NewConnectionError is a ConnectTimeoutError too (for compatibility): only the
    # socket's own timeout, found in the chain, says the time ran out.
    return any(isinstance(cause, TimeoutError) for cause in _chain(exc))


def _chain(exc: BaseException) -> list[BaseException]:
    found: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in found:
        found.append(current)
        current = current.__cause__ or current.__context__
    return found


def describe(exc: BaseException, host: str) -> str:
    """A failure in words a client developer can act on."""
    for cause in _chain(exc):
        if isinstance(cause, ssl.SSLCertVerificationError):
            return f"TLS certificate not accepted for {host}: {cause.verify_message}"
        if isinstance(cause, CertificateError):
            return f"TLS certificate not accepted for {host}: {cause}"
        if isinstance(cause, ssl.SSLError):
            return f"TLS handshake failed: {cause.reason or cause}"
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused"
        if isinstance(cause, http.client.RemoteDisconnected):
            return "connection closed without an answer"
        if isinstance(cause, ConnectionResetError | BrokenPipeError):
            return "connection reset by the endpoint"
        if isinstance(cause, http.client.HTTPException):
            return f"not an HTTP answer: {type(cause).__name__} {cause}"[:300]
    if isinstance(exc, OSError) and exc.strerror:
        return f"network error: {exc.strerror}"
    return f"network error: {type(exc).__name__}: {exc}"[:300]


def parse_retry_after(value: str | None, now: float) -> float | None:
    """Retry-After in seconds from ``now`` (Unix time): delay-seconds or an HTTP date (RFC 9110
    10.2.3); None when absent or unreadable, 0 for a date already past."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    if text.isdigit():
        return float(int(text))
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # an HTTP date is GMT; the parser leaves "-0000" naive
        when = when.replace(tzinfo=UTC)
    return max(when.timestamp() - now, 0.0)
