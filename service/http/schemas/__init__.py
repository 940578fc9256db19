"""Marshmallow schemas for the bodies every game shares. Unknown fields are refused (RAISE).

Responses are dumped through schemas too: a field that is not declared here is never sent, so a
view cannot leak what its schema does not name.

By what they hold: requests.py (request bodies), queries.py (query strings), games.py (games,
seats, rulings), events.py (events, export lines, event pages), checks.py (the audit report, the
signing keys, the probes). Import them from here: the contract (contract.py) names each by its
class name.
"""

from __future__ import annotations

from service.bodies import Receipt
from service.http.schemas.account_games import AccountGame, AccountGameList, AccountGamesQuery
from service.http.schemas.accounts import (
    AccountCreated,
    AccountSummary,
    Me,
    NewAccountRequest,
    NewTokenRequest,
    TokenGranted,
    TokenList,
)
from service.http.schemas.challenges import CHALLENGE_BODIES
from service.http.schemas.checks import AuditReport, Health, Jwk, Jwks, Liveness, Readiness
from service.http.schemas.events import EventPage, EventRecord, ExportLine
from service.http.schemas.games import (
    GameList,
    GameSummary,
    InvitationStatus,
    NewInvitation,
    RematchGranted,
    Ruling,
    Rulings,
    SeatGranted,
    SeatSummary,
)
from service.http.schemas.queries import (
    EVENTS_PAGE,
    LONG_POLL_MAX_SECONDS,
    MAX_VERSION,
    MIN_VERSION_HELP,
    EventsQuery,
    GameQuery,
    ListGamesQuery,
    ReadQuery,
    StateQuery,
    StreamQuery,
    min_version_field,
)
from service.http.schemas.requests import (
    AnonymousJoinRequest,
    AuditRequest,
    BotRequest,
    CreateGameRequest,
    JoinRequest,
)

# The bodies of the accounts' routes (issue 35), for the contract.
ACCOUNT_BODIES = (
    NewAccountRequest,
    AccountCreated,
    AccountSummary,
    Me,
    NewTokenRequest,
    TokenGranted,
    TokenList,
)
# The bodies of an account's history (issue 35), for the contract.
HISTORY_BODIES = (AccountGameList,)

__all__ = [
    "ACCOUNT_BODIES",
    "CHALLENGE_BODIES",
    "AccountGame",
    "AccountGameList",
    "AccountGamesQuery",
    "HISTORY_BODIES",
    "AnonymousJoinRequest",
    "AuditReport",
    "AuditRequest",
    "BotRequest",
    "CreateGameRequest",
    "EVENTS_PAGE",
    "EventPage",
    "EventRecord",
    "EventsQuery",
    "ExportLine",
    "GameList",
    "GameQuery",
    "GameSummary",
    "Health",
    "JoinRequest",
    "Jwk",
    "InvitationStatus",
    "Jwks",
    "LONG_POLL_MAX_SECONDS",
    "ListGamesQuery",
    "Liveness",
    "MAX_VERSION",
    "MIN_VERSION_HELP",
    "NewInvitation",
    "ReadQuery",
    "Readiness",
    "Receipt",
    "RematchGranted",
    "Ruling",
    "Rulings",
    "SeatGranted",
    "SeatSummary",
    "StateQuery",
    "StreamQuery",
    "min_version_field",
]
