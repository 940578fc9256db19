"""openapi.yaml itself: a valid OpenAPI 3.1 document, describing exactly the app's routes, served
by the app; and the spec-checking client refuses what the spec does not describe."""

from __future__ import annotations

import re

import pytest
import requests
import yaml
from api_client import SPEC_PATH, ApiClient, SpecMismatch, spec_dict, validate_exchange
from openapi_spec_validator import validate
from openapi_spec_validator.readers import read_from_filename

from service.http.app import create_app

pytest_plugins = ["api_fixtures"]

HTTP_METHODS = {"get", "put", "post", "delete", "patch", "options", "head", "trace"}
IMPLICIT_METHODS = {"HEAD", "OPTIONS"}  # added by Flask to every GET / every route


def test_spec_is_valid_openapi_3_1() -> None:
    document, _ = read_from_filename(str(SPEC_PATH))
    assert document["openapi"] == "3.1.0"
    validate(document)  # raises OpenAPIValidationError with the reason


def _flask_path(rule: str) -> str:
    """/games/<game_id> -> /games/{game_id} (converters dropped: <uuid:x> -> {x})."""
    return re.sub(r"<(?:[^:<>]+:)?([^<>]+)>", r"{\1}", rule)


def test_routes_and_documented_paths_agree() -> None:
    app = create_app(pool=object())  # type: ignore[arg-type]  # routes only: never queried
    routes: set[tuple[str, str]] = set()
    for rule in app.url_map.iter_rules():
        if rule.endpoint.startswith("web."):
            continue  # the web page's static files: not part of the API
        for method in (rule.methods or set()) - IMPLICIT_METHODS:
            routes.add((_flask_path(rule.rule), method.lower()))
    documented = {
        (path, method)
        for path, item in spec_dict()["paths"].items()
        for method in item
        if method in HTTP_METHODS
    }
    assert routes - documented == set(), "routes missing from openapi.yaml"
    assert documented - routes == set(), "documented operations without a route"


# Operations that never ask the database, so never answer 503.
NO_DATABASE = {"/openapi.yaml", "/livez", "/metrics", "/.well-known/cardroom-keys"}


IDENTITY_ONLY = {("get", "/accounts/me")}


def test_every_operation_documents_its_errors() -> None:
    for path, item in spec_dict()["paths"].items():
        for method, operation in item.items():
            if method not in HTTP_METHODS:
                continue
            statuses = set(operation["responses"])
            if path not in NO_DATABASE:
                assert {"500", "503"} <= statuses, (method, path)
            if "requestBody" in operation:
                assert {"400", "413", "415"} <= statuses, (method, path)
            if "{game_id}" in path:
                assert "404" in statuses, (method, path)
            if operation.get("security") != []:
                # Any valid account token may read its own account: nothing there to forbid.
                forbidden = set() if (method, path) in IDENTITY_ONLY else {"403"}
                assert {"401"} | forbidden <= statuses, (method, path)


def test_the_app_serves_its_spec(api: ApiClient) -> None:
    response = api.get("/openapi.yaml")
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("application/yaml")
    assert yaml.safe_load(response.text) == spec_dict()


def test_the_client_fails_on_an_undocumented_response(api: ApiClient) -> None:
    """The check can fail: a response that differs from the spec is reported."""
    response = api.get("/healthz")
    prepared = response.request
    forged = requests.Response()
    forged.status_code = 200
    forged.headers["Content-Type"] = "application/json"
    forged._content = b'{"status": "ok", "database": "ok", "secret": 1}'
    with pytest.raises(SpecMismatch, match="secret"):
        validate_exchange(prepared, forged, request_valid=True)
    forged.status_code = 418
    with pytest.raises(SpecMismatch):
        validate_exchange(prepared, forged, request_valid=True)


def test_the_client_fails_on_an_undocumented_request(api: ApiClient) -> None:
    with pytest.raises(SpecMismatch, match="does not match"):
        api.post("/games", {"game": "sushi-go", "players": 3, "colour": "red"})
    with pytest.raises(SpecMismatch, match="laxer"):
        api.post("/games", {"game": "sushi-go", "players": 3}, request_valid=False)


# --- error codes: raised in the code == documented in the spec == listed in docs/errors.md -------

ROOT = SPEC_PATH.parent
RAISED = re.compile(r'(?:conflict|rule_broken|forbidden)\(\s*"(\w+)"|Problem\(\s*\d+,\s*"(\w+)"')


def _spec_codes(node: object) -> set[str]:
    """Every value a problem schema's ``code`` may take (enum or const), anywhere in the spec."""
    codes: set[str] = set()
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "code" and isinstance(value, dict):
                codes |= set(value.get("enum", [])) | (
                    {value["const"]} if "const" in value else set()
                )
            codes |= _spec_codes(value)
    elif isinstance(node, list):
        for value in node:
            codes |= _spec_codes(value)
    return codes


def _raised_codes() -> set[str]:
    codes: set[str] = set()
    for source in [*ROOT.joinpath("service").rglob("*.py"), *ROOT.joinpath("domain").rglob("*.py")]:
        for match in RAISED.finditer(source.read_text()):
            codes.add(match.group(1) or match.group(2))
    return codes


def _documented_codes() -> set[str]:
    """The codes in the second column of docs/errors.md's table."""
    codes: set[str] = set()
    for line in ROOT.joinpath("docs/errors.md").read_text().splitlines():
        if re.match(r"\|\s*\d{3}\s*\|", line):
            codes |= set(re.findall(r"`([a-z_]+)`", line.split("|")[2]))
    return codes


def test_error_codes_are_documented_everywhere() -> None:
    documented = _documented_codes()
    in_spec = _spec_codes(spec_dict())
    assert in_spec == documented
    from service.http.problems import HTTP_CODES

    reachable = {"malformed_request", "not_found", "method_not_allowed", "body_too_large"}
    assert reachable <= set(HTTP_CODES.values())
    internal = {"internal_error", "database_unavailable"}
    not_over_http = {"game_exists", "game_not_created"}  # commands the API never sends
    # The sweeper's own refusals (it skips the game), and a bot's seat, which has no token.
    not_over_http |= {"not_stalled", "not_due", "bot_seat"}
    raised = _raised_codes() | reachable | internal
    assert len(raised) > 20, "the pattern finds the codes"
    assert raised - not_over_http == documented
