"""HTTP: the Flask app factory, the REST routes and the event stream, what every request goes
through on its way in and out (authentication, idempotency keys, rate limits, RFC 9457 problems,
to which the service layer's and the domain's errors are mapped), the static web page, and the
contract: ``contract.py`` generates openapi.yaml from the routes' docstrings and the marshmallow
schemas. It calls the service layer (service.play); nothing but the command line imports it."""
