"""The lifecycle of issue 20 in the domain (domain/lifecycle.py), on both games: leaving a seat
before the start, a seat taken over by the greedy bot after it (resigned or stalled), a game
cancelled because its seats did not fill; and the audit (domain/audit.py), which re-decides each
of them and the bot's moves after them, catching an edited one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from export_support import edited, export_records, rechain, to_jsonl, versions_of
from rich.console import Console

from domain.audit import audit
from domain.bots import bot_command
from domain.decider import (
    BY_RESIGNED,
    BY_STALLED,
    BotSeat,
    CancelGame,
    CreateGame,
    DomainError,
    Event,
    GamePackage,
    LeaveSeat,
    MakeMove,
    TakeOver,
    TakeSeat,
    Viewer,
    commitment,
)
from domain.sequence import SEQUENCE
from domain.sushigo import SUSHI_GO
from service.cli.replay import replay_command

SEED = bytes(range(32))
GAMES = [pytest.param(SUSHI_GO, 3, id="sushi-go"), pytest.param(SEQUENCE, 4, id="sequence")]


class Table:
    """A game decided command by command, its events kept."""

    def __init__(self, game: GamePackage, players: int, bots: tuple[BotSeat, ...] = ()) -> None:
        self.game, self.events = game, []
        self.state = game.initial_state()
        self.run(CreateGame({"players": players}, commitment(SEED), SEED, bots))

    def run(self, command: Any) -> list[Event]:
        events, self.state = self.game.execute(self.state, command)
        self.events += events
        return events

    def refused(self, command: Any) -> DomainError:
        with pytest.raises(DomainError) as caught:
            self.game.execute(self.state, command)
        return caught.value

    def play_out(self) -> None:
        """Bots (and seats taken over) move at once; every other seat plays greedy, as a person."""
        while not self.state.over:
            command = bot_command(self.game, self.state, SEED)
            if command is None:
                seat = self.game.awaiting(self.state)[0]
                move = self.game.bot_move(self.state, seat, "greedy", SEED)._replace(by=None)
                command = MakeMove(seat, move, SEED)
            self.run(command)


@pytest.mark.parametrize("game", [SUSHI_GO, SEQUENCE], ids=["sushi-go", "sequence"])
def test_a_seat_left_is_taken_again_first(game: GamePackage) -> None:
    table = Table(game, 4, (BotSeat(3, "random", "R"),))
    table.run(TakeSeat("ann", SEED))
    table.run(TakeSeat("bob", SEED))
    assert table.run(LeaveSeat(0))[0].data == {"seat": 0, "name": "ann"}
    assert table.state.names == (None, "bob")
    assert table.refused(LeaveSeat(0)).code == "not_a_seat"
    assert table.run(TakeSeat("cid", SEED))[0].data == {"seat": 0, "name": "cid"}
    assert table.state.seated_at[0] > table.state.seated_at[1]  # a new holder: a new token
    while not table.state.started:
        table.run(TakeSeat("more", SEED))
    assert table.refused(LeaveSeat(1)).code == "game_started"
    table.play_out()
    assert audit(export_records(table.events))["ok"]


@pytest.mark.parametrize(("game", "players"), GAMES)
def test_a_bots_seat_cannot_be_left_nor_taken_over(game: GamePackage, players: int) -> None:
    table = Table(game, players, (BotSeat(0, "greedy", "G"),))
    assert table.refused(LeaveSeat(0)).code == "bot_seat"
    fill(table)
    assert table.refused(TakeOver(0, BY_RESIGNED)).code == "bot_seat"


@pytest.mark.parametrize(("game", "players"), GAMES)
def test_a_resigned_seat_is_the_greedy_bots_and_refuses_its_person(
    game: GamePackage, players: int
) -> None:
    table = Table(game, players)
    table.run(TakeSeat("p0", SEED))
    assert table.refused(TakeOver(0, BY_RESIGNED)).code == "game_not_started"
    fill(table)
    table.run(TakeOver(1, BY_RESIGNED))
    assert table.refused(TakeOver(1, BY_RESIGNED)).code == "seat_taken_over"
    assert game.view(table.state, Viewer(1))["seats"][1]["resigned"] is True
    while 1 not in game.awaiting(table.state):  # Sequence: until seat 1 is to move
        table.run(MakeMove(s := game.awaiting(table.state)[0], greedy(game, table, s), SEED))
    person = greedy(game, table, 1)
    assert table.refused(MakeMove(1, person, SEED)).code == "seat_taken_over"
    table.play_out()
    report = audit(export_records(table.events))
    assert report["ok"], report


def fill(table: Table) -> None:
    """Take the free seats until the game starts, each under a name of its own (names that look
    alike are refused: domain/names.py)."""
    while not table.state.started:
        table.run(TakeSeat(f"seat {len(table.state.names)}", SEED))


def greedy(game: GamePackage, table: Table, seat: int) -> Any:
    return game.bot_move(table.state, seat, "greedy", SEED)._replace(by=None)


@pytest.mark.parametrize(("game", "players"), GAMES)
def test_only_a_seat_awaited_past_its_limit_is_taken_over_as_stalled(
    game: GamePackage, players: int
) -> None:
    table = Table(game, players)
    fill(table)
    awaited = game.awaiting(table.state)[0]
    assert table.refused(TakeOver(awaited, BY_STALLED, 59, 60)).code == "not_stalled"
    assert table.refused(TakeOver(awaited, BY_STALLED)).code == "not_stalled"
    if game is SEQUENCE:  # one seat moves at a time: the others are not holding the game up
        assert table.refused(TakeOver(awaited + 1, BY_STALLED, 61, 60)).code == "not_stalled"
    data = table.run(TakeOver(awaited, BY_STALLED, 61, 60))[0].data
    assert data == {"seat": awaited, "reason": "stalled", "idle_seconds": 61, "limit_seconds": 60}
    table.play_out()
    assert audit(export_records(table.events))["ok"]


@pytest.mark.parametrize(("game", "players"), GAMES)
def test_a_game_is_cancelled_only_before_the_start_and_past_its_limit(
    game: GamePackage, players: int
) -> None:
    table = Table(game, players)
    table.run(TakeSeat("ann", SEED))
    assert table.refused(CancelGame(599, 600, SEED)).code == "not_due"
    with pytest.raises(ValueError, match="commitment"):
        game.execute(table.state, CancelGame(600, 600, b"another seed"))
    cancelled = table.run(CancelGame(600, 600, SEED))[0]
    assert cancelled.data["seed"] == SEED.hex() and table.state.status == "cancelled"
    assert game.view(table.state, Viewer(0))["status"] == "cancelled"
    for command in (TakeSeat("late", SEED), LeaveSeat(0), CancelGame(900, 600, SEED)):
        assert table.refused(command).code == "game_cancelled"
    report = audit(export_records(table.events))
    assert report["ok"] and report["complete"] and report["seats"] == ["ann"], report


# --- the audit re-decides them ------------------------------------------------------------------


def stalled_game(game: GamePackage, players: int) -> Table:
    table = Table(game, players)
    fill(table)
    table.run(TakeOver(game.awaiting(table.state)[0], BY_STALLED, 3600, 3600))
    table.play_out()
    return table


@pytest.mark.parametrize(("game", "players"), GAMES)
def test_the_audit_catches_a_seat_taken_over_before_its_limit(
    game: GamePackage, players: int
) -> None:
    records = export_records(stalled_game(game, players).events)
    version = versions_of(records, "seat_taken_over")[0]
    tampered = rechain(edited(records, version, lambda r: r["data"].update(idle_seconds=10)))
    report = audit(tampered)
    assert report["chain"]["ok"] and not report["ok"]
    assert report["replay"]["first_bad_version"] == version
    assert "not_stalled" in report["replay"]["detail"]


@pytest.mark.parametrize(("game", "players"), GAMES)
def test_the_audit_catches_a_bots_move_passed_off_as_the_persons(
    game: GamePackage, players: int
) -> None:
    records = export_records(stalled_game(game, players).events)
    move = next(r for r in records if r["data"].get("by") == BY_STALLED)
    tampered = rechain(edited(records, move["version"], lambda r: r["data"].pop("by")))
    report = audit(tampered)
    assert report["chain"]["ok"] and not report["ok"]
    assert report["replay"]["first_bad_version"] == move["version"]
    assert "seat_taken_over" in report["replay"]["detail"]


def test_the_audit_catches_a_game_cancelled_too_soon() -> None:
    table = Table(SUSHI_GO, 3)
    table.run(TakeSeat("ann", SEED))
    table.run(CancelGame(86400, 86400, SEED))
    records = export_records(table.events)
    version = versions_of(records, "game_cancelled")[0]
    tampered = rechain(edited(records, version, lambda r: r["data"].update(waited_seconds=5)))
    report = audit(tampered)
    assert report["chain"]["ok"] and not report["ok"]
    assert report["replay"]["first_bad_version"] == version


# --- cardroom replay shows them -----------------------------------------------------------------


@pytest.mark.parametrize(("game", "players"), GAMES)
def test_cardroom_replay_shows_a_takeover_and_a_cancellation(
    game: GamePackage, players: int, tmp_path: Path
) -> None:
    stalled = tmp_path / "stalled.jsonl"
    stalled.write_text(to_jsonl(export_records(stalled_game(game, players).events)))
    table = Table(game, players)
    table.run(TakeSeat("ann", SEED))
    table.run(CancelGame(600, 600, SEED))
    cancelled = tmp_path / "cancelled.jsonl"
    cancelled.write_text(to_jsonl(export_records(table.events)))
    for path, shown in ((stalled, "stalled: the greedy bot"), (cancelled, "cancelled: the seats")):
        console = Console(record=True, width=300, highlight=False)
        assert replay_command(str(path), console) == 0
        out = console.export_text()
        assert shown in out and "audit: ✓ verified" in out, out
