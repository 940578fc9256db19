"""Every HTTP call of the tests waits a bound that grows with the machine's load (issue 39,
item 14): ``timeout=ANSWER`` (tests/patience.py), never a number written in the call, which a
loaded machine outlasts. An AST walk over tests/: a requests or httpx call (a function of
either module, or an HTTP method, request, send, stream or Client on anything) given a numeric
``timeout=`` fails, unless its line says why the number is fixed (``# fixed timeout: why``).
(The walk cannot tell a receiver's type: a queue's ``get(timeout=1)`` is held to it too, and
its wait is as fixed.)"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
# The names a requests or httpx call goes by (a session's, a client's, the modules' own).
HTTP_CALLS = {"get", "post", "put", "patch", "delete", "head", "options", "request", "send"}
HTTP_CALLS |= {"stream", "Client", "AsyncClient"}
REASON = "# fixed timeout: "


def _is_http(call: ast.Call) -> bool:
    func = call.func
    if not isinstance(func, ast.Attribute):
        return False  # a bare name: not requests' nor httpx's (the tests import the modules)
    root: ast.expr = func
    while isinstance(root, ast.Attribute):
        root = root.value
    return (isinstance(root, ast.Name) and root.id in ("requests", "httpx")) or (
        func.attr in HTTP_CALLS
    )


def fixed_timeouts(source: str) -> list[int]:
    """The lines where an HTTP call is given a literal number as its timeout, with no reason."""
    lines = source.splitlines()
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and _is_http(node)):
            continue
        for keyword in node.keywords:
            value = keyword.value
            literal = isinstance(value, ast.Constant) and type(value.value) in (int, float)
            if keyword.arg == "timeout" and literal and REASON not in lines[value.lineno - 1]:
                found.append(value.lineno)
    return sorted(found)


def test_no_http_call_in_the_tests_waits_a_fixed_time() -> None:
    found = [
        f"{path.relative_to(TESTS.parent)}:{line}"
        for path in sorted(TESTS.rglob("*.py"))
        for line in fixed_timeouts(path.read_text())
    ]
    assert found == [], "use timeout=ANSWER (tests/patience.py), or say why on the line"


def test_the_check_finds_a_fixed_timeout() -> None:
    source = """
import requests
from patience import ANSWER
requests.get(url, timeout=10)
session.post(url, json={}, timeout=2.5)
httpx.Client(base_url=url, timeout=30)
requests.get(url, timeout=ANSWER)
queue.get(timeout=1)
thread.join(timeout=5)
post(url, timeout=10)
requests.get(url, timeout=0.2)  # fixed timeout: the test wants the client to give up
"""
    assert fixed_timeouts(source) == [4, 5, 6, 8]
