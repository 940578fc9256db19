"""service/webhooks/transport.py (issue 36, item 5): the 8 forbidden targets refused (loopback v4
and v6, RFC 1918, link-local 169.254.169.254, unique-local, a name resolving to loopback, a
redirect to loopback, a rebinding name), refused before any connection; and the POST itself
against real receivers on loopback (pytest-httpserver): 2xx, 500, 410, a 3xx not followed,
Retry-After, at most 1 KiB of an answer read, a whole-attempt timeout, TLS with the name (SNI,
certificate) while the connection is pinned to the checked address, and under gevent.

No packet leaves loopback: the ``loopback_only`` guard fails any connect elsewhere and records
every connect, so a refusal is shown to happen before any connection at all. Names are answered
by stub resolvers, never by DNS. The one public address (``PUBLIC``) is only ever checked, in
``check_url``, which never connects."""

from __future__ import annotations

import datetime
import ipaddress
import json
import re
import socket
import ssl
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric.ec import SECP256R1, generate_private_key
from cryptography.x509.oid import NameOID
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from service.webhooks import transport
from service.webhooks.transport import Attempt, Refused, check_url, post

ROOT = Path(__file__).resolve().parent.parent
PUBLIC = "93.184.215.14"  # a globally routable address, only ever checked, never connected to
BODY = b'{"type":"game.turn","game_id":"g","version":7}'
HEADERS = {"webhook-id": "msg_1", "webhook-timestamp": "1700000000", "webhook-signature": "v1,x"}


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every address this process connects to while the test runs; a connect outside loopback
    fails the test before any packet is sent."""
    connected: list[str] = []
    real_connect = socket.socket.connect

    def guarded(self: socket.socket, address: Any) -> None:
        host = address[0] if isinstance(address, tuple) else str(address)
        assert ipaddress.ip_address(host.split("%")[0]).is_loopback, f"connect to {host}"
        connected.append(host)
        real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)
    return connected


def resolver(*answers: list[str]) -> tuple[Callable[[str, int], list[str]], list[str]]:
    """A stub resolver giving ``answers`` in turn (the last one again after that), and the
    names it was asked."""
    asked: list[str] = []

    def resolve(host: str, port: int) -> list[str]:
        asked.append(host)
        return list(answers[min(len(asked), len(answers)) - 1])

    return resolve, asked


def url_of(server: HTTPServer, path: str = "/hook") -> str:
    return f"http://127.0.0.1:{server.port}{path}"


@pytest.fixture
def receiver() -> Iterator[HTTPServer]:
    """A threaded receiver on 127.0.0.1 (a stalled handler does not hold the next request)."""
    server = HTTPServer(host="127.0.0.1", port=0, threaded=True)
    server.start()
    yield server
    server.clear()
    server.stop()


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """Set at teardown: the stalling receivers' handlers wait on it."""
    event = threading.Event()
    yield event
    event.set()


# --- the 8 forbidden targets ------------------------------------------------------------------

LITERALS = {
    "loopback v4": ("https://127.0.0.1/hook", "loopback"),
    "loopback v6": ("https://[::1]/hook", "loopback"),
    "RFC 1918": ("https://10.1.2.3/hook", "private address (RFC 1918"),
    "link-local (metadata)": ("https://169.254.169.254/latest/meta-data/", "link-local"),
    "unique-local": ("https://[fd12:3456:789a::1]/hook", "unique-local"),
}


@pytest.mark.parametrize("name", LITERALS)
def test_a_forbidden_address_is_refused_before_any_connection(
    name: str, loopback_only: list[str]
) -> None:
    url, words = LITERALS[name]
    with pytest.raises(Refused, match=re.escape(words)):
        check_url(url, insecure=False)
    attempt = post(url, BODY, HEADERS, insecure=False)
    assert attempt.status is None and attempt.error is not None
    assert attempt.error.startswith("refused: ") and words in attempt.error
    assert loopback_only == []  # refused before any connection


def test_a_name_resolving_to_loopback_is_refused(loopback_only: list[str]) -> None:
    resolve, asked = resolver(["127.0.0.1"])
    with pytest.raises(Refused, match="^hooks.example resolves to 127.0.0.1, a loopback address"):
        check_url("https://hooks.example/hook", insecure=False, resolve=resolve)
    attempt = post("https://hooks.example/hook", BODY, HEADERS, insecure=False, resolve=resolve)
    assert attempt.error is not None and "resolves to 127.0.0.1" in attempt.error
    assert asked == ["hooks.example", "hooks.example"] and loopback_only == []


