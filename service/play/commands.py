"""The players' commands of the service layer (``Commands``): create a game, join it, move, leave
and resign. Each is decided on the game as loaded and appended at its version, decided again on
a race (``VersionConflict``), the bots' moves following in the same append."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple
from uuid import UUID, uuid4

from domain.decider import (
    BY_RESIGNED,
    SEAT_TAKEN,
    BotSeat,
    Command,
    CreateGame,
    DomainError,
    Event,
    LeaveSeat,
    MakeMove,
    TakeOver,
    TakeSeat,
    commitment,
)
from service import autoplay, errors, faults, metrics
from service.play import feed, rating
from service.play.loaded import (
    MAX_ATTEMPTS,
    Loaded,
    adapter_for,
    check_turn,
    has_started,
    seat_gone,
    too_busy,
)
from service.play.reads import GameReads
from service.store.events import InvitationRevoked, SeatToken, VersionConflict
from service.store.idempotency_records import IdempotencyRecord


class Creation(NamedTuple):
    """What a new game is: its game, its rules (with ``players``), its bots, its turn clock,
    for a private game the hashes of its creator token and invitation, and whether it is
    rated (issue 37)."""

    name: str
    options: dict[str, Any]
    bots: tuple[BotSeat, ...] = ()
    turn_seconds: int | None = None
    private: tuple[bytes, bytes] | None = None
    rated: bool = False


class Seating(NamedTuple):
    """A person seated in a game as it is created: the seat's name, its account (if any), the
    hash of its seat token, and the client taking it (``Keyring.client_hash``, if counted)."""

    name: str
    account: str | None
    token_hash: bytes
    client: bytes | None = None


def _seats_taken(
    events: Sequence[Event], seated: Sequence[Seating]
) -> list[tuple[int, int, Seating]]:
    """Each person's seat and the version of its ``seat_taken`` (the people's seats are taken
    in ``seated``'s order; bots' ``seat_taken`` say ``bot``)."""
    people = iter(seated)
    taken = []
    for version, event in enumerate(events, start=1):
        if event.type == SEAT_TAKEN and "bot" not in event.data:
            taken.append((event.data["seat"], version, next(people)))
    return taken


class Commands(GameReads):
    """The commands players send (through HTTP); the queries are ``GameReads``'."""

    def create(
        self,
        name: str,
        options: dict[str, Any],
        bots: Sequence[BotSeat] = (),
        turn_seconds: int | None = None,
        record: IdempotencyRecord | None = None,
        private: tuple[bytes, bytes] | None = None,
        rematch_of: tuple[UUID, int] | None = None,
        rated: bool = False,
    ) -> Loaded:
        """A new game; bot seats that come first are taken now, and if bots take every seat the
        game is played to its end now. ``record``: of the keyed request, written with it.
        ``private``: the hashes of the creator's token and of the invitation of a private
        game (service/store/invitations.py). ``rematch_of``: the finished game and its seat
        that proposes this one as its rematch (service/rematch.py). ``rated``: the game counts
        for its players' ratings (domain/ratings.py)."""
        game = Creation(name, options, tuple(bots), turn_seconds, private, rated)
        return self.create_seated(game, record=record, rematch_of=rematch_of)[1]

    def create_seated(
        self,
        creation: Creation,
        seated: Sequence[Seating] = (),
        record: IdempotencyRecord | None = None,
        rematch_of: tuple[UUID, int] | None = None,
        along: Callable[[Any, UUID], None] | None = None,
    ) -> tuple[list[int], Loaded]:
        """A new game with people ``seated`` in it already (in that order, each in the first
        seat no bot holds), decided in one run (``CreateGame``, then a ``TakeSeat`` each, then
        the bots' moves) and recorded in one transaction: never a game half seated. ``along``:
        the caller's writes in that transaction (given the cursor and the new game's id); what
        it raises undoes the game. Returns the seats taken, in ``seated``'s order, and the game.
        If the seats fill, the game starts now and its first turn's deadline row is written."""
        adapter = adapter_for(creation.name)
        game = adapter.game
        if (creation.bots or creation.turn_seconds) and not autoplay.has_bots(game):
            raise errors.rule_broken(
                "invalid_bots", f"{creation.name} has no bots and no turn clock yet"
            )
        seed = secrets.token_bytes(32)
        commands: list[Command] = [
            CreateGame(
                creation.options,
                commitment(seed),
                seed,
                creation.bots,
                creation.turn_seconds,
                rated=creation.rated,
            ),
            *(TakeSeat(person.name, seed, person.account) for person in seated),
        ]
        stall = {"stall_seconds": self.stall_seconds} if seated else {}
        outcome = autoplay.run(adapter, game.initial_state(), seed, commands, **stall)
        started = has_started(game, outcome.state)
        # Without people, a game starts at creation only when bots take every seat, and then
        # they play it to the end: no turn's row. A waiting game's seats must fill in time.
        assert seated or outcome.deadline is None
        waiting = autoplay.cancels(game) and not started
        deadline = (outcome.state.version, self.fill_seconds, "fill") if waiting else None
        deadline = outcome.deadline or deadline
        game_id = uuid4()
        seats = _seats_taken(outcome.events, seated)
        sealed, key_id = self.keys.seal_seed(game_id, seed)
        faults.point("decided")
        told = feed.items(adapter, game_id, game.initial_state(), outcome.state, outcome.events)
        if rematch_of is not None:
            finished = self.load(rematch_of[0]).state
            told += feed.rematch_items(finished, creation.name, rematch_of[0], game_id)
        self.store.create_game(
            game_id,
            creation.name,
            sealed,
            outcome.events,
            record,
            key_id,
            creation.private,
            deadline,
            rematch_of,
            seats=[
                (seat, person.token_hash, taken_at, person.client)
                for seat, taken_at, person in seats
            ],
            along=None if along is None else (lambda cur: along(cur, game_id)),
            feed=told,
        )
        faults.point("appended")
        self._remember(game_id, creation.name, outcome.state)
        self._private.put(game_id, creation.private is not None)
        return [seat for seat, _, _ in seats], Loaded(game_id, adapter, outcome.state)

    def join(
        self,
        game_id: UUID,
        name: str,
        token_hash: bytes,
        record: IdempotencyRecord | None = None,
        client: bytes | None = None,
        waiting_limit: int = 0,
        invitation: bytes | None = None,
        rematch_of: tuple[UUID, int] | None = None,
        account: str | None = None,
    ) -> tuple[int, Loaded]:
        """Take the next free seat for ``name``; the seat's token hash is stored with it, and
        the ``client`` taking it (``Keyring.client_hash``), who may hold seats in at most
        ``waiting_limit`` waiting games (0: no limit). ``invitation``: the hash of the
        invitation presented to join a private game; 403 ``invalid_invitation`` if its creator
        revoked or replaced it before the seat was taken (even while this join was deciding).
        ``rematch_of``: the finished game and its seat taking its seat in this, its rematch
        (written with the seat: ``RematchSeatTaken`` if it has one already). ``account``: the
        account taking the seat, recorded in its ``seat_taken`` (issue 35)."""
        if client is not None and waiting_limit:
            self._check_waiting(game_id, client, waiting_limit)
        for _ in range(MAX_ATTEMPTS):
            loaded = self.load(game_id)
            game, seed = loaded.adapter.game, self.seed(game_id)
            outcome = self._decide(loaded, seed, TakeSeat(name, seed, account))
            faults.point("decided")
            seat = outcome.events[0].data["seat"]
            try:
                self.store.append(
                    game_id,
                    loaded.version,
                    outcome.events,
                    seat_token=(seat, token_hash, loaded.version + 1),  # its seat_taken's
                    client=client,
                    deadline=outcome.deadline,
                    record=record,
                    invitation=invitation,
                    rematch_seat=None if rematch_of is None else (*rematch_of, seat),
                    feed=feed.items(
                        loaded.adapter, game_id, loaded.state, outcome.state, outcome.events
                    ),
                    rated=rating.finish(loaded.adapter, outcome.state, outcome.events),
                )
            except VersionConflict:
                metrics.APPEND_RETRIES.inc()
                continue
            except InvitationRevoked:
                raise errors.invalid_invitation() from None
            faults.point("appended")
            self._remember(game_id, game.name, outcome.state)
            return seat, Loaded(game_id, loaded.adapter, outcome.state)
        raise too_busy(loaded)

    def _check_waiting(self, game_id: UUID, client: bytes, limit: int) -> None:
        """409 ``too_many_waiting_games`` if ``client`` holds seats in ``limit`` other waiting
        games. (Two joins at the same moment may both pass: a bound, not an exact count.)"""
        held = self.store.waiting_games(client, game_id)
        if held >= limit:
            raise errors.conflict(
                "too_many_waiting_games",
                f"your address already holds seats in {held} games that wait for players (at"
                f" most {limit}); play them, or wait until they start, before joining another",
            )

    def move(
        self,
        game_id: UUID,
        seat: int,
        move: Any,
        turn: Any,
        loaded: Loaded | None = None,
        record: IdempotencyRecord | None = None,
        token: SeatToken | None = None,
    ) -> Loaded:
        """Decide and append ``seat``'s move for ``turn`` (as the move schema loads it);
        ``loaded`` is the game as this process last saw it, if at hand (``last_seen``: it may
        be behind). A move counts only for the turn it names: were it decided for a later one,
        it would be a pick from a hand its player never saw (a second device, a resend, a race
        with the turn clock). ``token``: the bearer's, which must hold the seat in the state
        the move is decided on (a seat left and taken again since this process last looked
        belongs to another token: 401 ``invalid_token``).

        Why no read first: the append names the version the move was decided at, so a state
        that is behind costs a VersionConflict and a decision on the current state, never a
        wrong answer; and a refusal is only ever judged on a state just read."""
        current = loaded is None
        for attempt in range(MAX_ATTEMPTS):
            if loaded is None or attempt > 0:
                loaded, current = self.load(game_id), True
            try:
                if token is not None and not self.holds_in(game_id, loaded.state, token):
                    raise seat_gone(token)
                check_turn(loaded, turn)
                seed = self.seed(game_id)
                outcome = self._decide(loaded, seed, MakeMove(seat, move, seed))
            except errors.ServiceError:
                if current:
                    raise
                continue  # judged on a state that may be behind: judge again on the current one
            if not self._appended(loaded, outcome, record):
                continue  # decided again on the new state: the turn check first
            metrics.MOVES.labels(loaded.adapter.game.name).inc()
            return Loaded(game_id, loaded.adapter, outcome.state)
        raise too_busy(loaded)

    def _decide(
        self, loaded: Loaded, seed: bytes, *commands: Command, expired: Any = None
    ) -> autoplay.Outcome:
        """The commands' events and the bots' after them; a refusal says where the game is.
        ``expired``: the turn whose clock ran out (``autoplay.run``), if any."""
        more = {} if expired is None else {"expired": expired}
        try:
            return autoplay.run(
                loaded.adapter,
                loaded.state,
                seed,
                commands,
                stall_seconds=self.stall_seconds,
                **more,
            )
        except DomainError as error:
            raise errors.refused(error, **loaded.adapter.position(loaded.state)) from None

    def leave(self, game_id: UUID, seat: int, record: IdempotencyRecord | None = None) -> Loaded:
        """``seat`` gives itself up before the start (``seat_left``): free again, its token
        acts no more (``holds``)."""
        return self._append(game_id, LeaveSeat(seat), record)

    def resign(self, game_id: UUID, seat: int, record: IdempotencyRecord | None = None) -> Loaded:
        """``seat`` resigns after the start: the greedy bot plays it from now on, at once if
        the game waits for it (``seat_taken_over``, its moves ``by: resigned``)."""
        return self._append(game_id, TakeOver(seat, BY_RESIGNED), record)

    def _append(
        self, game_id: UUID, command: Command, record: IdempotencyRecord | None = None
    ) -> Loaded:
        """Decide ``command`` (and the bots' moves after it) on the game as it is, and append
        them (with the keyed request's ``record``), again on a race."""
        for _ in range(MAX_ATTEMPTS):
            loaded = self.load(game_id)
            outcome = self._decide(loaded, self.seed(game_id), command)
            if self._appended(loaded, outcome, record):
                return Loaded(game_id, loaded.adapter, outcome.state)
        raise too_busy(loaded)

    def _appended(
        self, loaded: Loaded, outcome: autoplay.Outcome, record: IdempotencyRecord | None
    ) -> bool:
        """Append ``outcome``'s events (and the keyed request's ``record``) after ``loaded``'s
        version, and remember the state they lead to; False if another append came first."""
        faults.point("decided")
        try:
            self.store.append(
                loaded.id,
                loaded.version,
                outcome.events,
                deadline=outcome.deadline,
                record=record,
                feed=feed.items(
                    loaded.adapter, loaded.id, loaded.state, outcome.state, outcome.events
                ),
                rated=rating.finish(loaded.adapter, outcome.state, outcome.events),
            )
        except VersionConflict:
            metrics.APPEND_RETRIES.inc()
            return False
        faults.point("appended")
        self._remember(loaded.id, loaded.adapter.game.name, outcome.state)
        return True
