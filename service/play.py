"""The service layer: load a game, decide a command, append its events — retrying on races.

Optimistic concurrency: a command is decided on the state at version N and appended as N+1…;
if another request appended first, the store raises VersionConflict and the command is decided
again on the fresh state. Players picking at the same moment therefore all succeed, while a
second pick by the same seat in the same turn is refused by the rules (S4) on the retry.

Every command is followed, in the same append, by the moves bots owe (service/autoplay.py); an
append that starts a timed turn writes its deadline row in the same statement (service/live/clock.py
makes the moves of turns whose deadline passed).
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID, uuid4

from domain.decider import (
    BY_RESIGNED,
    BY_STALLED,
    FINAL_EVENTS,
    SPECTATOR,
    BotSeat,
    CancelGame,
    Command,
    CreateGame,
    DomainError,
    LeaveSeat,
    MakeMove,
    TakeOver,
    TakeSeat,
    Viewer,
    commitment,
)
from service import autoplay, errors, faults, key_registry, metrics
from service import keys as service_keys
from service.games.registry import GameAdapter, load_games
from service.store import signatures
from service.store.deadlines import Deadlines
from service.store.events import (
    EventStore,
    GameNotFound,
    GameRow,
    InvitationRevoked,
    SeatToken,
    StoredEvent,
    StoreUnavailable,
    VersionConflict,
)
from service.store.idempotency_records import IdempotencyRecord
from service.store.invitations import Invitations, PrivateGame
from service.store.recent import Recent
from service.store.replicas import Replicas

MAX_ATTEMPTS = 20
CACHE_SIZE = 2048  # games per process whose state, seed and seat tokens are kept
STALL_SECONDS = 3600  # defaults of CARDROOM_STALL_SECONDS and CARDROOM_FILL_SECONDS
FILL_SECONDS = 24 * 3600


@dataclass(frozen=True)
class Loaded:
    id: UUID
    adapter: GameAdapter
    state: Any

    @property
    def version(self) -> int:
        return self.state.version


def adapter_for(name: str) -> GameAdapter:
    adapters = load_games()
    adapter = adapters.get(name)
    if adapter is None:
        raise errors.rule_broken(
            "unknown_game", f"unknown game {name!r}; this service hosts {sorted(adapters)}"
        )
    return adapter


class GameService:
    """Commands and queries on games. Thread-safe. Keeps recent states, so that a request only
    reads the events appended since (events never change, so a cached fold stays true), and the
    seeds and seat token hashes of recent games (rows that never change either)."""

    def __init__(
        self,
        store: EventStore,
        replicas: Replicas | None = None,
        keys: service_keys.Keyring | None = None,
        stall_seconds: int = STALL_SECONDS,
        fill_seconds: int = FILL_SECONDS,
    ) -> None:
        self.store = store  # the primary: every write, and the reads that must be current
        self.replicas = replicas or Replicas([])  # hot standbys for reads (service/store/replicas)
        self._keys = keys  # None: this process's keyring, read at its first use
        if store.signer is None:  # a finished game is signed once, as its last event is appended
            store.signer = self._sign_final
        # How long a started game's turn may wait for a seat before the greedy bot takes the
        # seat over, and a waiting game for its seats before it is cancelled (clock.py sweeps).
        self.stall_seconds = stall_seconds
        self.fill_seconds = fill_seconds
        self._states: Recent[UUID, tuple[str, Any]] = Recent(CACHE_SIZE)
        self._seeds: Recent[UUID, bytes] = Recent(CACHE_SIZE)
        self._seat_tokens: Recent[UUID, list[SeatToken]] = Recent(CACHE_SIZE)
        self.deadlines = Deadlines(store.pool, store.watchdog)
        self._deadlines: Recent[UUID, tuple[Any, datetime | None]] = Recent(CACHE_SIZE)
        self.invitations = Invitations(store)
        self._private: Recent[UUID, bool] = Recent(CACHE_SIZE)
        store.on_new_database(self.forget)

    def forget(self) -> None:
        """Drop everything this process remembers of games (another database: see
        ``EventStore.on_new_database``)."""
        for cache in (self._states, self._seeds, self._seat_tokens, self._deadlines):
            cache.clear()
        self._private.clear()

    @property
    def keys(self) -> service_keys.Keyring:
        return self._keys or service_keys.load()

    @keys.setter
    def keys(self, ring: service_keys.Keyring) -> None:
        self._keys = ring

    def _sign_final(self, game_id: UUID, version: int, digest: str, seed: bytes) -> dict[str, Any]:
        """The store's signer of a finishing event: the active signing key, its kid recorded."""
        return self.keys.receipt(game_id, version, digest, seed)

    def published_keys(self) -> dict[str, Any]:
        """The JWK Set of every signing key whose receipts must still verify: this ring's and
        every one the database recorded, rotated and retired ones included."""
        return key_registry.published(self.store.pool, self.keys)

    # --- queries ---------------------------------------------------------------------------

    def load(self, game_id: UUID, store: EventStore | None = None) -> Loaded:
        """The game as ``store`` (default: the primary) has it, or as this process last saw it
        if that is later (a cached state only moves forward)."""
        store = store or self.store
        generation = self.store.generation
        cached = self._states.get(game_id)
        if cached is None:
            name, events = store.load(game_id)
            adapter = adapter_for(name)
            state = adapter.game.initial_state()
        else:
            name, state = cached
            adapter = adapter_for(name)
            events = store.events_after(game_id, state.version)
            if self.store.generation != generation:  # read from another database meanwhile:
                return self.load(game_id, store)  # the cached state is not to be believed
        evolve = adapter.game.evolve
        for event in events:
            state = evolve(state, event)
        self._remember(game_id, name, state)
        return Loaded(game_id, adapter, state)

    def last_seen(self, game_id: UUID) -> Loaded | None:
        """The game as this process last saw it, without asking the database: maybe behind.
        A move decided on it and appended at its version conflicts if the game moved on
        meanwhile (and is then decided again on the current state), so a pick costs one round
        trip when this process holds the game's latest state, which it mostly does."""
        cached = self._states.get(game_id)
        if cached is None:
            return None
        name, state = cached
        return Loaded(game_id, adapter_for(name), state)

    def advance(self, game_id: UUID, after: int, records: Sequence[StoredEvent]) -> Loaded | None:
        """The game as this process last saw it, moved on by ``records`` (every recorded event
        after version ``after`` in one read of the primary, in order), and kept so: a reader of
        the records need not also ask for the state. None if this process last saw the game
        before ``after`` (or never): then ``load`` it."""
        cached = self._states.get(game_id)
        if cached is None or cached[1].version < after:
            return None
        name, state = cached
        adapter = adapter_for(name)
        for record in records:
            if record.version > state.version:
                state = adapter.game.evolve(state, record.event)
        self._remember(game_id, name, state)
        return Loaded(game_id, adapter, state)

    def state_at(self, loaded: Loaded, version: int) -> Any:
        """The game's state after its first ``version`` events (time travel)."""
        if version == loaded.version:
            return loaded.state
        game = loaded.adapter.game
        past = game.initial_state()
        for record in self.records(loaded.id, 0, version, version):
            past = game.evolve(past, record.event)
        return past

    def visible_events(
        self, loaded: Loaded, viewer: Viewer, after: int, limit: int
    ) -> list[dict[str, Any]]:
        """Up to ``limit`` events after version ``after``, each as ``viewer`` may read it. Events
        past ``loaded`` are left out: the redaction rule judges by that state, so load first."""
        records = self.records(loaded.id, after, limit, loaded.version)
        return self.visible(loaded, records, viewer)

    @staticmethod
    def visible(loaded: Loaded, records: Iterable[Any], viewer: Viewer) -> list[dict[str, Any]]:
        """``records`` (of ``store.load_records``) as ``viewer`` may read them, judged by the
        state ``loaded`` (records past it are left out): one read serves many viewers. Each is
        upcast to its type's current schema, so that a client reads one shape; the export alone
        gives the stored form (its hashes cover that)."""
        game = loaded.adapter.game
        shown = []
        for r in records:
            if r.version > loaded.version:
                continue
            event = game.visible_event(loaded.state, game.upcast(r.event), viewer)
            shown.append(
                {
                    "version": r.version,
                    "type": r.type,
                    "schema_version": event.schema_version,
                    "data": event.data,
                    "recorded_at": r.recorded_at,
                }
            )
        return shown

    # --- reads a standby may serve (each falls back to the primary) -------------------------

    def read(self, game_id: UUID, at_least: int = 0) -> Loaded:
        """The game for a read that a standby may serve, at version ``at_least`` or later (what
        the client has seen: it must never get an older state). From the first standby that
        has replayed that far, else from the primary. A game a standby does not know (yet) is
        looked for on the primary too: it may have been created a moment ago."""
        for replica in self.replicas.in_turn():
            try:
                loaded = self.load(game_id, replica)
            except (GameNotFound, StoreUnavailable):
                continue
            if loaded.version >= at_least:
                return loaded
        return self.load(game_id)

    def records(self, game_id: UUID, after: int, limit: int, upto: int) -> list[StoredEvent]:
        """Up to ``limit`` recorded events after version ``after``, reaching version ``upto``
        if the page is long enough: from a standby that has them, else from the primary."""
        want = min(upto, after + limit)
        for replica in self.replicas.in_turn():
            try:
                rows = replica.load_records(game_id, after, limit)
            except (GameNotFound, StoreUnavailable):
                continue
            if (rows[-1].version if rows else after) >= want:
                return rows
        return self.store.load_records(game_id, after, limit)

    def finished_records(self, game_id: UUID, limit: int) -> list[StoredEvent]:
        """Every recorded event of a game, from a standby if it has the game's end already
        (nothing follows it), else from the primary (which says whether it is over)."""
        for replica in self.replicas.in_turn():
            try:
                rows = replica.load_records(game_id, 0, limit)
            except (GameNotFound, StoreUnavailable):
                continue
            if rows and rows[-1].type in FINAL_EVENTS:
                return rows
        return self.store.load_records(game_id, 0, limit)

    def lobby(self, **query: Any) -> list[GameRow]:
        """The lobby (``EventStore.list_games``), from a standby when one answers: a list of
        many games has no version to wait for, so it may lag the primary by the replication
        lag (milliseconds)."""
        for replica in self.replicas.in_turn():
            try:
                return replica.list_games(**query)
            except StoreUnavailable:
                continue
        return self.store.list_games(**query)

    def _remember(self, game_id: UUID, name: str, state: Any) -> None:
        known = self._states.get(game_id)
        if known is None or known[1].version <= state.version:  # never go back in time
            self._states.put(game_id, (name, state))

    def seed(self, game_id: UUID) -> bytes:
        seed = self._seeds.get(game_id)
        if seed is None:
            stored, key_id = self.store.seed(game_id)
            try:
                seed = self.keys.open_seed(game_id, stored, key_id)
            except service_keys.KeysError:
                seed = self._seed_elsewhere(game_id, stored, key_id)
            self._seeds.put(game_id, seed)
        return seed

    def _seed_elsewhere(self, game_id: UUID, stored: bytes, key_id: str | None) -> bytes:
        """A seed sealed under a key this process lacks: another host rotated (the keys'
        source holds the new key: take it up), or the key was retired (the game is over: its
        seed is in its last event). Else the error stands (/readyz says why)."""
        fresh = service_keys.reread(key_id)
        if fresh is not None:
            self.keys = fresh
            return fresh.open_seed(game_id, stored, key_id)
        state = self.load(game_id).state
        revealed = getattr(state, "seed", None) if state.over else None
        if revealed:
            return bytes.fromhex(revealed)
        return self.keys.open_seed(game_id, stored, key_id)

    def seat_tokens(self, game_id: UUID, refresh: bool = False) -> list[SeatToken]:
        """Every token issued for the game's seats (rows never change once written; a seat
        left and taken again gets a new one: see ``holds``)."""
        tokens = self._seat_tokens.get(game_id)
        if tokens is None or refresh:
            tokens = self.store.seat_tokens(game_id)
            self._seat_tokens.put(game_id, tokens)
        return tokens

    def is_private(self, game_id: UUID) -> bool:
        """Whether the game was created private (that never changes: remembered)."""
        private = self._private.get(game_id)
        if private is None:
            private = self.invitations.private(game_id) is not None
            self._private.put(game_id, private)
        return private

    def private_game(self, game_id: UUID) -> PrivateGame | None:
        """A private game's creator token hash and invitation in force (read afresh: the
        invitation changes); None for a public game."""
        return self.invitations.private(game_id) if self.is_private(game_id) else None

    def holds(self, game_id: UUID, token: SeatToken) -> bool:
        """Whether ``token`` acts for its seat now: the seat is taken, by the ``seat_taken`` the
        token was issued with (not left since, nor left and taken by someone else). Judged by
        this process's latest state of the game, which may be behind: a move judges it again on
        the state it is decided on (``move``)."""
        cached = self._states.get(game_id)
        state = cached[1] if cached is not None else self.load(game_id).state
        return self.holds_in(game_id, state, token)

    def holds_in(self, game_id: UUID, state: Any, token: SeatToken) -> bool:
        """Whether ``token`` holds its seat in ``state`` (see ``holds``)."""
        seated = getattr(state, "seated_at", None)
        if seated is None:  # a game without leaving: every token holds its seat
            return True
        if token.seat >= len(seated) or not seated[token.seat]:
            return False  # the seat was left and is free
        if token.taken_at is not None:
            return bool(token.taken_at == seated[token.seat])
        # Issued before migration 0010 (no taken_at): its seat's first holder, unless the seat
        # has a later holder (a token with a taken_at) since.
        return not any(
            t.seat == token.seat and t.taken_at is not None for t in self.seat_tokens(game_id)
        )

    def turn_deadline(self, loaded: Loaded, past: bool = False) -> datetime | None:
        """When the current turn of a timed game times out (None: untimed, or nobody to wait
        for); of a ``past`` state, the deadline its turn had. The current one is read once per
        turn: a turn's row never changes."""
        game, state = loaded.adapter.game, loaded.state
        if not autoplay.turn_seconds(game, state) or not autoplay.awaiting(game, state):
            return None
        turn = loaded.adapter.turn(state)
        cached = None if past else self._deadlines.get(loaded.id)
        if cached is not None and cached[0] == turn:
            return cached[1]
        row = self.deadlines.latest(loaded.id, at_most=loaded.version)
        deadline = None if row is None else row.deadline
        if not past:
            self._deadlines.put(loaded.id, (turn, deadline))
        return deadline

    def final_signature(self, game_id: UUID) -> dict[str, Any] | None:
        """The receipt signed once when the game finished (service/store/signatures.py)."""
        return signatures.stored(self.store, game_id)

    def receipt(self, loaded: Loaded) -> dict[str, Any]:
        """The service's signed receipt for the game's last event (domain/receipts.py)."""
        digest = self.store.hash_at(loaded.id, loaded.version)
        return self.keys.receipt(loaded.id, loaded.version, digest, self.seed(loaded.id))

    @staticmethod
    def started(loaded: Loaded) -> bool:
        """Whether the game has started (or is over): every game's view says its ``status``.
        Why not the seat number: bots may take the seats after a person's."""
        return loaded.adapter.game.view(loaded.state, SPECTATOR)["status"] != "waiting"

    # --- commands ---------------------------------------------------------------------------

    def create(
        self,
        name: str,
        options: dict[str, Any],
        bots: Sequence[BotSeat] = (),
        turn_seconds: int | None = None,
        record: IdempotencyRecord | None = None,
        private: tuple[bytes, bytes] | None = None,
        rematch_of: tuple[UUID, int] | None = None,
    ) -> Loaded:
        """A new game; bot seats that come first are taken now, and if bots take every seat the
        game is played to its end now. ``record``: of the keyed request, written with it.
        ``private``: the hashes of the creator's token and of the invitation of a private
        game (service/store/invitations.py). ``rematch_of``: the finished game and its seat
        that proposes this one as its rematch (service/rematch.py)."""
        adapter = adapter_for(name)
        game = adapter.game
        if (bots or turn_seconds) and not autoplay.has_bots(game):
            raise errors.rule_broken("invalid_bots", f"{name} has no bots and no turn clock yet")
        seed = secrets.token_bytes(32)
        command = CreateGame(options, commitment(seed), seed, tuple(bots), turn_seconds)
        outcome = autoplay.run(adapter, game.initial_state(), seed, [command])
        # No turn's row to write: a game starts at creation only when bots take every seat,
        # and then they play it to the end. A waiting game's seats must fill in time.
        assert outcome.deadline is None
        waiting = autoplay.cancels(game) and not _started(game, outcome.state)
        fill = (outcome.state.version, self.fill_seconds, "fill") if waiting else None
        game_id = uuid4()
        sealed, key_id = self.keys.seal_seed(game_id, seed)
        faults.point("decided")
        self.store.create_game(
            game_id, name, sealed, outcome.events, record, key_id, private, fill, rematch_of
        )
        faults.point("appended")
        self._remember(game_id, name, outcome.state)
        self._private.put(game_id, private is not None)
        return Loaded(game_id, adapter, outcome.state)

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
    ) -> tuple[int, Loaded]:
        """Take the next free seat for ``name``; the seat's token hash is stored with it, and
        the ``client`` taking it (``Keyring.client_hash``), who may hold seats in at most
        ``waiting_limit`` waiting games (0: no limit). ``invitation``: the hash of the
        invitation presented to join a private game; 403 ``invalid_invitation`` if its creator
        revoked or replaced it before the seat was taken (even while this join was deciding).
        ``rematch_of``: the finished game and its seat taking its seat in this, its rematch
        (written with the seat: ``RematchSeatTaken`` if it has one already)."""
        if client is not None and waiting_limit:
            self._check_waiting(game_id, client, waiting_limit)
        for _ in range(MAX_ATTEMPTS):
            loaded = self.load(game_id)
            game, seed = loaded.adapter.game, self.seed(game_id)
            outcome = self._decide(loaded, seed, TakeSeat(name, seed))
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
                )
            except VersionConflict:
                metrics.APPEND_RETRIES.inc()
                continue
            except InvitationRevoked:
                raise errors.invalid_invitation() from None
            faults.point("appended")
            self._remember(game_id, game.name, outcome.state)
            return seat, Loaded(game_id, loaded.adapter, outcome.state)
        raise _too_busy(loaded)

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
                    raise _seat_left(token)
                _check_turn(loaded, turn)
                seed = self.seed(game_id)
                outcome = self._decide(loaded, seed, MakeMove(seat, move, seed))
            except errors.ServiceError:
                if current:
                    raise
                continue  # judged on a state that may be behind: judge again on the current one
            faults.point("decided")
            try:
                self.store.append(
                    game_id,
                    loaded.version,
                    outcome.events,
                    deadline=outcome.deadline,
                    record=record,
                )
            except VersionConflict:
                metrics.APPEND_RETRIES.inc()
                continue  # decided again on the new state: the turn check first
            faults.point("appended")
            self._remember(game_id, loaded.adapter.game.name, outcome.state)
            metrics.MOVES.labels(loaded.adapter.game.name).inc()
            return Loaded(game_id, loaded.adapter, outcome.state)
        raise _too_busy(loaded)

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
            faults.point("decided")
            try:
                self.store.append(
                    game_id,
                    loaded.version,
                    outcome.events,
                    deadline=outcome.deadline,
                    record=record,
                )
            except VersionConflict:
                metrics.APPEND_RETRIES.inc()
                continue
            faults.point("appended")
            self._remember(game_id, loaded.adapter.game.name, outcome.state)
            return Loaded(game_id, loaded.adapter, outcome.state)
        raise _too_busy(loaded)

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
                    game_id, loaded.version, outcome.events, deadline=outcome.deadline
                )
            except VersionConflict:
                metrics.APPEND_RETRIES.inc()
                continue  # a player (or another sweeper) moved meanwhile: look again
            self._remember(game_id, game.name, outcome.state)
            metrics.TIMED_OUT_MOVES.inc(outcome.timeouts)
            return outcome.timeouts
        raise _too_busy()

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
                    game_id, loaded.version, outcome.events, deadline=outcome.deadline
                )
            except VersionConflict:
                metrics.APPEND_RETRIES.inc()
                continue  # a player moved meanwhile: look again
            self._remember(game_id, game.name, outcome.state)
            return len(commands)
        raise _too_busy()

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
                self.store.append(game_id, loaded.version, events)
            except VersionConflict:
                metrics.APPEND_RETRIES.inc()
                continue  # a join meanwhile: look again
            self._remember(game_id, game.name, after)
            return 1
        raise _too_busy()


