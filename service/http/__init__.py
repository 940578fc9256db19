"""HTTP: the Flask app factory, the REST routes and the event stream, and what every request goes
through on its way in and out — authentication, idempotency keys, rate limits, RFC 9457 problems —
plus the static web page. It calls the service layer (service.play); nothing below imports it."""
