"""The service around the pure game rules of ``domain/``, in layers that import only downward
(tests/test_layers.py): ``store/`` (PostgreSQL), ``games/`` (each game's schemas and views, each
registering itself), the service layer ``play/`` + ``autoplay.py`` (commands in, events
appended, bots and the clock's moves; its refusals are ``errors.py``'s, not HTTP's), ``live/``
(the live hub and its log reader, the turn clock), and on top ``http/`` (the API and the web
page) and ``cli/`` (the ``cardroom`` command). ``bodies.py`` holds the marshmallow pieces every
body is made of."""