def test_a_redirect_to_loopback_is_not_followed(receiver: HTTPServer) -> None:
    """The receiver (loopback, allowed in insecure mode) answers 302 to another loopback
    server: the attempt is the 302, and the second server gets nothing."""
    with HTTPServer(host="127.0.0.1", port=0) as second:
        second.expect_request("/stolen").respond_with_data("took it")
        location = url_of(second, "/stolen")
        receiver.expect_request("/hook", method="POST").respond_with_response(
            Response(status=302, headers={"Location": location})
        )
        attempt = post(url_of(receiver), BODY, HEADERS, insecure=True)
        assert second.log == []
    assert attempt.status == 302 and not attempt.ok
    assert attempt.error == f"redirect not followed: 302 to {location}"
    assert len(receiver.log) == 1


def test_a_rebinding_name_never_gets_a_connection_to_its_second_answer(
    loopback_only: list[str],
) -> None:
    """Checked at registration it was public; at delivery time it answers loopback: refused
    before any connection. Every address of one answer is checked: public first, loopback
    second is refused too."""
    resolve, asked = resolver([PUBLIC], ["127.0.0.1"])
    check_url("https://rebind.example/hook", insecure=False, resolve=resolve)
    attempt = post("https://rebind.example/hook", BODY, HEADERS, insecure=False, resolve=resolve)
    assert attempt.error is not None and "rebind.example resolves to 127.0.0.1" in attempt.error
    assert asked == ["rebind.example"] * 2 and loopback_only == []
    both, _ = resolver([PUBLIC, "127.0.0.1"])
    with pytest.raises(Refused, match="resolves to 127.0.0.1"):
        check_url("https://rebind.example/hook", insecure=False, resolve=both)
    attempt = post("https://rebind.example/hook", BODY, HEADERS, insecure=False, resolve=both)
    assert attempt.error is not None and attempt.error.startswith("refused: ")
    assert loopback_only == []


def test_the_connection_is_pinned_to_the_address_that_was_checked(
    receiver: HTTPServer, loopback_only: list[str]
) -> None:
    """The name is resolved once per attempt: a resolver whose later answers point elsewhere
    (127.0.0.2, where nothing listens) is not asked again, and the connection goes to the
    checked 127.0.0.1, with the name in Host."""
    receiver.expect_request("/hook", method="POST").respond_with_data("ok")
    resolve, asked = resolver(["127.0.0.1"], ["127.0.0.2"])
    url = f"http://pinned.example:{receiver.port}/hook"
    attempt = post(url, BODY, HEADERS, insecure=True, resolve=resolve)
    assert attempt.status == 200 and attempt.error is None
    assert asked == ["pinned.example"] and loopback_only == ["127.0.0.1"]
    request = receiver.log[0][0]
    assert request.headers["Host"] == f"pinned.example:{receiver.port}"


# --- more of what check_url refuses -----------------------------------------------------------

REFUSED = {
    "plain http": ("http://hooks.example/", "use https://"),
    "credentials": ("https://user:pw@hooks.example/", "credentials"),
    "scheme": ("ftp://hooks.example/", "scheme is 'ftp'"),
    "no host": ("https:///hook", "no host"),
    "bad port": ("https://hooks.example:99999/", "malformed"),
    "control character": ("https://hooks.example/\r\nX: y", "control"),
    "0.0.0.0": ("https://0.0.0.0/", "unspecified"),
    "::": ("https://[::]/", "unspecified"),
    "multicast": ("https://224.0.0.1/", "multicast"),
    "broadcast": ("https://255.255.255.255/", "reserved"),
    "class E": ("https://240.0.0.1/", "reserved"),
    "CGNAT": ("https://100.64.0.1/", "shared address"),
    "172.16/12": ("https://172.20.0.1/", "RFC 1918"),
    "192.168/16": ("https://192.168.1.1/", "RFC 1918"),
    "fe80::/10": ("https://[fe80::1]/", "link-local"),
    "IPv4-mapped loopback": ("https://[::ffff:127.0.0.1]/", "carries the IPv4 address 127.0.0.1"),
    "IPv4-mapped metadata": ("https://[::ffff:169.254.169.254]/", "link-local"),
    "NAT64 of RFC 1918": ("https://[64:ff9b::a00:1]/", "carries the IPv4 address 10.0.0.1"),
    "6to4 of loopback": ("https://[2002:7f00:1::1]/", "carries the IPv4 address 127.0.0.1"),
    "site-local": ("https://[fec0::1]/", "site-local"),
    "documentation": ("https://192.0.2.10/", "not globally reachable"),
    "benchmarking": ("https://198.18.0.1/", "not globally reachable"),
}


