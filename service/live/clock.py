"""The turn clock's sweeper: makes the moves of timed turns whose deadline has passed.

Every server process runs one (a daemon thread started by ``create_app``, every
``CARDROOM_CLOCK_INTERVAL`` seconds, default 1; 0 turns it off). Deadlines live in PostgreSQL
(``turn_deadlines``, written with the events that start each timed turn, due by the database's
clock), so any process, including one started after a crash or a restart, finds the turns that
expired meanwhile. A sweep:

1. lists expired turns: past their deadline, no later turn, the game not over;
2. for each, tries the game's advisory lock (``pg_try_advisory_xact_lock``): another process
   busy with that game makes this one skip it, which saves work;
3. makes the missing moves through the normal optimistic-concurrency path
   (``GameService.time_out``): a seat's own bot for a bot seat, else the ``greedy`` bot marked
   ``by: clock``. Correctness does not rest on the lock: if two sweepers (or a sweeper and a
   player) race, the append that comes second conflicts, is decided again on the fresh state,
   and finds that turn over.

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
from service.store.events import StoreUnavailable

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
        """One sweep: the number of timed-out moves made. ``now``: the time to judge deadlines
        by (default: the database's clock); ``games``: only these games (tests)."""
        metrics.CLOCK_SWEEPS.inc()
        try:
            expired = self.games.deadlines.expired(
                now, None if self._full else self.recent, games, BATCH
            )
            made = 0
            for game_id, version in expired:
                made += self._time_out(game_id, version)
        except Exception:
            self._full = True  # something may have been missed: look at everything next time
            raise
        self._full = False
        return made

    def _time_out(self, game_id: UUID, version: int) -> int:
        with self.games.deadlines.locked(game_id) as got:
            if not got:
                return 0  # another process is on it
            try:
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
            try:
                self.sweep()
            except Exception:  # the database may be down: keep trying, say it once per sweep
                log.exception("turn clock: sweep failed")
