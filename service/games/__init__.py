"""What the service knows of each game, one package per game named as in ``domain/`` (its
``schemas.py``: rules, move, view and score sheet; its ``replay_view.py`` for ``cardroom
replay``), each registering itself in one call from its ``__init__.py``; ``registry.py`` finds
them (every package here) so that nothing shared names a game. Imports the domain and
``service.bodies`` only."""
