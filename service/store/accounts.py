"""Accounts and their personal access tokens (issue 35, migration 0018), and which account took
which seat (``account_seats``).

- An account's name is unique under UTS #39: each of its skeletons is a row of
  ``account_names`` whose primary key decides, on any number of hosts, who had the name first.
- A token is stored as its SHA-256 only. Every request that presents one reads its row (no
  cache): a revoked token is refused by every host from the commit of its revocation on.
- ``account_seats`` rows are derived from the ``seat_taken`` events an append writes (a person's
  ``account``, a bot's ``bot:<kind>``) and inserted in the same statement (:func:`seat_rows`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

from psycopg import errors

from domain.decider import GAME_CANCELLED, GAME_ENDED, SEAT_TAKEN, Event
from service.store.connections import Connections
from service.store.failures import StoreError

# The CTE an append's statement carries for its seats' accounts (service/store/event_sql.py),
# each row with its game's creation time: the key of the account's history (migration 0019).
SEATS_INSERT = (
    "INSERT INTO account_seats (game_id, seat, taken_at, account_id, game_created_at)"
    " SELECT v.game_id, v.seat, v.taken_at, v.account_id, g.created_at"
    " FROM (VALUES {values}) AS v (game_id, seat, taken_at, account_id)"
    " JOIN games g ON g.id = v.game_id"
)
SEAT_VALUES = "(%s::uuid, %s::int, %s::int, %s::text)"
LAST_USED_EVERY = timedelta(minutes=1)  # ``last_used_at`` is written at most this often


def bot_account(kind: str) -> str:
    """A built-in bot's account id (migration 0018 writes their rows)."""
    return f"bot:{kind}"


def seat_rows(game_id: UUID, first_version: int, events: Sequence[Event]) -> list[tuple[Any, ...]]:
    """The ``account_seats`` rows of ``events`` appended from ``first_version`` on."""
    rows = []
    for version, event in enumerate(events, start=first_version):
        if event.type != SEAT_TAKEN:
            continue
        data = event.data
        account = data.get("account") or (bot_account(data["bot"]) if "bot" in data else None)
        if account is not None:
            rows.append((game_id, data["seat"], version, account))
    return rows


def seats_cte(rows: int) -> str:
    """The CTE of an append's statement that inserts ``rows`` account seats."""
    return f"account_seat AS ({_seats_insert(rows)})"


def _seats_insert(rows: int) -> str:
    return SEATS_INSERT.format(values=", ".join([SEAT_VALUES] * rows))


def insert_seats(cur: Any, rows: Sequence[tuple[Any, ...]]) -> None:
    """``rows`` (of :func:`seat_rows`) in the transaction that creates their game."""
    if rows:
        cur.execute(_seats_insert(len(rows)), [value for row in rows for value in row])


class NameTaken(StoreError):
    """Another account's name looks the same (a shared UTS #39 skeleton)."""

    def __init__(self, account_id: str) -> None:
        super().__init__(f"an account ({account_id}) has a name that looks the same")
        self.account_id = account_id


@dataclass(frozen=True, slots=True)
class Account:
    id: str
    name: str
    bot: str | None
    created_at: datetime


@dataclass(frozen=True, slots=True)
class Token:
    id: UUID
    account_id: str
    scopes: tuple[str, ...]
    label: str
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None


@dataclass(frozen=True, slots=True)
class Bearer:
    """An account token presented with a request: whose it is and what it may do."""

    account: Account
    token: Token


ACTIVE_GAMES = f"""
SELECT g.id FROM games g
WHERE g.id IN (SELECT s.game_id FROM account_seats s WHERE s.account_id = %s)
AND NOT EXISTS (
    SELECT 1 FROM events e WHERE e.game_id = g.id AND e.type IN ('{GAME_ENDED}', '{GAME_CANCELLED}')
)
ORDER BY g.created_at DESC, g.id LIMIT %s
"""
TOKEN_COLUMNS = "t.id, t.account_id, t.scopes, t.label, t.created_at, t.last_used_at, t.revoked_at"
ACCOUNT_COLUMNS = "a.id, a.name, a.bot, a.created_at"


def _token(row: Sequence[Any]) -> Token:
    return Token(row[0], row[1], tuple(row[2]), row[3], row[4], row[5], row[6])


def _account(row: Sequence[Any]) -> Account:
    return Account(row[0], row[1], row[2], row[3])


