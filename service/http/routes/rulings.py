"""GET /rules/{game}: the rulings a game is played by (docs/rules/<game>.md), so that a client
can show the text behind a rule code (S8, Q3, …) that the audit and the page cite."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from flask import Blueprint, Response, json

from service.http.problems import Problem
from service.http.schemas import Rulings

RULES = Path(__file__).resolve().parents[3] / "docs" / "rules"
# A ruling is a paragraph that starts with its code: "S8. A nigiri ...", up to a blank line.
RULING = re.compile(r"^([A-Z]\d+)\. (.+?)(?=\n\s*\n|\n[A-Z]\d+\. |\n#|\Z)", re.M | re.S)

rulings_api = Blueprint("rulings", __name__)
RULINGS = Rulings()


@lru_cache(maxsize=8)
def rulings_of(game: str) -> dict[str, Any] | None:
    path = RULES / f"{game}.md"
    if not re.fullmatch(r"[a-z][a-z0-9-]{0,39}", game) or not path.is_file():
        return None
    text = path.read_text()
    found = [{"code": code, "text": " ".join(body.split())} for code, body in RULING.findall(text)]
    return {"game": game, "rulings": found, "markdown": text}


@rulings_api.get("/rules/<game>")
def get_rulings(game: str) -> Response:
    """
    ---
    get:
      tags:
      - games
      operationId: getRulings
      parameters:
      - name: game
        in: path
        required: true
        description: The game, e.g. `sushi-go` or `sequence`.
        schema:
          type: string
          maxLength: 40
      summary: The rulings of a game
      description: |
        The rulings the service implements for a game (`docs/rules/<game>.md`): each numbered
        ruling as plain text (`S1`… for Sushi Go!, `Q1`… for Sequence), and the whole page as
        Markdown. The audit and the score provenance cite these codes.
      security: []
      responses:
        '200':
          description: The game's rulings.
          content:
            application/json:
              schema: {$ref: '#/components/schemas/Rulings'}
        '404':
          description: '`rules_not_found`: the service has no rulings for this game.'
          content:
            application/problem+json:
              schema: {$ref: '#/components/schemas/RulesNotFoundProblem'}
        '500': InternalError
        '503': DatabaseUnavailable
    """
    body = rulings_of(game)
    if body is None:
        known = sorted(p.stem for p in RULES.glob("*.md"))
        raise Problem(404, "rules_not_found", f"no rulings for {game!r}; there are {known}")
    response = Response(json.dumps(RULINGS.dump(body)), mimetype="application/json")
    response.cache_control.public = True
    response.cache_control.max_age = 3600  # they change only with a new release
    return response
