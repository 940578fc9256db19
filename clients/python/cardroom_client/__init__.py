"""cardroom-client: a typed client for cardroom services (Sushi Go!, Sequence)."""

from .account import Account
from .account_models import (
    AccountGame,
    AccountInfo,
    Challenge,
    Challenges,
    Item,
    NewToken,
    TokenInfo,
)
from .aio import AsyncClient, AsyncGame, AsyncSeat
from .audit import audit_export
from .bot import Bot, FirstMoveBot
from .client import Client, Game, Seat
from .errors import (
    CardroomError,
    ProtocolError,
    RateLimited,
    Refused,
    RulesNotInstalled,
    Unavailable,
)
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
from .retry import RETRY_BUDGET
from .webhooks import WebhookError, WebhookKeys

__all__ = [
    "Account",
    "AccountGame",
    "AccountInfo",
    "AsyncClient",
    "AsyncGame",
    "AsyncSeat",
    "Bot",
    "BotSeat",
    "CardroomError",
    "Challenge",
    "Challenges",
    "Cell",
    "Client",
    "Event",
    "FirstMoveBot",
    "Game",
    "Item",
    "Move",
    "NewToken",
    "ProtocolError",
    "RETRY_BUDGET",
    "RateLimited",
    "ReceiptError",
    "Refused",
    "RulesNotInstalled",
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
    "TokenInfo",
    "Unavailable",
    "View",
    "WebhookError",
    "WebhookKeys",
    "audit_export",
    "parse_view",
]
