"""The command line, ``cardroom``: serve, migrate, audit and replay an export in the terminal."""
