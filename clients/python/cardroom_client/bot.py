"""Bots: write ``choose(view) -> move``; ``Bot.play(seat)`` plays the seat to the game's end,
following its events; ``Bot.play_account(account)`` plays every game the account sits in, from
its one account stream, and accepts the challenges offered to it."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from .account_models import CHALLENGE, GAME_FINISHED, YOUR_TURN, Item
from .client import Seat
from .errors import CardroomError
from .models import (
    Move,
    SequencePass,
    SequencePlay,
    SequenceView,
    SushiGoPick,
    SushiGoView,
    View,
)

if TYPE_CHECKING:
    from .account import Account
    from .aio import AsyncSeat

# Refusals that mean the game moved on since the view the move was chosen in: read it again.
MOVED_ON = frozenset({"stale_move", "already_picked", "not_your_turn", "seat_taken_over"})
OVER = ("over", "cancelled")


class Bot:
    """A player. ``choose`` is called with the seat's view whenever the game waits for the
    seat's move (``view.my_move``), for either game; it returns the move."""

    def choose(self, view: View) -> Move:
        raise NotImplementedError

    def game_over(self, view: View) -> None:
        """Called once with the final view (a place to record the result)."""

    def play(self, seat: Seat) -> View:
        """Play ``seat`` to the end of its game; the final view."""
        view = self._act(seat, seat.view())
        after = 0
        while view.status not in ("over", "cancelled"):
            for event in seat.events(after):
                after = event.version
                view = self._act(seat, seat.view())
                if view.status in ("over", "cancelled"):
                    break
            else:  # the events ran out (the game's last was sent): see where it stands
                view = self._act(seat, seat.view())
        self.game_over(view)
        return view

    async def play_async(self, seat: AsyncSeat) -> View:
        """``play``, for a seat of an ``AsyncClient``: the same loop, awaited. ``choose`` may
        be a coroutine function (a bot that asks a model over the network, say)."""
        view = await self._act_async(seat, await seat.view())
        after = 0
        while view.status not in OVER:
            async for event in seat.events(after):
                after = event.version
                view = await self._act_async(seat, await seat.view())
                if view.status in OVER:
                    break
            else:  # the events ran out (the game's last was sent): see where it stands
                view = await self._act_async(seat, await seat.view())
        self.game_over(view)
        return view

    async def _act_async(self, seat: AsyncSeat, view: View) -> View:
        while view.my_move:
            chosen: Move | Awaitable[Move] = self.choose(view)
            move = await chosen if inspect.isawaitable(chosen) else chosen
            try:
                view = await seat.move(move)
            except CardroomError as refused:
                if refused.code not in MOVED_ON:
                    raise
                view = await seat.view()
        return view

    def play_account(
        self,
        account: Account,
        *,
        games: int | None = None,
        accept_challenges: bool = True,
        after: str | None = None,
        next_game: Callable[[], object] | None = None,
    ) -> dict[str, View]:
        """Play every game ``account`` sits in, from its stream: on each ``your_turn`` the
        seat's view is read and ``choose`` moves while the game waits for it; a challenge
        offered to the account is accepted (its game then comes on the stream). Returns once
        ``games`` games have finished (None: never), their final views by game id;
        ``next_game`` is called after each finished game while more are wanted (to ask for a
        quick match, say). ``after``: an ``Item.event_id`` to resume the stream from."""
        finals: dict[str, View] = {}
        for item in account.stream(after):
            gid = item.game_id
            if item.type == YOUR_TURN and gid is not None and gid not in finals:
                seat = account.seat(gid, item.seat)
                view = self._act(seat, seat.view())
                if view.status in OVER:
                    self._finished(finals, view)
            elif item.type == GAME_FINISHED and gid is not None and gid not in finals:
                self._finished(finals, account.seat(gid, item.seat).view())
            elif item.type == CHALLENGE and accept_challenges:
                self._accept(account, item)
                continue
            else:
                continue
            if games is not None and len(finals) >= games:
                return finals
            if gid in finals and next_game is not None:
                next_game()
        return finals  # the stream does not end by itself: not reached

    def _finished(self, finals: dict[str, View], view: View) -> None:
        finals[view.game_id] = view
        self.game_over(view)

    @staticmethod
    def _accept(account: Account, item: Item) -> None:
        """Accept a challenge offered to the account (one it offered, or one answered or
        expired meanwhile, is left as it is: its game, if any, comes on the stream)."""
        data = item.data
        offered_to = (data.get("to") or {}).get("account_id")
        cid = data.get("challenge_id")
        if offered_to != account.id or data.get("status") != "offered" or not cid:
            return
        try:
            account.accept(str(cid))
        except CardroomError as refused:
            if refused.status != 409:  # answered, cancelled or expired since: nothing to do
                raise

    def _act(self, seat: Seat, view: View) -> View:
        """Move as long as the game waits for this seat (a Sequence discard keeps the turn)."""
        while view.my_move:
            try:
                view = seat.move(self.choose(view))
            except CardroomError as refused:
                if refused.code not in MOVED_ON:
                    raise
                view = seat.view()
        return view


class FirstMoveBot(Bot):
    """The simplest legal play: the first card of the hand (the second for the dummy, S17); in
    Sequence the first card with a cell, else a pass (the service passes for a seat with
    nothing to do, Q8, but a seat with only dead cards may discard or pass)."""

    def choose(self, view: View) -> Move:
        assert view.you is not None
        if isinstance(view, SushiGoView):
            hand = view.you.hand
            dummy = hand[1] if view.you.controls_dummy else None
            return SushiGoPick(view.round, view.turn, (hand[0],), dummy_card=dummy)
        assert isinstance(view, SequenceView)
        for play in view.you.plays:
            if play.cells:
                return SequencePlay(view.turn, play.card, play.cells[0])
        return SequencePass(view.turn)
