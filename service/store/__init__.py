"""Storage in PostgreSQL: the append-only event store (events.py), the connection pool and the
embedded server (db.py), the turn clock's deadline rows, export files, and the in-process cache of
recent states. It imports only the domain (never HTTP, live updates, the command line or the
games): it knows nothing of any one game."""
