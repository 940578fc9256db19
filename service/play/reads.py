"""The queries of the service layer (``GameReads``): what this process remembers of recent games
(states, seeds, seat tokens, deadlines, privacy), loading a game and moving it on, the events a
viewer may read, the reads a standby may serve, whether a token still holds its seat, and the
game's receipts. The commands (commands.py, sweeps.py) build on it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any
from uuid import UUID

from domain.decider import FINAL_EVENTS, SPECTATOR, Viewer
from service import autoplay, key_registry
from service import keys as service_keys
from service.play.loaded import CACHE_SIZE, FILL_SECONDS, STALL_SECONDS, Loaded, adapter_for
from service.store import signatures
from service.store.accounts import Accounts
from service.store.deadlines import Deadlines
from service.store.events import (
    CorruptEvent,
    EventStore,
    GameNotFound,
    GameRow,
    SeatToken,
    StoredEvent,
    StoreUnavailable,
)
from service.store.invitations import Invitations, PrivateGame
from service.store.recent import Recent
from service.store.replicas import Replicas


class GameReads:
    """The queries of ``GameService`` and the caches they keep (see its docstring)."""

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
        self.accounts = Accounts(store)  # identities across games (issue 35)
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
            try:
                state = evolve(state, event)
            except CorruptEvent.READING as exc:  # versions count events: this is the next
                raise CorruptEvent.of(game_id, state.version + 1, exc) from exc
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
                state = _evolve(adapter.game, state, game_id, record)
        self._remember(game_id, name, state)
        return Loaded(game_id, adapter, state)

    def state_at(self, loaded: Loaded, version: int) -> Any:
        """The game's state after its first ``version`` events (time travel)."""
        if version == loaded.version:
            return loaded.state
        game = loaded.adapter.game
        past = game.initial_state()
        for record in self.records(loaded.id, 0, version, version):
            past = _evolve(game, past, loaded.id, record)
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
            try:
                event = game.visible_event(loaded.state, game.upcast(r.event), viewer)
                if not isinstance(event.data, Mapping):
                    raise TypeError("its data is not a JSON object")
            except CorruptEvent.READING as exc:
                raise CorruptEvent.of(loaded.id, r.version, exc) from exc
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

    def account_seat(self, game_id: UUID, account_id: str) -> tuple[int, int] | None:
        """The seat ``account_id`` holds in ``game_id`` and the version of its ``seat_taken``
        (None if it holds none), by this process's latest state, read again before a "no"."""
        cached = self._states.get(game_id)
        found = None if cached is None else _account_seat(cached[1], account_id)
        if found is None:
            found = _account_seat(self.load(game_id).state, account_id)
        return found

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


def _account_seat(state: Any, account_id: str) -> tuple[int, int] | None:
    accounts = getattr(state, "accounts", ())
    if account_id not in accounts:
        return None
    seat = accounts.index(account_id)
    return seat, state.seated_at[seat]


def _evolve(game: Any, state: Any, game_id: UUID, record: StoredEvent) -> Any:
    """``state`` moved on by ``record``, or ``CorruptEvent`` naming it if its data is unreadable."""
    try:
        return game.evolve(state, record.event)
    except CorruptEvent.READING as exc:
        raise CorruptEvent.of(game_id, record.version, exc) from exc
