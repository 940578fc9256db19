"""openapi.yaml, generated from the code with apispec: the paths from the routes (each view's
docstring holds its operation as YAML after a ``---`` line), the bodies from the marshmallow
schemas (descriptions and constraints in their fields' ``metadata``), and what is HTTP itself
(introduction, security, shared parameters, headers, responses, problem bodies) from
contract_base.yaml. Each game's bodies come from the registry: a game registered is a game
documented. ``cardroom openapi > openapi.yaml`` writes it; tests/test_contract.py checks the
committed file is exactly this output.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import marshmallow
import yaml
from apispec import APISpec
from apispec.ext.marshmallow import MarshmallowPlugin, OpenAPIConverter
from apispec.ext.marshmallow.common import resolve_schema_instance
from apispec.yaml_utils import load_operations_from_docstring
from apispec_webframeworks.flask import FlaskPlugin
from flask import Flask
from marshmallow import Schema, fields

from service.games.registry import GameAdapter, load_games
from service.http import schemas
from service.http.schemas.ratings import RATING_BODIES
from service.http.schemas.webhooks import WEBHOOK_BODIES

BASE = Path(__file__).with_name("contract_base.yaml")
IMPLICIT_METHODS = {"HEAD", "OPTIONS"}  # Flask adds them to every route
# The bodies the routes' docstrings name that no other body nests.
SHARED_BODIES = (
    schemas.JoinRequest,
    schemas.SeatGranted,
    schemas.RematchGranted,
    schemas.NewInvitation,
    schemas.InvitationStatus,
    schemas.GameList,
    schemas.EventPage,
    schemas.ExportLine,
    schemas.AuditReport,
    schemas.AuditRequest,
    schemas.Jwks,
    schemas.Health,
    schemas.Liveness,
    schemas.Readiness,
    schemas.Rulings,
    *schemas.ACCOUNT_BODIES,
    *schemas.CHALLENGE_BODIES,
    *schemas.HISTORY_BODIES,
    *RATING_BODIES,
    *WEBHOOK_BODIES,
)


class UndocumentedRoute(Exception):
    """A route whose view's docstring does not describe one of its methods."""


class _Converter(OpenAPIConverter):
    """apispec leaves ``additionalProperties`` out when a schema has a description; every body
    here refuses (or never sends) unknown fields, so say so always."""

    def schema2jsonschema(self, schema: Any) -> dict[str, Any]:
        jsonschema: dict[str, Any] = super().schema2jsonschema(schema)
        unknown = resolve_schema_instance(schema).unknown
        jsonschema["additionalProperties"] = unknown == marshmallow.INCLUDE
        return jsonschema


def _const(self: OpenAPIConverter, field: fields.Field, **_: Any) -> dict[str, Any]:
    """``metadata={"const": value}``: the one value of a field (the ``game`` a union is
    discriminated on); apispec passes only some keys of ``metadata`` on, not this one."""
    return {"const": field.metadata["const"]} if "const" in field.metadata else {}


class _Plugin(MarshmallowPlugin):
    Converter = _Converter

    def init_spec(self, spec: APISpec) -> None:
        super().init_spec(spec)
        assert self.converter is not None
        self.converter.add_attribute_function(_const)


def build(app: Flask) -> dict[str, Any]:
    """The OpenAPI document of ``app``'s routes, as a dict in the order it is written."""
    base = yaml.safe_load(BASE.read_text())
    info = dict(base["info"])
    spec = APISpec(
        title=info.pop("title"),
        version=info.pop("version"),
        openapi_version=base["openapi"],
        plugins=[FlaskPlugin(), _Plugin()],
        info=info,
        servers=base["servers"],
    )
    for tag in base["tags"]:
        spec.tag(tag)
    _add_components(spec, base["components"])
    _add_bodies(spec, load_games())
    _add_paths(spec, app)
    document = spec.to_dict()
    order = ["openapi", "info", "servers", "tags", "paths", "components"]
    parts = ["securitySchemes", "parameters", "headers", "responses", "schemas"]
    document["components"] = {key: document["components"][key] for key in parts}
    return {key: document[key] for key in order}


def routes_app() -> Flask:
    """The app's routes, for the contract: no database is opened and no clock started."""
    from service.http.app import create_app

    return create_app(pool=object(), config={"CARDROOM_CLOCK_INTERVAL": 0})  # type: ignore[arg-type]