def _started(game: Any, state: Any) -> bool:
    return game.view(state, SPECTATOR)["status"] != "waiting"


def _check_turn(loaded: Loaded, turn: Any) -> None:
    """409 ``stale_move`` unless the game waits for moves in ``turn``. (A game that waits for
    nobody, not started or over, is left to the rules: they say which.)"""
    adapter, state = loaded.adapter, loaded.state
    current = adapter.turn(state)
    if turn == current or not autoplay.awaiting(adapter.game, state):
        return
    where = adapter.position(state)
    named = _turn_words(adapter, turn)
    raise errors.conflict(
        "stale_move",
        f"this move was sent for {named}, but the game is at {_turn_words(adapter, current)}"
        f" (version {where['version']}): that turn is over, and nothing was recorded; read the"
        " game again and send a move for the current turn",
        **where,
    )


def _turn_words(adapter: GameAdapter, turn: Any) -> str:
    values = turn if isinstance(turn, tuple) else (turn,)
    return ", ".join(
        f"{name} {value}" for name, value in zip(adapter.turn_fields, values, strict=True)
    )


def _seat_left(token: SeatToken) -> errors.ServiceError:
    return errors.ServiceError(
        "invalid_token",
        f"this token's seat ({token.seat}) was left before the start: the token acts for no seat"
        " any more; join the game again for a new token",
        "unauthorized",
    )


def _too_busy(loaded: Loaded | None = None) -> errors.ServiceError:
    where = {} if loaded is None else loaded.adapter.position(loaded.state)
    return errors.conflict(
        "too_many_conflicts",
        "the game changed under this request too many times in a row; send it again",
        retry_after=1,
        **where,
    )
