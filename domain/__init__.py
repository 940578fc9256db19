"""The pure game logic: deciders, views and scoring. No I/O, no clock, no hidden randomness."""