class Accounts:
    """Reads and writes of accounts and tokens. Thread-safe."""

    def __init__(self, store: Connections) -> None:
        self.store = store

    def create(
        self,
        account_id: str,
        name: str,
        skeletons: Iterable[str],
        token: tuple[UUID, bytes, Sequence[str], str],
        along: Callable[[Any, Account], None] | None = None,
    ) -> Account:
        """A new account and its first token ``(id, hash, scopes, label)``, in one
        transaction; :class:`NameTaken` if a skeleton of its name is another account's.
        ``along``: the caller's writes in that transaction (the keyed request's answer)."""
        try:
            with self.store.connection() as conn, conn.transaction(), conn.cursor() as cur:
                cur.execute(
                    "INSERT INTO accounts (id, name) VALUES (%s, %s) RETURNING created_at",
                    (account_id, name),
                )
                row = cur.fetchone()
                assert row is not None
                created_at = row[0]
                cur.executemany(
                    "INSERT INTO account_names (skeleton, account_id) VALUES (%s, %s)",
                    [(look, account_id) for look in skeletons],
                )
                self._insert_token(cur, account_id, token)
                account = Account(account_id, name, None, created_at)
                if along is not None:
                    along(cur, account)
        except errors.UniqueViolation as exc:
            if exc.diag.constraint_name == "account_names_pkey":
                raise NameTaken(self._holder(skeletons)) from exc
            raise
        return account

    def _holder(self, skeletons: Iterable[str]) -> str:
        with self.store.connection() as conn:
            row = conn.execute(
                "SELECT account_id FROM account_names WHERE skeleton = ANY(%s)", (list(skeletons),)
            ).fetchone()
        return "" if row is None else row[0]

    @staticmethod
    def _insert_token(cur: Any, account_id: str, token: tuple[UUID, bytes, Sequence[str], str]):
        token_id, digest, scopes, label = token
        cur.execute(
            "INSERT INTO account_tokens (id, account_id, token_hash, scopes, label)"
            " VALUES (%s, %s, %s, %s, %s)",
            (token_id, account_id, digest, list(scopes), label),
        )

    def add_token(
        self,
        account_id: str,
        token: tuple[UUID, bytes, Sequence[str], str],
        along: Callable[[Any, Token], None] | None = None,
    ) -> Token:
        """Another token of the account; ``along``: the caller's writes in its transaction."""
        with self.store.connection() as conn, conn.transaction(), conn.cursor() as cur:
            self._insert_token(cur, account_id, token)
            cur.execute(
                f"SELECT {TOKEN_COLUMNS} FROM account_tokens t WHERE t.id = %s", (token[0],)
            )
            row = cur.fetchone()
            assert row is not None
            minted = _token(row)
            if along is not None:
                along(cur, minted)
        return minted

    def bearer(self, digest: bytes) -> Bearer | None:
        """The account and token whose hash is ``digest``, unless revoked (None then, and for
        an unknown one). Marks the token used (at most once a minute)."""
        with self.store.connection() as conn:
            row = conn.execute(
                f"SELECT {ACCOUNT_COLUMNS}, {TOKEN_COLUMNS} FROM account_tokens t"
                " JOIN accounts a ON a.id = t.account_id"
                " WHERE t.token_hash = %s AND t.revoked_at IS NULL",
                (digest,),
            ).fetchone()
            if row is None:
                return None
            bearer = Bearer(_account(row[:4]), _token(row[4:]))
            if bearer.token.last_used_at is None or self._stale(bearer.token.last_used_at):
                conn.execute(
                    "UPDATE account_tokens SET last_used_at = now() WHERE id = %s",
                    (bearer.token.id,),
                )
        return bearer

    @staticmethod
    def _stale(last_used: datetime) -> bool:
        return datetime.now(UTC) - last_used > LAST_USED_EVERY

    def get(self, account_id: str) -> Account | None:
        with self.store.connection() as conn:
            row = conn.execute(
                f"SELECT {ACCOUNT_COLUMNS} FROM accounts a WHERE a.id = %s", (account_id,)
            ).fetchone()
        return None if row is None else _account(row)

    def tokens(self, account_id: str) -> list[Token]:
        """The account's tokens, revoked ones included, oldest first."""
        with self.store.connection() as conn:
            rows = conn.execute(
                f"SELECT {TOKEN_COLUMNS} FROM account_tokens t WHERE t.account_id = %s"
                " ORDER BY t.created_at, t.id",
                (account_id,),
            ).fetchall()
        return [_token(row) for row in rows]

    def revoke(self, account_id: str, token_id: UUID) -> Token | None:
        """Revoke one of the account's tokens (revoking a revoked one changes nothing); None if
        the account has no such token."""
        with self.store.connection() as conn:
            conn.execute(
                "UPDATE account_tokens SET revoked_at = now()"
                " WHERE id = %s AND account_id = %s AND revoked_at IS NULL",
                (token_id, account_id),
            )
            row = conn.execute(
                f"SELECT {TOKEN_COLUMNS} FROM account_tokens t"
                " WHERE t.id = %s AND t.account_id = %s",
                (token_id, account_id),
            ).fetchone()
        return None if row is None else _token(row)

    def active_games(self, account_id: str, limit: int) -> list[UUID]:
        """The account's games not over yet (nor cancelled), newest first, at most ``limit``
        (its seat there may have been left since: the game's state says)."""
        with self.store.connection() as conn:
            rows = conn.execute(ACTIVE_GAMES, (account_id, limit)).fetchall()
        return [row[0] for row in rows]

    def seats(self, game_id: UUID) -> dict[int, str]:
        """Each seat's account in ``game_id``, as last taken (a seat left may show its last
        holder: the game's state says who holds it now)."""
        with self.store.connection() as conn:
            rows = conn.execute(
                "SELECT DISTINCT ON (seat) seat, account_id FROM account_seats"
                " WHERE game_id = %s ORDER BY seat, taken_at DESC",
                (game_id,),
            ).fetchall()
        return {int(seat): account for seat, account in rows}