@pytest.mark.parametrize("name", REFUSED)
def test_check_url_refuses(name: str) -> None:
    url, words = REFUSED[name]
    with pytest.raises(Refused, match=re.escape(words)):
        check_url(url, insecure=False, resolve=resolver([PUBLIC])[0])


def test_insecure_allows_http_loopback_and_private_but_not_metadata_or_multicast() -> None:
    for url in (
        "http://127.0.0.1:8080/",
        "http://[::1]/",
        "http://10.79.1.2/",
        "http://[fd00::2]/",
    ):
        check_url(url, insecure=True)
    for url in ("http://169.254.169.254/", "http://224.0.0.1/", "http://0.0.0.0/"):
        with pytest.raises(Refused) as refused:
            check_url(url, insecure=True)
        assert "CARDROOM_WEBHOOKS_INSECURE" not in str(refused.value)  # no setting allows it


def test_a_public_name_passes_and_a_name_that_does_not_resolve_is_said_so() -> None:
    check_url("https://hooks.example/x?y=1", insecure=False, resolve=resolver([PUBLIC])[0])
    check_url("https://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/", insecure=False)

    def nowhere(host: str, port: int) -> list[str]:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    with pytest.raises(transport.Unresolvable, match="cannot resolve gone.example"):
        check_url("https://gone.example/", insecure=False, resolve=nowhere)
    attempt = post("https://gone.example/", BODY, HEADERS, insecure=False, resolve=nowhere)
    assert attempt.status is None and attempt.error is not None
    assert attempt.error.startswith("cannot resolve gone.example")


# --- the POST against real receivers ----------------------------------------------------------


def test_a_2xx_is_delivered_with_the_body_and_headers_as_given(receiver: HTTPServer) -> None:
    receiver.expect_request("/hook", method="POST", query_string="a=1").respond_with_data(
        "", status=204
    )
    given = {**HEADERS, "content-type": "text/plain", "Host": "evil.example"}
    attempt = post(url_of(receiver, "/hook?a=1"), BODY, given, insecure=True)
    assert attempt == Attempt(204, attempt.duration_ms, "", None, None) and attempt.ok
    request: Request = receiver.log[0][0]
    assert request.get_data() == BODY
    assert request.headers["Content-Type"] == "application/json"  # the caller's is dropped
    assert request.headers["Host"] == f"127.0.0.1:{receiver.port}"
    assert all(request.headers[name] == value for name, value in HEADERS.items())
    assert request.headers["User-Agent"] == transport.USER_AGENT


@pytest.mark.parametrize("status", [500, 410, 429])
def test_a_failure_status_is_an_attempt_with_its_status_and_answer(
    receiver: HTTPServer, status: int
) -> None:
    receiver.expect_request("/hook").respond_with_data("gone fishing", status=status)
    attempt = post(url_of(receiver), BODY, HEADERS, insecure=True)
    assert (attempt.status, attempt.body_head, attempt.error) == (status, "gone fishing", None)
    assert not attempt.ok and attempt.retry_after is None


def test_retry_after_in_seconds_and_as_an_http_date(receiver: HTTPServer) -> None:
    later = datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=120)
    receiver.expect_ordered_request("/hook").respond_with_data(
        "", status=429, headers={"Retry-After": "30"}
    )
    receiver.expect_ordered_request("/hook").respond_with_data(
        "", status=503, headers={"Retry-After": later.strftime("%a, %d %b %Y %H:%M:%S GMT")}
    )
    assert post(url_of(receiver), BODY, HEADERS, insecure=True).retry_after == 30.0
    retry_after = post(url_of(receiver), BODY, HEADERS, insecure=True).retry_after
    assert retry_after is not None and 100 < retry_after <= 120


def test_parse_retry_after() -> None:
    now = 1_700_000_000.0
    assert transport.parse_retry_after("0", now) == 0.0
    assert transport.parse_retry_after(" 7 ", now) == 7.0
    assert transport.parse_retry_after("Tue, 14 Nov 2023 22:13:40 GMT", now) == 20.0
    assert transport.parse_retry_after("Tue, 14 Nov 2023 22:00:00 GMT", now) == 0.0  # past
    for junk in (None, "", "-5", "soon", "1.5e9"):
        assert transport.parse_retry_after(junk, now) is None


