"""Live play: the hub (one reader of the log per process, ``reader.py``, that wakes streams and
long polls when a game's events are appended) and the turn clock's sweeper, which makes the moves of
turns whose deadline passed through the service layer. Imports the store and the service layer,
never HTTP."""
