"""The web page at ``/``: static files only. The page is a client of the public REST API and the
event stream like any other (it gets no private route), so what it shows, anyone could build."""

from __future__ import annotations

import gzip
import hashlib
import mimetypes
from functools import lru_cache
from pathlib import Path

from flask import Blueprint, Response, request, send_from_directory
from werkzeug.security import safe_join

ASSETS = Path(__file__).resolve().parents[2] / "web"

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
    return _secured(_send(ASSETS, "index.html", max_age=0))


@web.get("/app/<path:name>")
def asset(name: str) -> Response:
    return _secured(_send(ASSETS, name, max_age=300))


def _send(folder: Path, name: str, max_age: int) -> Response:
    """The file, gzip-compressed for a client that accepts it (the text assets shrink about
    4x). send_from_directory refuses paths that leave ``folder`` (404), e.g. ../../etc/passwd."""
    path = safe_join(str(folder), name)
    if not request.accept_encodings["gzip"] or path is None or not Path(path).is_file():
        response = send_from_directory(folder, name, max_age=max_age)
        response.vary.add("Accept-Encoding")
        return response
    stat = Path(path).stat()
    body, etag = _gzipped(path, stat.st_mtime_ns, stat.st_size)
    response = Response(body, mimetype=mimetypes.guess_type(path)[0] or "application/octet-stream")
    response.content_encoding = "gzip"
    response.vary.add("Accept-Encoding")
    response.cache_control.public = True
    response.cache_control.max_age = max_age
    response.set_etag(etag)
    response.make_conditional(request)  # 304 when the ETag matches (it changes the response)
    return response


@lru_cache(maxsize=64)
def _gzipped(path: str, mtime_ns: int, size: int) -> tuple[bytes, str]:
    """Compressed once per version of the file (its mtime and size are part of the key)."""
    body = gzip.compress(Path(path).read_bytes(), compresslevel=9, mtime=0)
    return body, hashlib.sha256(body).hexdigest()[:32] + "-gz"
