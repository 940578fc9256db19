"""Storage in PostgreSQL: the append-only event store (events.py), the connection pool and the
embedded server (db.py), the turn clock's deadline rows, export files, and the in-process cache of
recent states. It knows nothing of HTTP or of any one game."""
