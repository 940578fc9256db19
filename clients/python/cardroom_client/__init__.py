"""cardroom-client: a typed client for cardroom services (Sushi Go!, Sequence)."""

from .bot import Bot, FirstMoveBot
from .client import Client, Game, Seat
from .models import (
    BotSeat,
    Cell,
    Event,
    Move,
    SequenceCard,
    SequenceDiscard,
    SequenceMove,
    SequencePass,
    SequencePlay,
    SequenceView,
    SushiGoCard,
    SushiGoPick,
    SushiGoView,
    View,
    parse_view,
)
from .receipts import ReceiptError
from .retry import CardroomError

__all__ = [
    "Bot",
    "BotSeat",
    "CardroomError",
    "Cell",
    "Client",
    "Event",
    "FirstMoveBot",
    "Game",
    "Move",
    "ReceiptError",
    "Seat",
    "SequenceCard",
    "SequenceDiscard",
    "SequenceMove",
    "SequencePass",
    "SequencePlay",
    "SequenceView",
    "SushiGoCard",
    "SushiGoPick",
    "SushiGoView",
    "View",
    "parse_view",
]
