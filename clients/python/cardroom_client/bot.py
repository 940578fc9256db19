"""Bots: write ``choose(view) -> move``; ``Bot.play(seat)`` plays the seat to the game's end,
following its events."""

from __future__ import annotations

from .client import Seat
from .models import (
    Move,
    SequencePass,
    SequencePlay,
    SequenceView,
    SushiGoPick,
    SushiGoView,
    View,
)
from .retry import CardroomError

# Refusals that mean the game moved on since the view the move was chosen in: read it again.
MOVED_ON = frozenset({"stale_move", "already_picked", "not_your_turn", "seat_taken_over"})


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
