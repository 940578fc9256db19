"""Sushi Go! in ``cardroom replay`` (service/cli/replay.py): a game from its events, turn by turn,
with its score sheet."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich import box
from rich.console import Console, JustifyMethod
from rich.rule import Rule
from rich.table import Table

from domain.decider import Event
from domain.sushigo.cards import display_names
from domain.sushigo.scoring import CATEGORIES

LEGEND = (
    "(chopsticks): two cards in one pick (S6); (auto): a last card the service picked (S5); "
    "(no wasabi): a nigiri kept off a wasabi (S9); the dummy's card is named by its controller "
    "(S17)"
)


def show_sushigo(events: Sequence[Event], console: Console) -> None:
    """A Sushi Go! game, turn by turn, with its score sheet."""
    _Replay(console).show(events)


class _Replay:
    def __init__(self, console: Console) -> None:
        self.console = console
        self.names: list[str] = []
        self.card: dict[str, str] = {}
        self.auto: set[tuple[int, int, int]] = set()  # (round, turn, seat) picked by the service
        self.turns: Table | None = None
        self.totals: list[int] = []
        self.dummy = self.alternate = False

    def show(self, events: Sequence[Event]) -> None:
        for event in events:
            getattr(self, f"_{event.type}", self._other)(event.data)
        self._flush()

    def _other(self, data: Mapping[str, Any]) -> None:
        pass

    def _game_created(self, data: Mapping[str, Any]) -> None:
        rules = data["rules"]
        self.card = display_names(rules["edition"])
        variant = ", dummy (S17)" if rules.get("dummy") else ""
        self.console.print(
            f"[bold]Sushi Go![/] {rules['edition']}, {rules['players']} players, passing "
            f"{rules['pass_direction']}{variant} · seed commitment {data['seed_commitment'][:16]}…"
        )
        self.dummy = bool(rules.get("dummy"))
        self.alternate = rules["pass_direction"] == "alternate"

    def _game_started(self, data: Mapping[str, Any]) -> None:
        self.names = [*data["seats"], *(["dummy"] if self.dummy else [])]
        self.totals = [0] * len(self.names)
        self.console.print("seats: " + ", ".join(f"{i} {n}" for i, n in enumerate(self.names)))

    def _seat_taken_over(self, data: Mapping[str, Any]) -> None:
        seat = data["seat"]
        self.console.print(
            f"  {self.names[seat]} ({seat}) {data['reason']}: the greedy bot plays the seat"
        )

    def _game_cancelled(self, data: Mapping[str, Any]) -> None:
        self.console.print(
            f"[bold]cancelled[/]: the seats did not fill in {data['limit_seconds']} s"
            f" · seed {data['seed'][:16]}…"
        )

    def _round_dealt(self, data: Mapping[str, Any]) -> None:
        self._flush()
        direction = "right" if self.alternate and data["round"] == 2 else "left"
        self.console.print(Rule(f"round {data['round']}, passing {direction}"))
        hands = list(data["hands"])
        if self.dummy:
            hands.append(data.get("dummy_pile"))
        for seat, hand in enumerate(hands):
            shown = "[dim]hidden[/]" if hand is None else ", ".join(self._names(hand))
            self.console.print(f"  dealt to {self.names[seat]}: {shown}")
        self.turns = Table("turn", *self.names, title_justify="left")

    def _card_picked(self, data: Mapping[str, Any]) -> None:
        if data.get("auto"):
            self.auto.add((data["round"], data["turn"], data["seat"]))

    def _turn_revealed(self, data: Mapping[str, Any]) -> None:
        row = [""] * len(self.names)
        for pick in data["picks"]:
            seat = pick["seat"]
            text = " + ".join(self._names(pick["cards"]))
            if pick.get("chopsticks"):
                text += " [cyan](chopsticks)[/]"
            declined = [not use for use in pick.get("use_wasabi") or []]
            if any(declined):
                text += " [dim](no wasabi)[/]"
            if (data["round"], data["turn"], seat) in self.auto:
                text += " [dim](auto)[/]"
            row[seat] = text
            if pick.get("dummy_card") is not None:
                row[-1] = f"{self.card[pick['dummy_card']]} [dim](by {self.names[seat]})[/]"
        if self.turns is not None:
            self.turns.add_row(str(data["turn"]), *row)

    def _round_scored(self, data: Mapping[str, Any]) -> None:
        self._flush()
        table = Table(title=f"round {data['round']} scores", box=box.SIMPLE_HEAD)
        for column in ("seat", *CATEGORIES, "round", "total"):
            justify: JustifyMethod = "left" if column == "seat" else "right"
            table.add_column(column, min_width=len(column), justify=justify)
        for score in data["scores"]:
            seat = score["seat"]
            self.totals[seat] += score["total"]
            cells = [str(score.get(category, {}).get("points", 0)) for category in CATEGORIES]
            table.add_row(self.names[seat], *cells, str(score["total"]), str(self.totals[seat]))
        self.console.print(table)

    def _game_ended(self, data: Mapping[str, Any]) -> None:
        self._flush()
        self.console.print(Rule("end"))
        winners = set(data["winners"])
        table = Table("seat", "puddings", "points (S14/S15)", "total", "", title="final")
        totals = {t["seat"]: t["total"] for t in data["totals"]}
        for pudding in data["puddings"]:
            seat = pudding["seat"]
            table.add_row(
                self.names[seat],
                str(pudding["count"]),
                str(pudding["points"]),
                str(totals[seat]),
                "[bold]★ winner[/]" if seat in winners else "",
            )
        self.console.print(table)
        names = " and ".join(self.names[w] for w in data["winners"])
        self.console.print(f"winner{'s' if len(winners) > 1 else ''} (S16): [bold]{names}[/]")

    def _flush(self) -> None:
        if self.turns is not None and self.turns.row_count:
            self.console.print(self.turns)
            self.console.print(LEGEND, style="dim")
        self.turns = None

    def _names(self, cards: Sequence[str]) -> list[str]:
        return [self.card.get(card, card) for card in cards]
