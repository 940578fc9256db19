"""``cardroom audit``: audit exports offline and show the reports (with ``rich``)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table

from domain.audit import Keys, audit_export, failed_report
from service.games.registry import load_games
from service.store.exports import read_export

PASS, FAIL, UNCHECKED = "[green]✓[/]", "[red]✗[/]", "[dim]–[/]"
CHECK_NAMES = {
    "chain": "hash chain",
    "seed": "seed vs commitment (S18)",
    "deals": "deals (S18)",
    "scores": "scores (S10–S16)",
    "replay": "replay",
    "points": "points add up",
    "signature": "signed checkpoint",
    "receipts": "players' receipts",
}


def audit_source(
    source: str, keys: Keys | None = None, receipts: Sequence[Any] = ()
) -> dict[str, Any]:
    """The report for one file (or game URL); one that cannot be read gives a failed report."""
    try:
        text = read_export(source)
    except (OSError, ValueError) as exc:
        return failed_report(f"cannot read {source}: {exc}")
    return audit_export(text, keys, receipts)


def audit_command(
    sources: Sequence[str],
    as_json: bool,
    console: Console | None = None,
    keys: Keys | None = None,
    receipts: Sequence[Any] = (),
) -> int:
    """Audit every source (with the service's public ``keys`` and the players' ``receipts``, if
    given); 0 if all pass, else 1."""
    load_games()  # every registered game's exports can be audited, not only the domain's list
    console = console or Console(highlight=False)
    reports = []
    if len(sources) == 1:
        reports.append({"file": sources[0], **audit_source(sources[0], keys, receipts)})
    else:
        progress = Progress(
            TextColumn("auditing"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.description}"),
            console=Console(stderr=True),
            transient=True,
        )
        with progress:
            for source in progress.track(sources, description=""):
                progress.update(progress.task_ids[0], description=source)
                reports.append({"file": source, **audit_source(source, keys, receipts)})
    if as_json:
        print(json.dumps(reports[0] if len(reports) == 1 else reports, indent=2))
    elif len(reports) == 1:
        render_report(console, reports[0])
    else:
        render_summary(console, reports)
    return 0 if all(r["ok"] for r in reports) else 1


def mark(ok: bool | None) -> str:
    return PASS if ok is True else FAIL if ok is False else UNCHECKED


def verdict(report: Mapping[str, Any]) -> str:
    if report["ok"]:
        return "[bold green]✓ verified[/]"
    if report["error"]:
        return "[bold red]✗ unreadable[/]"
    failed = [name for name in CHECK_NAMES if _check_ok(report, name) is False]
    if failed:
        return "[bold red]✗ failed[/]"
    return "[bold yellow]– incomplete[/]"


def _check_ok(report: Mapping[str, Any], name: str) -> bool | None:
    if name == "seed":
        return report["seed"]["matches_commitment"]
    return report[name]["ok"]


def render_summary(console: Console, reports: Sequence[Mapping[str, Any]]) -> None:
    table = Table(title="audit", title_justify="left")
    for column in ("file", "game", "events"):
        table.add_column(column, overflow="fold")
    for check in ("chain", "seed", "deals", "scores"):
        table.add_column(check, justify="center")
    table.add_column("ok", justify="center")
    for r in reports:
        table.add_row(
            r["file"],
            r["game"] or "?",
            str(r["events"]),
            *(mark(_check_ok(r, check)) for check in ("chain", "seed", "deals", "scores")),
            mark(r["ok"]),
        )
    console.print(table)
    for r in reports:
        if not r["ok"]:
            console.print(f"{FAIL} {r['file']}: {first_problem(r)}")
    passed = sum(1 for r in reports if r["ok"])
    console.print(f"{passed} of {len(reports)} passed")


def first_problem(report: Mapping[str, Any]) -> str:
    """Why ``report`` did not pass, in one line."""
    if report["error"]:
        return str(report["error"])
    if report["seed"]["matches_commitment"] is False:
        return "the revealed seed does not match its commitment (S18)"
    failed = [report[c] for c in CHECK_NAMES if c != "seed" and report[c]["ok"] is False]
    if failed:
        return str(min(failed, key=lambda c: c.get("first_bad_version") or 0)["detail"])
    return f"incomplete: {report['reason']}"


def render_report(console: Console, report: Mapping[str, Any]) -> None:
    name = report.get("file", "export")
    console.print(f"[bold]{name}[/]  {verdict(report)}")
    console.print(
        f"game {report['game'] or '?'} {report['game_id'] or ''} · {report['events']} events"
    )
    if report["error"]:
        console.print(f"[red]error:[/] {report['error']}")
        return
    if report["reason"]:
        console.print(f"[yellow]incomplete:[/] {report['reason']}")
    checks = Table(title="checks", title_justify="left")
    for column in ("check", "", "first bad version", "detail"):
        checks.add_column(column, overflow="fold")
    for key, label in CHECK_NAMES.items():
        section = report[key]
        if key == "seed":
            bad = None if section["matches_commitment"] is not False else section["version"]
            detail = f"revealed at version {section['version']}" if section["revealed"] else ""
        else:
            bad, detail = section.get("first_bad_version"), section["detail"] or ""
        checks.add_row(label, mark(_check_ok(report, key)), str(bad or ""), detail)
    console.print(checks)
    for refused in report["receipts"]["refused"]:
        console.print(f"[yellow]receipt {refused['receipt']} refused:[/] {refused['reason']}")
    _render_totals(console, report)
    for section in report["provenance"] or []:
        _render_section(console, section)


def _render_totals(console: Console, report: Mapping[str, Any]) -> None:
    recorded, totals = report["recorded_totals"], report["totals"]
    if recorded is None and totals is None:
        return
    seats = report["seats"]
    winners = set(report["winners"] or [])
    # Sushi Go! totals name a seat (S16), Sequence's a team (Q12)
    unit = "team" if any("team" in t for t in recorded or totals) else "seat"
    theirs, ours = _by(unit, recorded), _by(unit, totals)
    table = Table(title="totals (Q12)" if unit == "team" else "totals (S16)", title_justify="left")
    for column in (unit, "name", "recorded", "recomputed", "winner"):
        table.add_column(
            column, justify="right" if column in ("recorded", "recomputed") else "left"
        )
    for key in sorted(theirs.keys() | ours.keys()):
        same = ours.get(key) == theirs.get(key)
        table.add_row(
            str(key),
            seats[key] if unit == "seat" and key < len(seats) else "",
            str(theirs.get(key)),
            str(ours.get(key)) if same else f"[red]{ours.get(key)}[/]",
            "★" if unit == "seat" and key in winners else "",
        )
    console.print(table)


def _by(unit: str, totals: list[Mapping[str, Any]] | None) -> dict[int, Any]:
    """``totals`` (of a report) by seat or team; a malformed entry is left out."""
    return {t[unit]: t.get("total") for t in totals or [] if isinstance(t, Mapping) and unit in t}


def _render_section(console: Console, section: Mapping[str, Any]) -> None:
    """One scoring event: points per seat and category, the rules, and the cards behind them
    (``v12/14``: picked by the card_picked of version 12, placed by the turn_revealed of 14)."""
    title = (
        f"round {section['round']}" if section["kind"] == "round" else "end: puddings and totals"
    )
    table = Table(title=f"{title} · version {section['version']}", title_justify="left")
    for column in ("seat", "category", "points", "rules", "cards (picked/revealed versions)"):
        table.add_column(column, overflow="fold", justify="right" if column == "points" else "left")
    for seat in section["seats"]:
        label = f"{seat['name']}" + (" (S17)" if seat["dummy"] else "")
        scoring = [c for c in seat["categories"] if c["points"] or c.get("recorded")]
        for category in scoring:
            points = str(category["points"])
            if category.get("recorded") not in (None, category["points"]):
                points += f" [red](recorded {category['recorded']})[/]"
            table.add_row(
                label,
                category["category"],
                points,
                ", ".join(category["rules"]),
                ", ".join(_card(c) for c in category["cards"]),
            )
            label = ""
        total = f"[bold]{seat['points']}[/]"
        if seat.get("recorded") not in (None, seat["points"]):
            total += f" [red](recorded {seat['recorded']})[/]"
        if "total" in seat:
            total += f" · total {seat['total']}"
        table.add_row(label, "[bold]sum[/]", total, "", "", end_section=True)
    console.print(table)


def _card(card: Mapping[str, Any]) -> str:
    text = f"{card['card']} v{card['picked']}/{card['revealed']}"
    if "wasabi" in card:
        wasabi = card["wasabi"]
        text += f" on wasabi v{wasabi['picked']}/{wasabi['revealed']}"
    return text
