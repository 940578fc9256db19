"""``cardroom replay`` for Sequence: every turn of a game from its export, and the final board."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from domain.decider import Event
from domain.sequence.board import BOARD

TEAM_MARKS = ("[blue]●[/]", "[green]●[/]", "[red]●[/]")  # team 0, 1, 2 (Q4)


def show_sequence(events: Sequence[Event], console: Console) -> None:
    names: list[str] = []
    turns = Table(title="turns (Q6–Q8)", box=box.SIMPLE_HEAD)
    for column in ("turn", "seat", "team", "move", "drawn"):
        turns.add_column(column)
    chips: dict[tuple[int, int], int] = {}
    for event in events:
        data = event.data
        if event.type == "game_created":
            rules = data["rules"]
            console.print(
                f"[bold]Sequence[/] {rules['players']} players in {rules['teams']} teams"
                f"{', advanced jacks (Q11)' if rules.get('advanced_jacks') else ''}"
                f" · seed commitment {data['seed_commitment'][:16]}…"
            )
        elif event.type == "game_started":
            names = list(data["seats"])
        elif event.type in ("card_played", "dead_card_discarded", "turn_passed"):
            turns.add_row(*_turn_row(event.type, data, names, chips))
        elif event.type == "seat_taken_over":
            who = names[data["seat"]] if data["seat"] < len(names) else str(data["seat"])
            turns.add_row("", who, "", f"[bold]{data['reason']}: the greedy bot plays on[/]", "")
        elif event.type == "game_cancelled":
            console.print(
                f"[bold]cancelled[/]: the seats did not fill in {data['limit_seconds']} s"
            )
        elif event.type == "sequence_completed":
            turns.add_row("", "", str(data["team"]), "[bold]sequence completed (Q9/Q10)[/]", "")
        elif event.type == "game_ended":
            console.print(turns)
            console.print(_board(chips))
            console.print(_result(data, names))


def _turn_row(
    kind: str, data: Mapping[str, Any], names: list[str], chips: dict[tuple[int, int], int]
) -> list[str]:
    seat = data["seat"]
    who = names[seat] if seat < len(names) else str(seat)
    by = f" ({data['by']})" if data.get("by") else ""
    if kind == "turn_passed":
        return [str(data["turn"]), who, "", f"pass{' (auto)' if data.get('auto') else ''}", ""]
    if kind == "dead_card_discarded":
        move = f"discard dead {data['card']} (Q7){by}"
        return [str(data["turn"]), who, "", move, str(data.get("drawn") or "")]
    if data.get("removed"):
        row, col = data["removed"]
        chips.pop((row, col), None)
        move = f"{data['card']} removes the chip at {row},{col}{by}"
    else:
        row, col = data["cell"]
        chips[(row, col)] = data["team"]
        move = f"{data['card']} → {row},{col} ({BOARD[row][col]}){by}"
    return [str(data["turn"]), who, str(data["team"]), move, str(data.get("drawn") or "")]


def _board(chips: Mapping[tuple[int, int], int]) -> Table:
    board = Table(title="final board", box=box.SQUARE, show_header=False)
    for _ in range(10):
        board.add_column(justify="center")
    for row in range(10):
        board.add_row(
            *(
                TEAM_MARKS[chips[(row, col)]]
                if (row, col) in chips
                else f"[dim]{BOARD[row][col]}[/]"
                for col in range(10)
            )
        )
    return board


def _result(data: Mapping[str, Any], names: list[str]) -> str:
    if data.get("result") == "draw":
        return "[bold]a draw[/]: every seat passed in a row (Q8)"
    winners = ", ".join(names[s] if s < len(names) else str(s) for s in data["winners"])
    per_team = ", ".join(f"team {t['team']}: {t['total']}" for t in data["totals"])
    return f"[bold]team {data['team']} wins[/] (Q12): {winners} · sequences per team {per_team}"
