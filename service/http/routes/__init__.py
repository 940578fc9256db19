"""The REST API's routes, one module per resource, all on one blueprint, ``api`` (so endpoint
names stay ``api.<view>``: url_for, the rate limits in abuse.py). Shapes are in openapi.yaml, whose
paths come from each view's docstring; every body goes through a schema.

The modules register their routes as they are imported, in the order below: the order of the
contract's paths (service/http/contract.py walks the rules as registered).
"""

from service.http.routes.common import api

# isort: off
from service.http.routes import lobby, views, seats, invitations  # noqa: F401
from service.http.routes import rematch, moves, history, operations  # noqa: F401
from service.http.routes import accounts, account_stream  # noqa: F401
from service.http.routes import account_games  # noqa: F401
from service.http.routes import challenges, quick  # noqa: F401
from service.http.routes import ratings  # noqa: F401
from service.http.routes import webhooks  # noqa: F401
# isort: on

__all__ = ["api"]
