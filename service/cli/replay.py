"""``cardroom replay``: a game from its export (a file or a game's URL), shown by its game's
replay view (service/games/<game>/replay_view.py), then the audit's verdict."""

from __future__ import annotations

from rich.console import Console

from domain.audit import audit, parse_export, split_checkpoint
from domain.decider import Event
from domain.games import GAMES
from service.cli.terminal import verdict
from service.games.registry import load_games
from service.store.exports import read_export


def replay_command(source: str, console: Console | None = None) -> int:
    """Print the game of ``source`` (a file or a game's URL); 0 if it could be read, else 1."""
    console = console or Console(highlight=False)
    games = load_games()  # registering a game adds it to the domain's GAMES too
    try:
        records, checkpoint = split_checkpoint(parse_export(read_export(source)))
        name = records[0].get("data", {}).get("game") if records else None
        if name not in GAMES:
            raise ValueError("not an export of a game (its first event must be game_created)")
        game = GAMES[name]
        events = [
            Event(r["type"], r["data"], r["schema_version"])
            if "redacted" in r["data"]
            else game.upcast(Event(r["type"], r["data"], r["schema_version"]))
            for r in records
        ]
        show = games[name].replay
        if show is not None:
            show(events, console)
    except (OSError, ValueError, KeyError, TypeError, IndexError) as exc:
        console.print(f"[red]cannot replay {source}:[/] {type(exc).__name__}: {exc}")
        return 1
    report = audit([*records, {"checkpoint": checkpoint}] if checkpoint else records)
    console.print(f"audit: {verdict(report)} (cardroom audit {source} for the details)")
    return 0
