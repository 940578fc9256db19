"""The command line, ``cardroom``: serve, migrate, audit an export, replay one in the terminal
(each game's own view, from its registered package), and print the generated contract
(``cardroom openapi``). The top layer: it may import anything in the service."""