def test_at_most_1_kib_of_an_answer_is_read(receiver: HTTPServer, release: threading.Event) -> None:
    """A receiver that sends 10 MB and then stalls, never finishing its announced body: an
    attempt that read on would time out; this one ends with the first 1 KiB."""
    size = 10 * 1024 * 1024

    def ten_megabytes() -> Iterator[bytes]:
        for _ in range(size // 65536):
            yield b"x" * 65536
        release.wait(30)
        yield b"!"

    receiver.expect_request("/hook").respond_with_response(
        Response(ten_megabytes(), headers={"Content-Length": str(size + 1)})
    )
    attempt = post(url_of(receiver), BODY, HEADERS, insecure=True, timeout=10)
    assert attempt.status == 200 and attempt.error is None
    assert attempt.body_head == "x" * 1024


def test_a_stalling_receiver_times_out_within_the_attempts_timeout(
    receiver: HTTPServer, release: threading.Event
) -> None:
    def stall(request: Request) -> Response:
        release.wait(30)
        return Response("late")

    receiver.expect_request("/hook").respond_with_handler(stall)
    started = time.monotonic()
    attempt = post(url_of(receiver), BODY, HEADERS, insecure=True, timeout=0.5)
    elapsed = time.monotonic() - started
    assert attempt.status is None and attempt.error == "timeout after 0.5 s"
    assert 0.5 <= elapsed < 3.0 and 450 <= attempt.duration_ms < 3000


def dripping_server(release: threading.Event) -> tuple[int, list[int]]:
    """A raw server that answers one byte of a status line every 0.1 s, for ever (until
    ``release``): each read succeeds in time, the attempt as a whole must not. Its port, and
    how many bytes it sent."""
    listener = socket.create_server(("127.0.0.1", 0))
    sent = [0]

    def serve() -> None:
        conn, _ = listener.accept()
        with conn, listener:
            conn.recv(65536)
            for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 10_000:
                if release.wait(0.1):  # the drip's pace; set at teardown
                    return
                try:
                    conn.sendall(bytes([byte]))
                except OSError:
                    return
                sent[0] += 1

    threading.Thread(target=serve, daemon=True).start()
    return listener.getsockname()[1], sent


def test_the_timeout_covers_the_whole_attempt_not_each_read(release: threading.Event) -> None:
    port, sent = dripping_server(release)
    started = time.monotonic()
    attempt = post(f"http://127.0.0.1:{port}/", BODY, HEADERS, insecure=True, timeout=0.8)
    assert attempt.error == "timeout after 0.8 s" and attempt.status is None
    assert time.monotonic() - started < 3.0 and sent[0] >= 2  # it was answering, slowly


def test_a_closed_port_is_connection_refused() -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
    attempt = post(f"http://127.0.0.1:{port}/", BODY, HEADERS, insecure=True, timeout=2)
    assert (attempt.status, attempt.error) == (None, "connection refused")


def test_a_connection_closed_without_an_answer(release: threading.Event) -> None:
    listener = socket.create_server(("127.0.0.1", 0))

    def hang_up() -> None:
        conn, _ = listener.accept()
        with conn, listener:
            conn.recv(65536)

    threading.Thread(target=hang_up, daemon=True).start()
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/"
    attempt = post(url, BODY, HEADERS, insecure=True, timeout=5)
    assert attempt.status is None
    assert attempt.error in (
        "connection closed without an answer",
        "connection reset by the endpoint",
    )


# --- TLS: the name in SNI and in the certificate check, the connection pinned -----------------


def certificate(tmp_path: Path, name: str) -> tuple[Path, Path, Path]:
    """A CA, and a certificate for ``name`` it signed: (ca.pem, cert.pem, key.pem)."""
    now = datetime.datetime.now(datetime.UTC)

    def make(subject: str, issuer_key: Any, issuer: str, key: Any, ca: bool) -> x509.Certificate:
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
            .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(hours=1))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        )
        if not ca:
            builder = builder.add_extension(
                x509.SubjectAlternativeName([x509.DNSName(subject)]), critical=False
            )
        return builder.sign(issuer_key, hashes.SHA256())

    ca_key, leaf_key = generate_private_key(SECP256R1()), generate_private_key(SECP256R1())
    ca = make("test CA", ca_key, "test CA", ca_key, True)
    leaf = make(name, ca_key, "test CA", leaf_key, False)
    paths = tmp_path / "ca.pem", tmp_path / "cert.pem", tmp_path / "key.pem"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(
        leaf_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return paths


@pytest.fixture
def tls_receiver(tmp_path: Path) -> Iterator[tuple[HTTPServer, ssl.SSLContext, list[str]]]:
    """An HTTPS receiver on 127.0.0.1 with a certificate for hooks.example, the client context
    that trusts its CA, and the SNI names it was sent."""
    ca, cert, key = certificate(tmp_path, "hooks.example")
    server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_context.load_cert_chain(cert, key)
    names: list[str] = []
    server_context.sni_callback = lambda sock, name, context: names.append(str(name)) and None
    server = HTTPServer(host="127.0.0.1", port=0, ssl_context=server_context)
    server.start()
    yield server, ssl.create_default_context(cafile=str(ca)), names
    server.clear()
    server.stop()


def test_https_sends_the_name_in_sni_and_checks_the_certificate_against_it(
    tls_receiver: tuple[HTTPServer, ssl.SSLContext, list[str]], loopback_only: list[str]
) -> None:
    server, trusted, names = tls_receiver
    server.expect_request("/hook", method="POST").respond_with_data("ok")
    resolve, asked = resolver(["127.0.0.1"])
    url = f"https://hooks.example:{server.port}/hook"
    attempt = post(url, BODY, HEADERS, insecure=True, resolve=resolve, ssl_context=trusted)
    assert attempt.status == 200 and attempt.error is None, attempt
    assert names == ["hooks.example"] and asked == ["hooks.example"]
    assert loopback_only == ["127.0.0.1"]
    assert server.log[0][0].headers["Host"] == f"hooks.example:{server.port}"


def test_a_certificate_for_another_name_is_not_accepted(
    tls_receiver: tuple[HTTPServer, ssl.SSLContext, list[str]],
) -> None:
    server, trusted, _ = tls_receiver
    resolve, _ = resolver(["127.0.0.1"])
    url = f"https://other.example:{server.port}/hook"
    attempt = post(url, BODY, HEADERS, insecure=True, resolve=resolve, ssl_context=trusted)
    assert attempt.status is None and attempt.error is not None
    assert attempt.error.startswith("TLS certificate not accepted for other.example")
    assert server.log == []
    untrusted = post(f"https://hooks.example:{server.port}/hook", BODY, HEADERS,
                     insecure=True, resolve=resolve)  # fmt: skip
    assert untrusted.error is not None and "TLS certificate not accepted" in untrusted.error


# --- in a gevent worker -------------------------------------------------------------------------

GEVENT_SCRIPT = """
from gevent import monkey
monkey.patch_all()
import json, sys, gevent
from service.webhooks.transport import post

ticks = []
def tick():
    while True:
        ticks.append(1)
        gevent.sleep(0.01)
ticker = gevent.spawn(tick)
stalled = post(sys.argv[1] + "/stall", b"{}", {}, insecure=True, timeout=0.5)
answered = post(sys.argv[1] + "/hook", b"{}", {}, insecure=True, timeout=5)
ticker.kill()
print(json.dumps({"stalled": stalled.error, "answered": answered.status, "ticks": len(ticks)}))
"""


def test_under_gevent_an_attempt_yields_to_other_greenlets_and_times_out(
    receiver: HTTPServer, release: threading.Event
) -> None:
    """As in a gunicorn gevent worker (monkey-patched): the stalled attempt's wait lets other
    greenlets run, and its watchdog (a greenlet there) cuts it at the deadline."""

    def stall(request: Request) -> Response:
        release.wait(30)
        return Response("late")

    receiver.expect_request("/stall").respond_with_handler(stall)
    receiver.expect_request("/hook").respond_with_data("ok", status=202)
    run = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(GEVENT_SCRIPT), url_of(receiver, "")],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert result["stalled"] == "timeout after 0.5 s" and result["answered"] == 202
    assert result["ticks"] >= 10  # the hub ran the ticker while the attempt waited


def test_an_ipv6_loopback_receiver_in_insecure_mode(httpserver_ipv6: HTTPServer) -> None:
    httpserver_ipv6.expect_request("/hook", method="POST").respond_with_data("ok6")
    url = f"http://[::1]:{httpserver_ipv6.port}/hook"
    attempt = post(url, BODY, HEADERS, insecure=True)
    assert (attempt.status, attempt.body_head, attempt.error) == (200, "ok6", None)
    assert httpserver_ipv6.log[0][0].headers["Host"] == f"[::1]:{httpserver_ipv6.port}"
