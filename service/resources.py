"""Files the service reads at run time that live outside its packages in a checkout
(``migrations/``, ``openapi.yaml``): a wheel carries copies in ``service/_bundled/`` (setup.py)."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
_BUNDLED = _PACKAGE / "_bundled"
_CHECKOUT = _PACKAGE.parent


def _find(name: str) -> Path:
    bundled = _BUNDLED / name
    return bundled if bundled.exists() else _CHECKOUT / name


MIGRATIONS = _find("migrations")
OPENAPI = _find("openapi.yaml")
