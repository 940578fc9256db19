"""Challenges (issue 35, migration 0020): a game one account offers another, and its answer.

A challenge's ``status`` leaves ``offered`` once, by an ``UPDATE ... WHERE status = 'offered'
AND expires_at > now()``: PostgreSQL's row lock makes a second answer wait for the first and
then find the row answered, so two accepts, or an accept and a cancel, on any hosts, have one
outcome. The accept's update runs in the transaction that creates the game
(``EventStore.create_game``'s ``along``): the game exists if and only if the challenge says so.

Expiry is lazy: a challenge past ``expires_at`` reads as ``expired`` at once; the row is marked
(and its ``challenge_answered`` items written) when the expiry is first observed: a read or an
answer of it, or either party's listing of its challenges.

Every change writes the accounts' stream items (service/store/account_feed.py) in its own
transaction; an item's ``data`` is :meth:`Challenge.data`, the challenge as
``GET /challenges/{id}`` shows it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from psycopg.types.json import Jsonb

from service.store import account_feed
from service.store.account_feed import Item
from service.store.connections import Connections
from service.store.failures import StoreError

OFFERED = "offered"
ACCEPTED = "accepted"
DECLINED = "declined"
CANCELLED = "cancelled"
EXPIRED = "expired"
STATUSES = (OFFERED, ACCEPTED, DECLINED, CANCELLED, EXPIRED)

COLUMNS = (
    "c.id, c.from_account, fa.name, c.to_account, ta.name, c.game, c.request,"
    " CASE WHEN c.status = 'offered' AND c.expires_at <= now() THEN 'expired'"
    " ELSE c.status END, c.created_at, c.expires_at, c.answered_at, c.game_id"
)
FROM = (
    "challenges c JOIN accounts fa ON fa.id = c.from_account"
    " JOIN accounts ta ON ta.id = c.to_account"
)
# Marks lapsed challenges expired (those named, or an account's), returning their ids.
EXPIRE = (
    "UPDATE challenges SET status = 'expired', answered_at = expires_at"
    " WHERE status = 'offered' AND expires_at <= now() AND {which} RETURNING id"
)
ANSWER = (
    "UPDATE challenges SET status = %s, answered_at = now(){game}"
    " WHERE id = %s AND status = 'offered' AND expires_at > now() RETURNING id"
)
OPEN_LIMIT = 200  # an account's open challenges listed at most (newest first)


@dataclass(frozen=True, slots=True)
class Challenge:
    id: UUID
    from_account: str
    from_name: str
    to_account: str
    to_name: str
    game: str
    request: Mapping[str, Any]  # the rules as POST /games takes them (game, players, rules ...)
    status: str
    created_at: datetime
    expires_at: datetime
    answered_at: datetime | None
    game_id: UUID | None

    def data(self) -> dict[str, Any]:
        """The challenge as JSON (its stream items' ``data``; the API's ``Challenge``)."""
        body: dict[str, Any] = {
            "challenge_id": str(self.id),
            "status": self.status,
            "from": {"account_id": self.from_account, "name": self.from_name},
            "to": {"account_id": self.to_account, "name": self.to_name},
            **self.request,
            "created_at": self.created_at.isoformat(),
            "expires_at": self.expires_at.isoformat(),
            "answered_at": None if self.answered_at is None else self.answered_at.isoformat(),
            "game_id": None if self.game_id is None else str(self.game_id),
        }
        return body


class ChallengeClosed(StoreError):
    """The challenge is no longer offered (answered, or expired) when an answer came."""

    def __init__(self, challenge_id: UUID) -> None:
        super().__init__(f"challenge {challenge_id} is no longer offered")
        self.challenge_id = challenge_id


def _challenge(row: Sequence[Any]) -> Challenge:
    cid, by, by_name, to, to_name, game, request, *rest = row
    status, created_at, expires_at, answered_at, game_id = rest
    return Challenge(
        cid,
        by,
        by_name,
        to,
        to_name,
        game,
        dict(request),
        status,
        created_at,
        expires_at,
        answered_at,
        game_id,
    )


def _select(cur: Any, challenge_id: UUID) -> Challenge:
    cur.execute(f"SELECT {COLUMNS} FROM {FROM} WHERE c.id = %s", (challenge_id,))
    row = cur.fetchone()
    assert row is not None
    return _challenge(row)


def _answered(cur: Any, challenge: Challenge) -> None:
    """The ``challenge_answered`` items of an answer: for the challenger always, and for the
    challenged too when it did not answer itself (a cancel, an expiry)."""
    accounts = [challenge.from_account]
    if challenge.status in (CANCELLED, EXPIRED):
        accounts.append(challenge.to_account)
    account_feed.insert(
        cur,
        [
            Item(account, account_feed.CHALLENGE_ANSWERED, challenge.game_id, challenge.data())
            for account in accounts
        ],
    )


class Challenges:
    """Reads and writes of challenges. Thread-safe."""

    def __init__(self, store: Connections) -> None:
        self.store = store

    def offer(
        self,
        challenge_id: UUID,
        from_account: str,
        to_account: str,
        request: Mapping[str, Any],
        seconds: int,
        along: Callable[[Any, Challenge], None] | None = None,
    ) -> Challenge:
        """A new challenge, open for ``seconds``, and the challenged account's ``challenge``
        item, in one transaction (with the caller's ``along``: the keyed request's answer)."""
        with self.store.connection() as conn, conn.transaction(), conn.cursor() as cur:
            cur.execute(
                "INSERT INTO challenges (id, from_account, to_account, game, request, expires_at)"
                " VALUES (%s, %s, %s, %s, %s, now() + %s * interval '1 second')",
                (challenge_id, from_account, to_account, request["game"], Jsonb(request), seconds),
            )
            challenge = _select(cur, challenge_id)
            item = Item(to_account, account_feed.CHALLENGE, None, challenge.data())
            account_feed.insert(cur, [item])
            if along is not None:
                along(cur, challenge)
        return challenge

    def get(self, challenge_id: UUID) -> Challenge | None:
        """The challenge (marked expired first if it lapsed unobserved), None if none."""
        with self.store.connection() as conn, conn.transaction(), conn.cursor() as cur:
            self._expire(cur, "id = %s", (challenge_id,))
            cur.execute(f"SELECT {COLUMNS} FROM {FROM} WHERE c.id = %s", (challenge_id,))
            row = cur.fetchone()
        return None if row is None else _challenge(row)

    def open_for(self, account_id: str) -> list[Challenge]:
        """The account's open challenges, made and received, newest first (lapsed ones are
        marked expired first)."""
        with self.store.connection() as conn, conn.transaction(), conn.cursor() as cur:
            self._expire(cur, "(from_account = %s OR to_account = %s)", (account_id, account_id))
            cur.execute(
                f"SELECT {COLUMNS} FROM {FROM} WHERE c.status = 'offered'"
                " AND (c.from_account = %s OR c.to_account = %s)"
                " ORDER BY c.created_at DESC, c.id LIMIT %s",
                (account_id, account_id, OPEN_LIMIT),
            )
            rows = cur.fetchall()
        return [_challenge(row) for row in rows]

    def answer(
        self,
        challenge_id: UUID,
        status: str,
        along: Callable[[Any, Challenge], None] | None = None,
    ) -> Challenge:
        """Decline or cancel (``status``) the challenge if it is still offered, with its
        ``challenge_answered`` items (and the caller's ``along``) in one transaction;
        :class:`ChallengeClosed` if it is not."""
        assert status in (DECLINED, CANCELLED)
        with self.store.connection() as conn, conn.transaction(), conn.cursor() as cur:
            cur.execute(ANSWER.format(game=""), (status, challenge_id))
            if cur.fetchone() is None:
                raise ChallengeClosed(challenge_id)
            challenge = _select(cur, challenge_id)
            _answered(cur, challenge)
            if along is not None:
                along(cur, challenge)
        return challenge

    @staticmethod
    def accepted(cur: Any, challenge_id: UUID, game_id: UUID) -> Challenge:
        """In the transaction that creates ``game_id``: the challenge is accepted with it, and
        the challenger told; :class:`ChallengeClosed` (undoing the game) if it is no longer
        offered."""
        cur.execute(ANSWER.format(game=", game_id = %s"), (ACCEPTED, game_id, challenge_id))
        if cur.fetchone() is None:
            raise ChallengeClosed(challenge_id)
        challenge = _select(cur, challenge_id)
        _answered(cur, challenge)
        return challenge

    @staticmethod
    def _expire(cur: Any, which: str, params: Sequence[Any]) -> None:
        """Mark the lapsed challenges ``which`` selects expired, with their items."""
        cur.execute(EXPIRE.format(which=which), params)
        for (expired_id,) in cur.fetchall():
            _answered(cur, _select(cur, expired_id))
