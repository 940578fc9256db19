"""The sweeper of deadlines: makes the moves of timed turns whose deadline has passed, has the
greedy bot take over the seats of turns that stalled, and cancels waiting games whose seats did
not fill in time (the row's ``kind``: ``turn``, ``stall``, ``fill``; service/store/deadlines.py).

Every server process runs one (a daemon thread started by ``create_app``, every
``CARDROOM_CLOCK_INTERVAL`` seconds, default 1; 0 turns it off). Deadlines live in PostgreSQL
(``turn_deadlines``, written with the events that start each timed turn, due by the database's
clock), so any process, including one started after a crash or a restart, finds the turns that
expired meanwhile. A sweep:

1. lists expired turns: past their deadline, no later turn, the game not over;
2. for each, tries the game's advisory lock (``pg_try_advisory_xact_lock``): another process
   busy with that game makes this one skip it, which saves work;
3. through the normal optimistic-concurrency path, for a ``turn`` row makes the missing moves
   (``GameService.time_out``): a seat's own bot for a bot seat, else the ``greedy`` bot marked
   ``by: clock``; for a ``stall`` row, the greedy bot takes over every person's seat the turn
   waits for (``seat_taken_over``, reason ``stalled``; ``GameService.take_over_stalled``) and
   plays it from then on, its moves ``by: stalled`` — unlike the clock, which moves once and
   gives the seat back, a stalled seat's player is gone (they may watch, not move); for a
   ``fill`` row, the waiting game is cancelled (``game_cancelled``;
   ``GameService.cancel_unfilled``). Correctness does not rest on the lock: if two sweepers (or
   a sweeper and a player) race, the append that comes second conflicts, is decided again on
   the fresh state, and finds that turn over.

Rows are never deleted, so after its first (full) sweep a sweeper only scans deadlines of the
last ``recent`` (default 1 hour); it scans fully again after any failed sweep.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Collection
from datetime import datetime, timedelta
from uuid import UUID

from service import metrics
from service.errors import ServiceError
from service.play import GameService
from service.store.deadlines import Expired
from service.store.events import StoreUnavailable
from service.store.failures import log_failure

log = logging.getLogger(__name__)

DEFAULT_INTERVAL = 1.0
RECENT = timedelta(hours=1)
BATCH = 100  # expired turns per sweep; the rest wait for the next sweep


class Sweeper:
    def __init__(
        self, games: GameService, interval: float = DEFAULT_INTERVAL, recent: timedelta = RECENT
    ) -> None:
        self.games = games
        self.interval = interval
        self.recent = recent
        self._full = True  # the first sweep looks at every row: what expired while we were down
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def sweep(self, now: datetime | None = None, games: Collection[UUID] | None = None) -> int:
        """One sweep: the number of timed-out moves made, seats taken over and games cancelled.
        ``now``: the time to judge deadlines by (default: the database's clock); ``games``: only
        these games (tests)."""
        metrics.CLOCK_SWEEPS.inc()
        try:
            expired = self.games.deadlines.expired(
                now, None if self._full else self.recent, games, BATCH
            )
            made = 0
            for row in expired:
                made += self._handle(row)
        except Exception:
            self._full = True  # something may have been missed: look at everything next time
            raise
        self._full = False
        return made

    def _handle(self, row: Expired) -> int:
        """The moves made (or seats taken over, or games cancelled) for one expired row."""
        game_id, version = row.game_id, row.version
        with self.games.deadlines.locked(game_id) as got:
            if not got:
                return 0  # another process is on it
            try:
                if row.kind == "stall":
                    return self.games.take_over_stalled(game_id, version, row.now)
                if row.kind == "fill":
                    return self.games.cancel_unfilled(game_id, version, row.now)
                return self.games.time_out(game_id, version)
            except ServiceError as exc:  # too_many_conflicts: players are busy there; next sweep
                log.info("turn clock: game %s skipped: %s", game_id, exc.message)
            except StoreUnavailable:
                raise
            except Exception:  # one game's failure must not stop the clock of the others
                log.exception("turn clock: game %s failed", game_id)
            return 0

    # --- the thread -------------------------------------------------------------------------

    def start(self) -> None:
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self._loop, name="cardroom-clock", daemon=True)
        self._thread.start()

    def stop(self, timeout: float | None = 5) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self.sweep_logged()

    def sweep_logged(self) -> None:
        """One sweep; a failure is logged (the database away: one line) and the loop goes on."""
        try:
            self.sweep()
        except Exception as exc:  # the database may be down: keep trying, say it once per sweep
            log_failure(log, "turn clock: sweep failed", exc, fault=logging.ERROR)
