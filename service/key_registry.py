"""Keys are data: which key ids the database has used (``key_ids``, migration 0012), and whether
this host holds them.

The secret halves live outside the database (service/keys.py: a file or ``CARDROOM_KEYS``, the
same on every host, backed up apart); the database records each key id with its public half and
fingerprint, never a secret. A host whose keys lack an id the database has used (it sealed seeds
or signed receipts with it) would answer 500 for those games and hand out receipts nobody can
check, so:

- ``prepare`` (``cardroom serve``, before the workers fork) refuses to start, with one line that
  names the missing ids and where it looked; it creates keys only for a brand-new database (no
  game, no key id), and records this host's key ids;
- ``readiness_problem`` (``GET /readyz``) says the same while the process runs, re-checked at
  most every ``CARDROOM_KEYS_CHECK_SECONDS``: the keys file replaced, or another host rotated to
  keys this one lacks;
- ``published`` is the JWK Set: every signing key the database recorded, rotated and retired ones
  included, so every receipt ever handed out still verifies.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

from domain import receipts
from service import keys
from service.settings import settings

log = logging.getLogger(__name__)

_LOCK = 0x6361726B657973  # "carkeys": one start at a time decides whether a database is new


class KeysMismatch(keys.KeysError):
    """This host's keys lack key ids the database has used, or hold other keys under them."""


@dataclass(frozen=True)
class Recorded:
    kid: str
    use: str  # "sig" or "enc"
    public_jwk: dict[str, Any] | None
    fingerprint: str | None  # None: recorded by migration 0012 from game_secrets
    retired: bool


def recorded(conn: psycopg.Connection[Any]) -> list[Recorded]:
    rows = conn.execute(
        "SELECT kid, use, public_jwk, fingerprint, retired_at IS NOT NULL FROM key_ids"
        " ORDER BY recorded_at, kid"
    ).fetchall()
    return [Recorded(*row) for row in rows]


def problems(ring: keys.Keyring, rows: list[Recorded]) -> list[str]:
    """What this ring lacks of the database's keys: ``"<kid> (<use> key)"`` for each id it does
    not hold, ``"<kid> (differs)"`` for one it holds with other material. A retired key need
    not be held: a signing key's public half is in its row, a seed key opens only games that
    are over (their seed is in their last event)."""
    held = ring.ids()
    found = []
    for row in rows:
        if row.retired:
            continue
        if row.kid not in held:
            found.append(f"{row.kid} ({'signing' if row.use == 'sig' else 'seed'} key)")
        elif row.fingerprint is not None and row.fingerprint != held[row.kid]:
            found.append(f"{row.kid} (differs)")
    return found


def mismatch(where: str, found: list[str]) -> KeysMismatch:
    return KeysMismatch(
        f"the keys at {where} lack key ids the database has used: {', '.join(found)};"
        " restore the keys from their backup (README: Keys) or point CARDROOM_KEYS_FILE at them"
    )


def record(conn: psycopg.Connection[Any], ring: keys.Keyring) -> None:
    """Record ``ring``'s key ids (those already recorded stay as they are)."""
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO key_ids (kid, use, public_jwk, fingerprint) VALUES (%s, %s, %s, %s)"
            " ON CONFLICT (kid) DO NOTHING",
            [
                (kid, use, None if jwk is None else Jsonb(jwk), print_)
                for kid, use, jwk, print_ in ring.records()
            ],
        )


def _is_new(conn: psycopg.Connection[Any], rows: list[Recorded]) -> bool:
    return not rows and conn.execute("SELECT 1 FROM games LIMIT 1").fetchone() is None


def prepare(url: str) -> bool:
    """Check this host's keys against the database at ``url`` and record them in it; False if
    its schema has no ``key_ids`` yet (migrate, then call again). Raises ``KeysMismatch`` (one
    line) if they lack an id it has used, ``KeysMissing`` if there are none and the database is
    not new. Serialised across hosts: two first starts on one new database cannot both create
    keys."""
    with psycopg.connect(url) as conn, conn.transaction():
        schema = conn.execute("SELECT to_regclass('key_ids') IS NOT NULL").fetchone()
        if not schema or not schema[0]:
            return False
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK,))
        rows = recorded(conn)
        try:
            ring = keys.load()
        except keys.KeysMissing:
            if not _is_new(conn, rows):
                used = ", ".join(row.kid for row in rows if not row.retired) or "none recorded"
                raise keys.KeysMissing(
                    f"no keys at {keys.source()}, and the database is not new (key ids used:"
                    f" {used}): restore the keys from their backup (README: Keys);"
                    " `cardroom keys init` is for a new database"
                ) from None
            keys.init()
            ring = keys.load()
            log.warning("created new keys at %s: the database is new", keys.source())
        found = problems(ring, rows)
        if found:
            raise mismatch(keys.source(), found)
        if {kid for kid, *_ in ring.records()} - {row.kid for row in rows}:
            # Not behind a synchronous standby: a host must start while one is missing (its
            # requests then answer 503 within their budget, issue 27). A row lost in a failover
            # is recorded again by the next start; the keys themselves are in the keys file.
            conn.execute("SET LOCAL synchronous_commit = local")
            record(conn, ring)
    return True


