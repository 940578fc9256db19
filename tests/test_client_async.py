"""``AsyncClient`` (issue 38, item 5) against a real ``cardroom serve``: async bots play both
games to the end concurrently (``choose`` plain or a coroutine), their receipts verified and
kept pass the audit; a refused move is a ``Refused`` with its code; ``events()`` yields every
event once, in order; a service that cannot be reached raises ``Unavailable`` past the budget."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from cardroom_client import (
    AsyncClient,
    AsyncSeat,
    BotSeat,
    FirstMoveBot,
    Move,
    Refused,
    SushiGoPick,
    SushiGoView,
    Unavailable,
    View,
)
from serve_support import Served, free_port

pytest_plugins = ["client_fixtures"]


class Thinking(FirstMoveBot):
    """A bot whose ``choose`` is a coroutine (it might ask a model over the network)."""

    async def choose(self, view: View) -> Move:  # type: ignore[override]
        await asyncio.sleep(0)
        return super().choose(view)


def test_async_bots_play_sushi_go_and_pass_the_audit(served: Served) -> None:
    async def run() -> tuple[list[View], dict[str, Any], int]:
        async with AsyncClient(served.url) as client:
            game = await client.create_game("sushi-go", 3)
            seats = [await game.join(name) for name in ("Ada", "Bea", "Cy")]
            bots = [FirstMoveBot(), Thinking(), FirstMoveBot()]
            finals = await asyncio.gather(
                *(b.play_async(s) for b, s in zip(bots, seats, strict=True))
            )
            return list(finals), await client.audit(game), len(client.receipts(game))

    finals, report, receipts = asyncio.run(run())
    assert {f.status for f in finals} == {"over"}
    assert finals[0].totals == finals[1].totals == finals[2].totals
    assert receipts >= 4 + 3 * 10 and report["ok"] is True


def test_an_async_bot_plays_sequence_against_the_service(served: Served) -> None:
    async def run() -> View:
        async with AsyncClient(served.url) as client:
            game = await client.create_game("sequence", 2, bots=[BotSeat(1, "greedy")])
            return await Thinking().play_async(await game.join("Robo"))

    final = asyncio.run(run())
    assert final.game == "sequence" and final.status == "over"


def test_a_refused_async_move_says_its_code(served: Served) -> None:
    async def run() -> tuple[Refused, View, View]:
        async with AsyncClient(served.url) as client:
            game = await client.create_game("sushi-go", 2, bots=[BotSeat(1, "random")])
            seat: AsyncSeat = await game.join("Di")
            view = await seat.view()
            assert isinstance(view, SushiGoView) and view.you is not None
            card = view.you.hand[0]
            with pytest.raises(Refused) as stale:
                await seat.move(SushiGoPick(view.round, view.turn + 1, (card,)))
            after = await seat.move(SushiGoPick(view.round, view.turn, (card,)))
            return stale.value, view, after

    stale, before, after = asyncio.run(run())
    assert (stale.status, stale.code) == (409, "stale_move")
    assert after.version > before.version


def test_async_events_come_once_and_in_order(served: Served) -> None:
    async def run() -> tuple[list[int], int]:
        async with AsyncClient(served.url) as client:
            bots = [BotSeat(0, "random"), BotSeat(1, "random")]
            game = await client.create_game("sushi-go", 2, bots=bots)
            versions = [event.version async for event in game.events()]
            return versions, (await game.view()).version

    versions, last = asyncio.run(run())
    assert versions == list(range(1, last + 1))


def test_an_unreachable_service_raises_unavailable_past_the_budget() -> None:
    async def run() -> tuple[Unavailable, Unavailable]:
        url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
        async with AsyncClient(url, retry_budget=1.0) as client:
            with pytest.raises(Unavailable) as viewing:
                await client.game("g-1").view()
            with pytest.raises(Unavailable) as following:
                _ = [event async for event in client.game("g-1").events()]
            return viewing.value, following.value

    for error in asyncio.run(run()):
        assert error.waited >= 1.0 and "ConnectError" in (error.cause or "")
