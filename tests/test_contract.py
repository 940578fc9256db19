"""openapi.yaml is generated from the code (service/http/contract.py): the committed file is
exactly what ``cardroom openapi`` writes, and every route is described."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml
from flask import Flask, Response

from service.http import contract

ROOT = Path(__file__).resolve().parent.parent


def test_the_committed_contract_is_the_generated_one() -> None:
    generated = subprocess.run(
        [sys.executable, "-m", "service.cli.main", "openapi"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    committed = (ROOT / "openapi.yaml").read_text()
    assert generated == committed, "openapi.yaml is stale: run `make openapi` and commit it"


def test_an_undocumented_route_fails_the_generation() -> None:
    app = contract.routes_app()
    app.add_url_rule("/games/<game_id>/undocumented", "undocumented", lambda game_id: Response())

    with pytest.raises(contract.UndocumentedRoute, match="undocumented"):
        contract.build(app)


def test_a_route_missing_one_of_its_methods_fails_the_generation() -> None:
    app: Flask = contract.routes_app()

    def half() -> Response:
        """Documented for GET only.

        ---
        get:
          responses: {"200": {description: ok}}
        """
        return Response()

    app.add_url_rule("/half", "half", half, methods=["GET", "POST"])
    with pytest.raises(contract.UndocumentedRoute, match=r"\['post'\] /half"):
        contract.build(app)


def test_the_contract_fits_its_own_description() -> None:
    """GET /openapi.yaml answers what its own response schema says: a client (schemathesis)
    reads the YAML as a mapping, which a schema of `type: string` refused (issue 39, item 12)."""
    document = yaml.safe_load((ROOT / "openapi.yaml").read_text())
    answer = document["paths"]["/openapi.yaml"]["get"]["responses"]["200"]
    schema = answer["content"]["application/yaml"]["schema"]
    errors = [
        error.message for error in jsonschema.Draft202012Validator(schema).iter_errors(document)
    ]
    assert errors == []