def check(url: str) -> str | None:
    """``cardroom keys check``: why the keys here do not match the database, or None."""
    ring = keys.read()
    with psycopg.connect(url) as conn:
        found = problems(ring, recorded(conn))
    return str(mismatch(keys.source(), found)) if found else None


_IN_PLAY = """
SELECT count(*) FROM game_secrets s WHERE s.key_id = %s AND NOT EXISTS (
    SELECT 1 FROM events e WHERE e.game_id = s.game_id AND e.type = ANY(%s))
"""


def retire(url: str, kid: str) -> None:
    """``cardroom keys retire KID`` (as the database's owner): hosts need no longer hold the
    key's secret. Not the active key of the keys here; a seed key only once every game sealed
    under it is over (its seed is then in its last event)."""
    from domain.decider import FINAL_EVENTS

    ring = keys.read()
    if kid in (ring.thumbprint(ring.active_signing), ring.active_seed):
        raise keys.KeysError(f"{kid} is the active key here: `cardroom keys rotate` first")
    with psycopg.connect(url) as conn, conn.transaction():
        row = conn.execute("SELECT use FROM key_ids WHERE kid = %s FOR UPDATE", (kid,)).fetchone()
        if row is None:
            raise keys.KeysError(f"the database has no key id {kid!r} (`cardroom keys check`)")
        if row[0] == "enc":
            (playing,) = conn.execute(_IN_PLAY, (kid, sorted(FINAL_EVENTS))).fetchone() or (0,)
            if playing:
                raise keys.KeysError(
                    f"{playing} game(s) in play have their seed sealed under {kid}: retire it"
                    " once they are over"
                )
        conn.execute(
            "UPDATE key_ids SET retired_at = now() WHERE kid = %s AND retired_at IS NULL", (kid,)
        )


# --- while serving -----------------------------------------------------------------------------


class _Cached:
    """One answer per process, computed again at most every ``CARDROOM_KEYS_CHECK_SECONDS``."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.at: float | None = None
        self.value: Any = None

    def due(self) -> bool:
        return self.at is None or time.monotonic() - self.at >= settings().keys_check_seconds

    def keep(self, value: Any) -> None:
        self.value, self.at = value, time.monotonic()


_readiness = _Cached()
_published = _Cached()


def readiness_problem(pool: ConnectionPool) -> str | None:
    """Why this process is not ready as far as keys go, or None: its keyring or its keys' source
    (a file replaced since the start) lacks key ids the database has used. A keyring that lacks
    ids its source now holds (another host rotated; the same file is here) takes them up."""
    with _readiness.lock:
        if _readiness.due():
            _readiness.keep(_check(pool))
        return str(_readiness.value) if _readiness.value else None


def _check(pool: ConnectionPool) -> str | None:
    with pool.connection() as conn:
        rows = recorded(conn)
    try:
        on_disk = keys.read()
    except keys.KeysError as exc:
        return str(exc)
    found = problems(on_disk, rows)
    if found:
        return str(mismatch(keys.source(), found))
    if problems(keys.load(), rows):
        keys.adopt(on_disk)  # the source holds them: this process may use them at once
    return None


def published(pool: ConnectionPool, ring: keys.Keyring) -> dict[str, Any]:
    """The JWK Set of every signing key whose receipts must verify: those the database recorded
    (rotated and retired ones included) and this ring's; the active key last. Cached for
    ``CARDROOM_KEYS_CHECK_SECONDS``."""
    with _published.lock:
        if _published.due():
            with pool.connection() as conn:
                _published.keep([row.public_jwk for row in recorded(conn) if row.use == "sig"])
        stored: list[dict[str, Any]] = _published.value
    by_kid = {jwk["kid"]: jwk for jwk in stored if jwk}
    active = receipts.public_jwk(ring.public[ring.active_signing])
    for key in ring.public.values():
        jwk = receipts.public_jwk(key)
        by_kid.setdefault(jwk["kid"], jwk)
    by_kid.pop(active["kid"], None)
    return {"keys": [*by_kid.values(), active]}
