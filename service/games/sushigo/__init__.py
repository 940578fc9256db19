"""Sushi Go! in the service: its schemas and its terminal replay view, registered in one call."""

from domain.sushigo import SUSHI_GO
from service.games.registry import GameAdapter, register
from service.games.sushigo import schemas
from service.games.sushigo.replay_view import show_sushigo

register(
    GameAdapter(
        SUSHI_GO,
        schemas.SushiGoRules(),
        schemas.SushiGoMove(),
        schemas.SushiGoView(),
        schemas.SushiGoScoreSheet(),
        turn=lambda state: (state.round, state.turn),
        turn_fields=("round", "turn"),
        replay=show_sushigo,
        waiting_for=lambda view: [s["seat"] for s in view["seats"] if not s["picked"]],  # S4
    )
)
