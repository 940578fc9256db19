"""Nothing imports upward: the domain never imports the service; storage never imports HTTP, live
updates, the command line or the games; the service layer (play/) knows no HTTP. An AST walk
over every module (imports inside functions included)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# What each part may import (besides the standard library and third-party packages), from the
# bottom up. A module belongs to the longest part its name starts with.
# Foundations any part of the service may use: its settings, logs, metrics and packaged files.
BASE = {"service.settings", "service.logs", "service.metrics", "service.resources"}
EVERYTHING = {
    "domain",
    *BASE,
    "service.bodies",
    "service.errors",
    "service.faults",
    "service.keys",
    "service.key_registry",
    "service.store",
    "service.games",
    "service.autoplay",
    "service.play",
    "service.rematch",
    "service.live",
    "service.webhooks",
    "service.http",
    "service.cli",
}
ALLOWED = {
    "domain": {"domain"},
    "service.settings": set(),
    "service.resources": set(),
    "service.metrics": set(),
    "service.logs": {"service.settings"},
    "service.bodies": {"domain"},
    "service.errors": {"domain"},
    "service.faults": {"service.settings"},  # test-only fault points, inert unless switched on
    "service.keys": {"domain", *BASE},  # the signing and sealing keys, kept outside the database
    # Which key ids the database has used (issue 27): this host's keys checked against PostgreSQL.
    "service.key_registry": {"domain", "service.keys", *BASE},
    "service.store": {"domain", "service.errors", "service.store", *BASE},
    "service.games": {"domain", "service.bodies", "service.games"},
    "service.autoplay": {"domain", "service.games"},
    "service.play": {
        *BASE,
        "domain",
        "service.play",  # a package: its reads, commands and sweeps (service/play/__init__.py)
        "service.errors",
        "service.games",
        "service.store",
        "service.autoplay",
        "service.faults",
        "service.keys",
        "service.key_registry",
    },
    # Rematches (issue 29): the service layer's commands, on top of play/'s.
    "service.rematch": {*BASE, "domain", "service.errors", "service.store", "service.play"},
    "service.live": {
        *BASE,
        "domain",
        "service.errors",
        "service.store",
        "service.play",
        "service.live",
    },
    # Webhooks (issue 36): readers of the log, delivering what play/'s feed logic says.
    "service.webhooks": {
        *BASE,
        "domain",
        "service.errors",
        "service.store",
        "service.play",
        "service.keys",
        "service.webhooks",
    },
    "service.http": EVERYTHING - {"service.cli"},
    "service.cli": EVERYTHING,
}


def part_of(module: str) -> str | None:
    parts = [p for p in ALLOWED if module == p or module.startswith(p + ".")]
    return max(parts, key=len) if parts else None


def imports(source: str, module: str, is_package: bool = False) -> Iterator[str]:
    """The modules ``module`` (dotted name, from ``source``) imports, names resolved."""
    package = module if is_package else module.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            # `from service import play`: the module is service.play
            yield from (f"{base}.{alias.name}" for alias in node.names)


def upward_imports(source: str, module: str, is_package: bool = False) -> list[str]:
    mine = part_of(module)
    assert mine is not None, f"{module} belongs to no part: add it to ALLOWED"
    wrong = []
    for name in imports(source, module, is_package):
        theirs = part_of(name)
        if theirs is not None and theirs not in ALLOWED[mine]:
            wrong.append(f"{module} imports {name} ({mine} may not import {theirs})")
    return wrong


def _modules() -> Iterator[tuple[str, Path, bool]]:
    for top in ("domain", "service"):
        for path in sorted((ROOT / top).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            is_package = parts[-1] == "__init__"
            yield ".".join(parts[:-1] if is_package else parts), path, is_package


def test_nothing_imports_upward() -> None:
    wrong = []
    checked = 0
    for module, path, is_package in _modules():
        if module == "service":
            continue  # the package's docstring only
        wrong += upward_imports(path.read_text(), module, is_package)
        checked += 1
    assert checked > 50
    assert wrong == []


def test_the_check_finds_an_upward_import() -> None:
    assert upward_imports("from service.http.problems import Problem\n", "service.play")
    assert upward_imports("def f():\n    from service.http import api\n", "service.store.db")
    assert upward_imports("import service.play\n", "domain.decider")
    assert upward_imports("from ...http import schemas\n", "service.games.sushigo", True)
    assert upward_imports("from ..http import schemas\n", "service.games.registry")
    assert upward_imports("from service import play\n", "service.store.events")
    assert not upward_imports("from service.store.events import EventStore\n", "service.play")


def test_every_route_is_under_routes() -> None:
    """Where a route lives is as obvious as where a resource is (issue 39, item 13): every URL
    the app answers is a view of a module under service/http/routes/, and the rest of http/ is
    what routes use: none of it imports a route module (app.py and contract.py assemble them)."""
    from service.http.contract import routes_app

    app = routes_app()
    outside = {
        f"{rule.rule} ({app.view_functions[rule.endpoint].__module__})"
        for rule in app.url_map.iter_rules()
        if rule.endpoint != "static"
        and not app.view_functions[rule.endpoint].__module__.startswith("service.http.routes")
    }
    assert not outside, sorted(outside)
    assemblers = {"service/http/app.py", "service/http/contract.py"}
    for path in sorted((ROOT / "service" / "http").glob("*.py")):
        name = str(path.relative_to(ROOT))
        if name not in assemblers:
            assert "service.http.routes" not in path.read_text(), name


# Packages whose modules must form no import cycle (issue 39, item 13), and where they live.
ACYCLIC = {
    "domain": "domain",
    "service": "service",
    "bench": "bench",
    "cardroom_client": "clients/python/cardroom_client",
}


def import_graph(packages: dict[str, str]) -> dict[str, set[str]]:
    """Module -> the modules of ``packages`` it imports (inside functions and under
    TYPE_CHECKING too): ``from p import m`` is an edge to ``p.m`` when that is a module, and
    any other name an edge to the module that defines it."""
    files = {}
    for name, folder in packages.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = (name, *path.relative_to(ROOT / folder).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            files[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    graph: dict[str, set[str]] = {}
    for module, (path, is_package) in files.items():
        graph[module] = set()
        for name in imports(path.read_text(), module, is_package):
            while name and name not in files:
                name = name.rpartition(".")[0]
            if name and name != module:
                graph[module].add(name)
    return graph


def cycle_in(graph: dict[str, set[str]]) -> list[str] | None:
    try:
        tuple(TopologicalSorter(graph).static_order())
    except CycleError as found:
        return list(found.args[1])
    return None


def test_no_import_cycles() -> None:
    graph = import_graph(ACYCLIC)
    assert len(graph) > 150
    assert cycle_in(graph) is None


def test_the_check_finds_a_cycle() -> None:
    cycle = cycle_in({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}})
    assert cycle is not None and set(cycle) == {"a", "b", "c"}
    assert cycle_in({"a": {"b"}, "b": set()}) is None
