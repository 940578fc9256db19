"""What the reads, the commands and the sweeps of the service layer share: a loaded game
(``Loaded``), the game adapters by name, the limits (retries, cache sizes, the default stall and
fill times), and the refusals the commands raise alike (a stale move, a seat left, too many
conflicts). Kept apart so that those modules import it and not each other."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID

from domain.decider import SPECTATOR
from service import autoplay, errors
from service.games.registry import GameAdapter, load_games
from service.store.events import SeatToken

MAX_ATTEMPTS = 20
CACHE_SIZE = 2048  # games per process whose state, seed and seat tokens are kept
STALL_SECONDS = 3600  # defaults of CARDROOM_STALL_SECONDS and CARDROOM_FILL_SECONDS
FILL_SECONDS = 24 * 3600


@dataclass(frozen=True)
class Loaded:
    id: UUID
    adapter: GameAdapter
    state: Any

    @property
    def version(self) -> int:
        return self.state.version


def adapter_for(name: str) -> GameAdapter:
    adapters = load_games()
    adapter = adapters.get(name)
    if adapter is None:
        raise errors.rule_broken(
            "unknown_game", f"unknown game {name!r}; this service hosts {sorted(adapters)}"
        )
    return adapter


def has_started(game: Any, state: Any) -> bool:
    return game.view(state, SPECTATOR)["status"] != "waiting"


def check_turn(loaded: Loaded, turn: Any) -> None:
    """409 ``stale_move`` unless the game waits for moves in ``turn``. (A game that waits for
    nobody, not started or over, is left to the rules: they say which.)"""
    adapter, state = loaded.adapter, loaded.state
    current = adapter.turn(state)
    if turn == current or not autoplay.awaiting(adapter.game, state):
        return
    where = adapter.position(state)
    named = _turn_words(adapter, turn)
    raise errors.conflict(
        "stale_move",
        f"this move was sent for {named}, but the game is at {_turn_words(adapter, current)}"
        f" (version {where['version']}): that turn is over, and nothing was recorded; read the"
        " game again and send a move for the current turn",
        **where,
    )


def _turn_words(adapter: GameAdapter, turn: Any) -> str:
    values = turn if isinstance(turn, tuple) else (turn,)
    return ", ".join(
        f"{name} {value}" for name, value in zip(adapter.turn_fields, values, strict=True)
    )


def seat_gone(token: SeatToken) -> errors.ServiceError:
    return errors.ServiceError(
        "invalid_token",
        f"this token's seat ({token.seat}) was left before the start: the token acts for no seat"
        " any more; join the game again for a new token",
        "unauthorized",
    )


def too_busy(loaded: Loaded | None = None) -> errors.ServiceError:
    where = {} if loaded is None else loaded.adapter.position(loaded.state)
    return errors.conflict(
        "too_many_conflicts",
        "the game changed under this request too many times in a row; send it again",
        retry_after=1,
        **where,
    )
