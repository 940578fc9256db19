"""The gevent worker's responses (service/http/worker.py): a response's head leaves with its body
in one send, the bytes on the wire exactly what gunicorn's own response would have written."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from gunicorn.config import Config
from gunicorn.http import wsgi as gunicorn_wsgi
from gunicorn.workers.ggevent import GeventWorker

from service.http import worker
from service.http.worker import CardroomWorker, OneSendResponse


class Recorder:
    """A socket that keeps each sendall apart."""

    def __init__(self) -> None:
        self.sends: list[bytes] = []

    def sendall(self, data: bytes) -> None:
        self.sends.append(bytes(data))


def _respond(
    kind: type[Any], status: str, headers: list[tuple[str, str]], body: list[bytes], method: str
) -> list[bytes]:
    request = SimpleNamespace(version=(1, 1), method=method, should_close=lambda: False)
    sock = Recorder()
    response = kind(request, sock, Config())
    response.start_response(status, headers)
    for piece in body:
        response.write(piece)
    response.close()
    return sock.sends


CASES = {
    "sized": ("200 OK", [("Content-Length", "11")], [b"hello world"], "GET"),
    "sized, in two pieces": ("200 OK", [("Content-Length", "11")], [b"hello", b" world"], "GET"),
    "no body": ("204 No Content", [], [], "GET"),
    "head": ("200 OK", [("Content-Length", "11")], [b"hello world"], "HEAD"),
    "chunked": ("200 OK", [], [b"event: a\n\n", b"event: b\n\n"], "GET"),
}


@pytest.fixture(autouse=True)
def _fixed_date(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gunicorn_wsgi.util, "http_date", lambda *_: "Wed, 25 Nov 2026 00:00:00 GMT")


@pytest.mark.parametrize("case", CASES)
def test_the_bytes_sent_are_gunicorns(case: str) -> None:
    assert b"".join(_respond(OneSendResponse, *CASES[case])) == b"".join(
        _respond(gunicorn_wsgi.Response, *CASES[case])
    )


def test_a_sized_answer_leaves_in_one_send() -> None:
    sends = _respond(OneSendResponse, *CASES["sized"])
    assert len(sends) == 1 and sends[0].endswith(b"\r\n\r\nhello world")
    assert len(_respond(gunicorn_wsgi.Response, *CASES["sized"])) == 2  # what it saves


def test_a_streams_head_leaves_with_its_first_event() -> None:
    sends = _respond(OneSendResponse, *CASES["chunked"])
    assert sends[0].startswith(b"HTTP/1.1 200 OK") and b"event: a" in sends[0]


def test_the_worker_answers_with_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(GeventWorker, "init_process", lambda self: None)
    monkeypatch.setattr(gunicorn_wsgi, "Response", gunicorn_wsgi.Response)
    monkeypatch.setattr(worker.util, "write_error", worker.util.write_error)
    CardroomWorker.init_process(object.__new__(CardroomWorker))
    assert gunicorn_wsgi.Response is OneSendResponse
