"""Sequence in the service: its schemas and its terminal replay view, registered in one call."""

from domain.sequence import SEQUENCE
from service.games.registry import GameAdapter, register
from service.games.sequence import schemas
from service.games.sequence.replay_view import show_sequence

register(
    GameAdapter(
        SEQUENCE,
        schemas.SequenceRules(),
        schemas.SequenceMove(),
        schemas.SequenceView(),
        schemas.SequenceScoreSheet(),
        # One seat moves per turn; a dead card's discard (Q7) keeps the turn.
        turn=lambda state: state.turn,
        turn_fields=("turn",),
        move_shapes=(schemas.SequencePlay(), schemas.SequenceDiscard(), schemas.SequencePass()),
        replay=show_sequence,
        waiting_for=lambda view: [] if view["seat_to_move"] is None else [view["seat_to_move"]],
    )
)
