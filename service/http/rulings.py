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

RULES = Path(__file__).resolve().parent.parent.parent / "docs" / "rules"
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
    body = rulings_of(game)
    if body is None:
        known = sorted(p.stem for p in RULES.glob("*.md"))
        raise Problem(404, "rules_not_found", f"no rulings for {game!r}; there are {known}")
    response = Response(json.dumps(RULINGS.dump(body)), mimetype="application/json")
    response.cache_control.public = True
    response.cache_control.max_age = 3600  # they change only with a new release
    return response
