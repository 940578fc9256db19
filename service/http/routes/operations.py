"""Operations: the signing keys (JWKS), the health probe ``/healthz`` and the contract itself.
(``/livez``, ``/readyz`` and ``/metrics`` are in service/http/observe.py.)"""

from __future__ import annotations

from flask import Response, current_app, send_file

from service.http.routes.common import HEALTH, api, games, json_response
from service.http.schemas import Jwks

JWKS = Jwks()


@api.get("/.well-known/cardroom-keys")
def signing_keys() -> Response:
    """The public keys receipts and exports are signed with (a JWK Set, RFC 7517/8037).

    ---
    get:
      tags:
      - replay
      operationId: getSigningKeys
      summary: The public keys receipts and exports are signed with
      description: |
        A JWK Set of the service's Ed25519 public keys: the active one (last) and every one
        it signed with before, rotated or retired (the database records each key id the
        service used), so every receipt handed out stays verifiable. Keep a copy: an audit
        checks signatures against the keys you give it.
      security: []
      responses:
        '200':
          description: The keys.
          content:
            application/json:
              schema: {$ref: '#/components/schemas/Jwks'}
        '500': InternalError
    """
    response = json_response(JWKS.dump(games().published_keys()))
    response.headers["Cache-Control"] = "max-age=300"
    return response


@api.get("/healthz")
def healthz() -> Response:
    """
    ---
    get:
      tags:
      - operations
      operationId: health
      summary: Health check
      description: >-
        `200` when the service can read from its database, else `503`. Kept for compatibility:
        it says nothing of writes; orchestrators should use `/livez` and `/readyz`.
      security: []
      responses:
        '200':
          description: Healthy.
          content:
            application/json:
              schema: {$ref: '#/components/schemas/Health'}
        '500': InternalError
        '503': DatabaseUnavailable
    """
    games().store.ping()  # raises StoreUnavailable: 503 problem+json with Retry-After
    return json_response(HEALTH.dump({"status": "ok", "database": "ok"}))


@api.get("/openapi.yaml")
def openapi() -> Response:
    """
    ---
    get:
      tags:
      - operations
      operationId: openapi
      summary: This document
      description: |
        This API's contract, as committed with the code that serves it (generated from its
        routes and schemas by `cardroom openapi`).
      security: []
      responses:
        '200':
          description: The OpenAPI description of this API, as YAML.
          content:
            application/yaml:
              schema:
                description: An OpenAPI 3.1 document (a YAML mapping, read as an object).
                type: object
                required: [openapi, info, paths]
    """
    return send_file(current_app.config["OPENAPI_PATH"], mimetype="application/yaml")
