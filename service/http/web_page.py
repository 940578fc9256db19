"""The web page at ``/``: static files only. The page is a client of the public REST API and the
event stream like any other (it gets no private route), so what it shows, anyone could build."""

from __future__ import annotations

from pathlib import Path

from flask import Blueprint, Response, send_from_directory

ASSETS = Path(__file__).resolve().parent.parent / "web"

web = Blueprint("web", __name__)

# Everything is served from here: no CDN, no inline script, nothing fetched from elsewhere.
CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "frame-ancestors 'none'",
        "form-action 'self'",
    ]
)


def _secured(response: Response) -> Response:
    response.headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "no-referrer"  # game ids in the URL stay here
    return response


@web.get("/")
def index() -> Response:
    return _secured(send_from_directory(ASSETS, "index.html", max_age=0))


@web.get("/app/<path:name>")
def asset(name: str) -> Response:
    # send_from_directory refuses paths that leave ASSETS (404), e.g. ../../etc/passwd.
    return _secured(send_from_directory(ASSETS, name, max_age=300))
