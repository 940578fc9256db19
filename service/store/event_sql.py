"""The SQL of the event store: the statements of an append (built once per shape by
``append_query``), the rows of the hash chain (``event_rows``), the lobby's and the waiting games'
queries, the readiness probe's statements and the database's identity. Kept apart from the code
that runs them (events.py, event_reads.py), which reads more easily without them."""

from __future__ import annotations

import os
import socket
from collections.abc import Sequence
from functools import lru_cache
from typing import Any
from uuid import UUID

from psycopg.types.json import Jsonb

from domain.chain import event_hash
from domain.decider import (
    GAME_CANCELLED,
    GAME_ENDED,
    GAME_STARTED,
    SEAT_LEFT,
    Event,
)
from service.store import account_feed, accounts, idempotency_records, rematches, signatures

# Constraint names from migrations/versions/0001_initial.py that mean "someone appended first".
# (0005: a turn's deadline row is keyed by the version appended with it, so it races the same.)
CONFLICT_CONSTRAINTS = {
    "events_pkey",
    "seats_pkey",
    "events_version_contiguous",
    "turn_deadlines_pkey",
}


# The readiness probe commits a write that needs new disk space every time (migration 0011):
# TRUNCATE gives the table a new, empty file, and the row then needs a new page.
PROBE_EMPTY = "TRUNCATE readiness_probe"
PROBE_WRITE = "INSERT INTO readiness_probe (process) VALUES (%s)"
PROCESS = f"{socket.gethostname()}:{os.getpid()}"
# What an append locks (the mode INSERT takes: appends never wait for each other on it, only
# for a lock someone took on a whole table).
PROBE_LOCKS = "LOCK TABLE games, events, seats, turn_deadlines IN ROW EXCLUSIVE MODE"
# Which database this is: the cluster (pg_control), its history (timeline), the server's
# lifetime (a restart onto a copy of the files keeps the first two) and the database itself.
IDENTITY = (
    "SELECT (SELECT system_identifier FROM pg_control_system()),"
    " (SELECT timeline_id FROM pg_control_checkpoint()),"
    " pg_postmaster_start_time(),"
    " (SELECT oid FROM pg_database WHERE datname = current_database())"
)
READ_ONLY = "SELECT pg_is_in_recovery(), current_setting('default_transaction_read_only')"


INSERT_EVENT = (
    "INSERT INTO events (game_id, version, type, schema_version, data, hash)"
    " VALUES (%s, %s, %s, %s, %s, %s)"
)

APPEND = "INSERT INTO events (game_id, version, type, schema_version, data, hash) VALUES {values}"
# The last events of a rated game carry the finish time its ratings were folded at
# (service/store/ratings.py): the export shows it, the rebuild orders by it.
APPEND_RECORDED = (
    "INSERT INTO events (game_id, version, type, schema_version, data, hash, recorded_at)"
    " VALUES {values}"
)
SEAT_INSERT = (
    "INSERT INTO seats (game_id, seat, token_hash, taken_at, client) VALUES (%s, %s, %s, %s, %s)"
)
SEAT_ROW = f"seat AS ({SEAT_INSERT})"
# The database's clock, not the process's: every server process agrees on every deadline.
DEADLINE_VALUES = "VALUES (%s, %s, now() + %s * interval '1 second', %s)"
DEADLINE_INSERT = "INSERT INTO turn_deadlines (game_id, version, deadline, kind) " + DEADLINE_VALUES
DEADLINE_ROW = f"deadline AS ({DEADLINE_INSERT})"


# Status is derived, never stored: the lifecycle events are the only source of truth.
LIST_GAMES = f"""
SELECT g.id, g.game, g.created_at, s.status,
       (SELECT max(e.version) FROM events e WHERE e.game_id = g.id) AS version,
       EXISTS (SELECT 1 FROM private_games p WHERE p.game_id = g.id) AS private
FROM games g
CROSS JOIN LATERAL (
    SELECT CASE
        WHEN EXISTS (
            SELECT 1 FROM events e WHERE e.game_id = g.id AND e.type = '{GAME_CANCELLED}')
            THEN 'cancelled'
        WHEN EXISTS (SELECT 1 FROM events e WHERE e.game_id = g.id AND e.type = '{GAME_ENDED}')
            THEN 'over'
        WHEN EXISTS (SELECT 1 FROM events e WHERE e.game_id = g.id AND e.type = '{GAME_STARTED}')
            THEN 'playing'
        ELSE 'waiting'
    END AS status
) s
WHERE {{where}}
ORDER BY {{order}}
LIMIT %(limit)s
"""


# A game waits until it starts (or ends, which a started game does): the lifecycle index.
WAITING_GAMES = f"""
SELECT count(DISTINCT s.game_id) FROM seats s
WHERE s.client = %s AND s.game_id <> %s AND NOT EXISTS (
    SELECT 1 FROM events e
    WHERE e.game_id = s.game_id
    AND e.type IN ('{GAME_STARTED}', '{GAME_ENDED}', '{GAME_CANCELLED}')
) AND NOT EXISTS (  -- a seat left since (issue 20: seat_left) is not held
    SELECT 1 FROM events l
    WHERE l.game_id = s.game_id AND l.type = '{SEAT_LEFT}'
    AND (l.data->>'seat')::int = s.seat AND l.version > s.taken_at
)
"""


@lru_cache(maxsize=128)
def append_query(
    rows: int,
    seat: bool,
    deadline: bool,
    record: bool,
    rematch_seat: bool = False,
    signature: bool = False,
    account_seats: int = 0,
    feed: int = 0,
    recorded: bool = False,
) -> str:
    """The statement of an ``append`` of that shape: built once, not composed per append.
    Its parameters: the seat row's, the deadline row's, the record's, the rematch seat's,
    the signature's, the account seats', the feed items' (those given, in that order), then
    each event row's (``recorded``: each with its ``recorded_at`` last)."""
    if recorded:
        append = APPEND_RECORDED.format(values=", ".join(["(%s, %s, %s, %s, %s, %s, %s)"] * rows))
    else:
        append = APPEND.format(values=", ".join(["(%s, %s, %s, %s, %s, %s)"] * rows))
    with_rows = [
        row
        for row, wanted in (
            (SEAT_ROW, seat),
            (DEADLINE_ROW, deadline),
            (idempotency_records.ROW, record),
            (rematches.SEAT_ROW, rematch_seat),
            (signatures.ROW, signature),
            (accounts.seats_cte(account_seats), account_seats > 0),
            (account_feed.cte(feed), feed > 0),
        )
        if wanted
    ]
    return f"WITH {', '.join(with_rows)} {append}" if with_rows else append


def event_rows(
    game_id: UUID, first_version: int, previous_hash: str, events: Sequence[Event]
) -> list[tuple[Any, ...]]:
    """The rows to insert, each with its link of the hash chain (domain/chain.py)."""
    rows = []
    for version, event in enumerate(events, start=first_version):
        data = dict(event.data)
        previous_hash = event_hash(
            previous_hash, str(game_id), version, event.type, event.schema_version, data
        )
        rows.append(
            (game_id, version, event.type, event.schema_version, Jsonb(data), previous_hash)
        )
    return rows
