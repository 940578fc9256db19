"""The clock's commands of the service layer (``Sweeps``): a timed turn's moves when its deadline
passes, the greedy bot taking over the seats of a stalled turn, a waiting game cancelled when its
seats did not fill in time. service/live/clock.py calls them for the deadline rows that are due."""

from __future__ import annotations

from datetime import datetime
from uuid import UUID

from domain.decider import BY_STALLED, CancelGame, DomainError, TakeOver
from service import autoplay, metrics
from service.play import feed, rating
from service.play.loaded import MAX_ATTEMPTS, too_busy
from service.play.reads import GameReads
from service.store.events import VersionConflict


class Sweeps(GameReads):
    """The commands the clock makes when a deadline row is due (service/live/clock.py)."""

    def time_out(self, game_id: UUID, version: int) -> int:
        """Make the moves the turn whose deadline row is at ``version`` still waits for (the
        clock's, or a bot's), then the bots' moves after them; the number of timed-out moves
        made. Nothing if that turn is over: a later row, or the game ended."""
        for _ in range(MAX_ATTEMPTS):
            loaded = self.load(game_id)
            game, state = loaded.adapter.game, loaded.state
            if game.is_over(state) or not autoplay.awaiting(game, state):
                return 0
            # Read after the state: a turn that ended before the load has a later row by now;
            # one that ends after it makes this append conflict.
            latest = self.deadlines.latest(game_id)
            if latest is None or latest.version != version:
                return 0
            seed = self.seed(game_id)
            expired = loaded.adapter.turn(state)
            outcome = autoplay.run(
                loaded.adapter, state, seed, expired=expired, stall_seconds=self.stall_seconds
            )
            try:
                self.store.append(
                    game_id,
                    loaded.version,
                    outcome.events,
                    deadline=outcome.deadline,
                    feed=feed.items(loaded.adapter, game_id, state, outcome.state, outcome.events),
                    rated=rating.finish(loaded.adapter, outcome.state, outcome.events),
                )
            except VersionConflict:
                metrics.APPEND_RETRIES.inc()
                continue  # a player (or another sweeper) moved meanwhile: look again
            self._remember(game_id, game.name, outcome.state)
            metrics.TIMED_OUT_MOVES.inc(outcome.timeouts)
            return outcome.timeouts
        raise too_busy()

    def take_over_stalled(self, game_id: UUID, version: int, now: datetime) -> int:
        """The greedy bot takes over every person's seat the turn whose ``stall`` row is at
        ``version`` still waits for, ``now`` (the game having waited at least
        ``stall_seconds`` since that turn opened: the rules compare the two), then plays them;
        the number of seats taken over. Nothing if that turn is over."""
        for _ in range(MAX_ATTEMPTS):
            loaded = self.load(game_id)
            game, state = loaded.adapter.game, loaded.state
            latest = self.deadlines.latest(game_id)
            if game.is_over(state) or latest is None or latest.version != version:
                return 0
            opened = self.store.load_records(game_id, version - 1, 1)[0].recorded_at
            idle = int((now - opened).total_seconds())
            people = [
                seat
                for seat in autoplay.awaiting(game, state)
                if seat not in autoplay.bots(game, state)
                and seat not in autoplay.taken_over(game, state)
            ]
            commands = [TakeOver(s, BY_STALLED, idle, self.stall_seconds) for s in people]
            if not commands:
                return 0
            try:
                outcome = autoplay.run(
                    loaded.adapter,
                    state,
                    self.seed(game_id),
                    commands,
                    stall_seconds=self.stall_seconds,
                )
            except DomainError:  # not stalled after all (the limit grew since the row)
                return 0
            try:
                self.store.append(
                    game_id,
                    loaded.version,
                    outcome.events,
                    deadline=outcome.deadline,
                    feed=feed.items(loaded.adapter, game_id, state, outcome.state, outcome.events),
                    rated=rating.finish(loaded.adapter, outcome.state, outcome.events),
                )
            except VersionConflict:
                metrics.APPEND_RETRIES.inc()
                continue  # a player moved meanwhile: look again
            self._remember(game_id, game.name, outcome.state)
            return len(commands)
        raise too_busy()

    def cancel_unfilled(self, game_id: UUID, version: int, now: datetime) -> int:
        """Cancel the waiting game whose ``fill`` row is at ``version``, ``now`` (it having
        waited ``fill_seconds`` since its creation: the rules compare the two); 1 if cancelled,
        0 if it started meanwhile."""
        for _ in range(MAX_ATTEMPTS):
            loaded = self.load(game_id)
            game, state = loaded.adapter.game, loaded.state
            latest = self.deadlines.latest(game_id)
            if game.is_over(state) or latest is None or latest.version != version:
                return 0
            created = self.store.load_records(game_id, 0, 1)[0].recorded_at
            waited = int((now - created).total_seconds())
            command = CancelGame(waited, self.fill_seconds, self.seed(game_id))
            try:
                events, after = game.execute(state, command)
            except DomainError:  # started meanwhile, or not due after all
                return 0
            try:
                self.store.append(
                    game_id,
                    loaded.version,
                    events,
                    feed=feed.items(loaded.adapter, game_id, state, after, events),
                )
            except VersionConflict:
                metrics.APPEND_RETRIES.inc()
                continue  # a join meanwhile: look again
            self._remember(game_id, game.name, after)
            return 1
        raise too_busy()