def to_yaml(document: dict[str, Any]) -> str:
    """YAML with multi-line text as literal blocks, keys in the order given."""
    return yaml.dump(document, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True  # a shared dict is written out each time, never as an anchor


def _str(dumper: yaml.SafeDumper, text: str) -> yaml.Node:
    style = "|" if "\n" in text else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_Dumper.add_representer(str, _str)


def _add_components(spec: APISpec, base: dict[str, Any]) -> None:
    for name, scheme in base["securitySchemes"].items():
        spec.components.security_scheme(name, scheme)
    for name, parameter in base["parameters"].items():
        spec.components.parameter(name, parameter["in"], parameter)
    for name, header in base["headers"].items():
        spec.components.header(name, header)
    for name, response in base["responses"].items():
        spec.components.response(name, response)
    for name, schema in base["schemas"].items():
        spec.components.schema(name, schema)


def _add_bodies(spec: APISpec, games: dict[str, GameAdapter]) -> None:
    """The shared bodies, each game's own, and the unions over the games."""
    for body in SHARED_BODIES:
        spec.components.schema(body.__name__, schema=body)
    creates, views, moves, sheets = {}, {}, [], []
    for name, adapter in games.items():
        creates[name] = _ref(spec, _create_request(adapter))
        views[name] = _ref(spec, type(adapter.view))
        sheets.append(_ref(spec, type(adapter.score_sheet)))
        moves.append(_move(spec, adapter))
    spec.components.schema("CreateGameRequest", _union(creates, "The body of POST /games"))
    spec.components.schema("GameView", _union(views, "A game as one viewer may see it"))
    spec.components.schema(
        "Move",
        {"description": "A move; its shape depends on the game.", "oneOf": moves},
    )
    spec.components.schema(
        "ScoreSheet",
        {"description": "A game's score sheet; its shape depends on the game.", "oneOf": sheets},
    )


def _union(refs: dict[str, dict[str, str]], what: str) -> dict[str, Any]:
    return {
        "description": f"{what}; its shape depends on `game`.",
        "oneOf": list(refs.values()),
        "discriminator": {
            "propertyName": "game",
            "mapping": {name: ref["$ref"] for name, ref in refs.items()},
        },
    }


def _ref(spec: APISpec, schema: type[Schema]) -> dict[str, str]:
    name = schema.__name__
    if name not in spec.components.schemas:
        spec.components.schema(name, schema=schema)
    return {"$ref": f"#/components/schemas/{name}"}


def _move(spec: APISpec, adapter: GameAdapter) -> dict[str, Any]:
    """A game's move: its schema, or when it has several shapes a oneOf of them, named after
    its schema."""
    if not adapter.move_shapes:
        return _ref(spec, type(adapter.move))
    name = type(adapter.move).__name__
    description = getattr(type(adapter.move).Meta, "description", None)
    shapes = [_ref(spec, type(shape)) for shape in adapter.move_shapes]
    spec.components.schema(name, {"description": description, "oneOf": shapes})
    return {"$ref": f"#/components/schemas/{name}"}


def _create_request(adapter: GameAdapter) -> type[Schema]:
    """POST /games for one game: ``game`` is its name and ``rules`` its own rules schema. (The
    route loads the shared CreateGameRequest, then the rules with the game's schema.)"""
    prefix = type(adapter.view).__name__.removesuffix("View")
    rules = type(adapter.rules)
    return type(
        f"{prefix}CreateGameRequest",
        (schemas.CreateGameRequest,),
        {
            "game": fields.String(
                required=True, metadata={"description": "Which game.", "const": adapter.name}
            ),
            "rules": fields.Nested(
                rules, metadata={"description": f"The game's rules (`{rules.__name__}`)."}
            ),
        },
    )


def _add_paths(spec: APISpec, app: Flask) -> None:
    """Every route's operations, from its view's docstring; a method left out is an error."""
    for rule in app.url_map.iter_rules():
        if rule.endpoint.startswith("web.") or rule.endpoint == "static":
            continue  # the web page's files: not part of the API
        view = app.view_functions[rule.endpoint]
        operations = load_operations_from_docstring(view.__doc__ or "")
        methods = {m.lower() for m in (rule.methods or set()) - IMPLICIT_METHODS}
        missing = methods - set(operations)
        if missing:
            raise UndocumentedRoute(
                f"{sorted(missing)} {rule.rule} ({rule.endpoint}): describe the operation in"
                " YAML after a '---' line of the view's docstring"
            )
        spec.path(view=view, app=app)  # the Flask plugin reads the path and the docstring
