"""Issue 39, item 8: who is still choosing at a round's last turn must not tell anyone watching
what the hidden last cards are.

Zoch games used to leave a seat whose last card was a nigiri with a free wasabi to choose (S9)
while every other last card was picked automatically (S5): a spectator who saw a seat with a
free wasabi still choosing knew its hidden card was a nigiri (27 of 27 in the review, against a
base rate of 77.7 %). Now every last card is picked automatically, a nigiri onto the free wasabi
by S9's default (domain/sushigo/picks.py, ``_automatic_seats``).

The domain test plays many seeded random Zoch games and, for every seat that holds a free wasabi
(public: it is on its table) when a round's last turn opens, compares its hidden last card with
what a spectator without a token saw: the views after every command (one a request) and the
events as shown to a spectator. The best guess from what was seen must not beat the base rate.
The service test checks the same through the API: no token, no seat ever seen still choosing
its last card.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from typing import Any

import requests
from api_client import LiveServer, random_move
from patience import ANSWER

from domain.decider import SPECTATOR, CreateGame, Event, MakeMove, TakeSeat, commitment
from domain.replay import replay
from domain.sushigo import SUSHI_GO, view
from domain.sushigo.cards import NIGIRI_KINDS
from domain.sushigo.evolution import evolve
from domain.sushigo.game import execute
from domain.sushigo.randomplay import random_pick, random_steps
from domain.sushigo.rules import HAND_SIZE
from domain.sushigo.state import State
from domain.sushigo.views import visible_event

pytest_plugins = ["api_fixtures"]

Sample = tuple[bool, tuple[Any, ...]]  # (the hidden last card is a nigiri, what was seen)


def _last_cards(events: list[Event], last: int) -> dict[tuple[int, int], bool]:
    """Per (round, seat holding a free wasabi when the round's last turn opened: public, it is
    on the seat's table): whether its hidden last card is a nigiri."""
    hidden = {}
    state = State()
    for event in events:
        state = evolve(state, event)
        if event.type == "turn_revealed" and event.data["turn"] == last - 1:
            for seat, tableau in enumerate(state.tableaux):
                if tableau.free_wasabi:
                    hidden[(state.round, seat)] = state.hands[seat][0] in NIGIRI_KINDS
    return hidden


def _samples(players: int, rng_seed: int) -> list[Sample]:
    """One sample per (round, seat with a free wasabi when the round's last turn opened)."""
    last = HAND_SIZE[players]
    steps = list(random_steps({"players": players, "edition": "zoch"}, random.Random(rng_seed)))
    # What a spectator saw of each round's last turn while it was open: per seat, whether any
    # view showed it still to pick, and the spectator's events of that turn before its reveal.
    choosing: dict[tuple[int, int], bool] = defaultdict(bool)
    shown: dict[tuple[int, int], list[Any]] = defaultdict(list)
    open_for: Counter[int] = Counter()  # round -> commands after which its last turn was open
    state = State()
    for _, events, after in steps:
        for event in events:
            state = evolve(state, event)
            if event.type == "card_picked" and event.data["turn"] == last:
                seen = visible_event(state, event, SPECTATOR)
                # what was shown, not whose it was (the key says that)
                shown_data = {k: v for k, v in seen.data.items() if k not in ("seat", "round")}
                shown[(event.data["round"], event.data["seat"])].append(shown_data)
        if after.status == "playing" and after.turn == last:
            open_for[after.round] += 1
            for seat in view(after, SPECTATOR)["seats"]:
                choosing[(after.round, seat["seat"])] |= not seat["picked"]
    hidden = _last_cards([e for _, events, _ in steps for e in events], last)
    return [
        (nigiri, (choosing[key], open_for[key[0]], repr(shown[key])))
        for key, nigiri in hidden.items()
    ]


def _best_guess_accuracy(samples: list[Sample]) -> float:
    """The accuracy of the best guess of the hidden class from what was seen, fitted on the
    samples themselves (the most any predictor of those signals can reach)."""
    by_signal: dict[tuple[Any, ...], Counter[bool]] = defaultdict(Counter)
    for nigiri, signal in samples:
        by_signal[signal][nigiri] += 1
    return sum(max(counts.values()) for counts in by_signal.values()) / len(samples)


def test_a_spectator_cannot_tell_a_last_nigiri_from_who_is_still_choosing() -> None:
    samples = [s for players in (3, 4, 5) for game in range(40) for s in _samples(players, game)]
    nigiri = sum(n for n, _ in samples)
    assert nigiri >= 30 and len(samples) - nigiri >= 30, "too few cases of either kind"
    base_rate = max(nigiri, len(samples) - nigiri) / len(samples)
    assert _best_guess_accuracy(samples) == base_rate
    # The reason: nothing seen depends on the hidden card; nobody is left choosing (S5).
    assert {signal[0] for _, signal in samples} == {False}


def test_the_prediction_finds_a_signal_that_depends_on_the_card() -> None:
    """The measure above is not blind: a signal that is the class itself is predicted
    perfectly, one that is independent of it only at the base rate."""
    classes = [i % 4 != 0 for i in range(100)]
    assert _best_guess_accuracy([(c, (c,)) for c in classes]) == 1.0
    assert _best_guess_accuracy([(c, (0,)) for c in classes]) == 0.75


def _play_zoch_game(base: str, players: int, rng: random.Random) -> list[Event]:
    """A Zoch game of random picks sent by each seat's token (plain requests: hundreds of them),
    the public view checked after every pick; its whole log once over."""
    http = requests.Session()
    body = {"game": "sushi-go", "players": players, "rules": {"edition": "zoch"}}
    game = http.post(f"{base}/games", json=body, timeout=ANSWER).json()["game_id"]
    tokens = [
        http.post(f"{base}/games/{game}/players", json={"name": f"p{seat}"}, timeout=ANSWER).json()[
            "token"
        ]
        for seat in range(players)
    ]
    while True:
        for token in tokens:
            auth = {"Authorization": f"Bearer {token}"}
            mine = http.get(f"{base}/games/{game}", headers=auth, timeout=ANSWER).json()
            if mine["status"] == "over":
                recorded = http.get(f"{base}/games/{game}/events?limit=1000", timeout=ANSWER).json()
                assert recorded["next_after"] is None
                return [
                    Event(e["type"], e["data"], e["schema_version"]) for e in recorded["events"]
                ]
            if not mine["you"]["awaiting_pick"]:
                continue
            move = http.post(
                f"{base}/games/{game}/moves",
                json=random_move(mine, rng),
                headers=auth,
                timeout=ANSWER,
            )
            assert move.status_code == 200, move.text
            public = http.get(f"{base}/games/{game}", timeout=ANSWER).json()  # no token
            if public["status"] == "playing":
                last = [seat for seat in public["seats"] if seat["hand_size"] == 1]
                assert all(seat["picked"] for seat in last), f"still choosing: {public}"


def test_no_token_sees_a_seat_still_choosing_its_last_card(live_server: LiveServer) -> None:
    """Through the service: after every pick of random Zoch games, the public view (no token)
    never shows a seat left to pick the last card of a hand (``hand_size`` 1, not ``picked``),
    until a game had a last nigiri with a free wasabi (picked onto it, S5/S9)."""
    rng = random.Random(39)
    met = False
    for _ in range(40):
        events = _play_zoch_game(live_server.url, 5, rng)
        met = any(_last_cards(events, HAND_SIZE[5]).values())
        if met:
            break
    assert met, "no game of 40 had a last nigiri with a free wasabi"


def _game_created_as(last_card_auto: bool, rng: random.Random) -> tuple[list[Event], bytes, int]:
    """A random 3-seat Zoch game created with ``last_card_auto`` as given (False: as before
    issue 39), its seed, and how often a seat was left to pick its last card."""
    seed = rng.randbytes(32)
    created = CreateGame({"players": 3, "edition": "zoch"}, commitment(seed), seed)
    events, state = execute(State(), created._replace(last_card_auto=last_card_auto))
    for seat in range(3):
        more, state = execute(state, TakeSeat(f"p{seat}", seed))
        events += more
    waited = 0
    while not state.over:
        for seat in range(3):
            if not state.over and state.picks[seat] is None:
                waited += len(state.hands[seat]) == 1
                more, state = execute(state, MakeMove(seat, random_pick(state, seat, rng), seed))
                events += more
    return events, seed, waited


def test_games_created_before_keep_their_recorded_last_picks() -> None:
    """A Zoch game created before issue 39 records no ``last_card_auto``: re-decided (replay,
    audit) it lets its seats choose a last nigiri as they did, so its log still replays; a new
    one records it and replays too."""
    rng = random.Random(8)
    waited = {True: 0, False: 0}
    for auto in (True, False) * 10:
        events, seed, seats_waited = _game_created_as(auto, rng)
        assert events[0].data.get("last_card_auto", False) is auto
        waited[auto] += seats_waited
        checks = replay(SUSHI_GO, events, seed)
        assert all(checks[name]["ok"] for name in ("replay", "deals", "scores")), checks
    assert waited == {True: 0, False: waited[False]} and waited[False] > 0
