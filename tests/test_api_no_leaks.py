"""Nothing secret leaks through the API before a game ends (S4, S17, S18).

Complete games are played over HTTP; after every pick, every endpoint (the view, every page of the
event log, the score sheet, the game list) is read as every viewer (each seat with its token, and
a spectator) and compared with the truth: the unredacted events read straight from the store.
Before the end, nobody may see another seat's hand, another seat's unrevealed pick, the dummy's
pile or the seed. After it, everything is public.

The checks are plain functions over response bodies, so that ``test_the_checks_can_fail`` can
show each of them catching a leak.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

import pytest
from api_client import (
    ApiClient,
    Player,
    Table,
    expect_status,
    play_to_end,
    rng_name,
    seed_matches,
)

from domain.decider import GAME_ENDED, commitment, fold
from domain.sushigo import SUSHI_GO, State
from domain.sushigo.game import CARD_PICKED, ROUND_DEALT
from service import keys
from service.store.events import EventStore, StoredEvent

pytest_plugins = ["api_fixtures"]

HAND_KEYS = ("hand", "hands", "dummy_pile")
HIDDEN_PICK_KEYS = {"seat", "round", "turn", "redacted"}


# --- the truth --------------------------------------------------------------------------------


@dataclass
class Truth:
    """The game as the store has it: unredacted events, the state they fold to, the seed."""

    records: list[StoredEvent]
    state: State
    seed: str  # hex
    deals: list[dict[str, Any]]  # round_dealt data, unredacted

    @classmethod
    def read(cls, store: EventStore, game_id: str) -> Truth:
        gid = UUID(game_id)
        records = store.load_records(gid, 0, 1_000_000)
        state = fold(SUSHI_GO, [r.event for r in records])
        deals = [dict(r.data) for r in records if r.type == ROUND_DEALT]
        seed = keys.load().open_seed(gid, *store.seed(gid))  # sealed at rest: service/keys.py
        return cls(records, state, seed.hex(), deals)

    @property
    def over(self) -> bool:
        return self.state.over

    def dealt_hand(self, round_no: int, seat: int) -> list[str]:
        return list(self.deals[round_no - 1]["hands"][seat])

    def secret_hands(self, viewer: int | None) -> list[list[str]]:
        """Every dealt hand and dummy pile that ``viewer`` must not see before the end."""
        hidden = []
        for deal in self.deals:
            hidden += [list(h) for seat, h in enumerate(deal["hands"]) if seat != viewer]
            if "dummy_pile" in deal:
                hidden.append(list(deal["dummy_pile"]))
        return hidden

    def check_sanity(self) -> None:
        """The secrets the checks look for are really there (so the checks can fail)."""
        rules = self.state.rules
        assert rules is not None
        assert len(self.seed) == 64 and commitment(bytes.fromhex(self.seed)) == (
            self.state.seed_commitment
        )
        if not self.state.started:
            return
        assert self.deals, "a started game has dealt"
        for deal in self.deals:
            assert all(len(hand) == rules.hand_size for hand in deal["hands"])
            if rules.dummy:
                assert len(deal["dummy_pile"]) == rules.hand_size
        for record in self.records:
            if record.type == CARD_PICKED:
                assert record.data["cards"], "the store keeps every pick"


# --- the checks -------------------------------------------------------------------------------


def hand_entries(body: Any, path: str = "") -> Iterator[tuple[str, list[str]]]:
    """Every non-null card list under a ``hand``, ``hands`` (each entry) or ``dummy_pile`` key,
    anywhere in ``body``, with where it was found."""
    if isinstance(body, dict):
        for key, value in body.items():
            here = f"{path}/{key}"
            if key in HAND_KEYS and value is not None:
                if key == "hands":
                    for i, hand in enumerate(value):
                        if hand is not None:
                            yield f"{here}/{i}", list(hand)
                else:
                    yield here, list(value)
            else:
                yield from hand_entries(value, here)
    elif isinstance(body, list):
        for i, value in enumerate(body):
            yield from hand_entries(value, f"{path}/{i}")


def check_no_secret_hands(body: Any, viewer: int | None, truth: Truth, allowed: set[str]) -> None:
    """Before the end, the only hands in ``body`` are the viewer's own, at ``allowed`` paths;
    no hand or pile dealt to someone else appears anywhere."""
    if truth.over:
        return
    secret = [Counter(h) for h in truth.secret_hands(viewer)]
    own = []
    if viewer is not None:
        own = [Counter(truth.dealt_hand(d["round"], viewer)) for d in truth.deals]
        if truth.state.hands:
            own.append(Counter(truth.state.hands[viewer]))
    for where, cards in hand_entries(body):
        assert where in allowed, f"viewer {viewer} sees a hand at {where}: {cards}"
        if Counter(cards) in secret:
            assert Counter(cards) in own, f"viewer {viewer} sees another seat's hand at {where}"


def check_no_seed(text: str, truth: Truth) -> None:
    if not truth.over:
        assert truth.seed not in text, "the seed is visible before the end"


def turn_start_hand_size(state: State, seat: int) -> int:
    """How many cards ``seat`` held when the turn began (the dummy's controller: with the card
    it drew, S17): what a hand size may show before the reveal (S4)."""
    if not state.hands:
        return 0
    pick = state.picks[seat] if state.picks else None
    taken = 0 if pick is None else len(pick.cards) + (pick.dummy_card is not None)
    return len(state.hands[seat]) + taken


def check_view(view: dict[str, Any], viewer: int | None, truth: Truth) -> None:
    state = truth.state
    if truth.over:
        assert seed_matches(view["seed"], view["seed_commitment"])
        assert all("hand" in seat for seat in view["seats"])
        return
    for key in ("seed", "winners", "totals"):
        assert key not in view, f"{key} before the end"
    for seat in view["seats"]:
        assert "hand" not in seat, f"seat {seat['seat']}'s hand is visible to {viewer}"
        assert seat["hand_size"] == turn_start_hand_size(state, seat["seat"]), (
            f"seat {seat['seat']}'s hand size tells {viewer} how many cards it picked"
        )
    if "dummy" in view:
        assert set(view["dummy"]) == {"controller", "pile_size", "tableau", "puddings", "score"}
    allowed = set()
    if viewer is None or not state.started:
        assert "you" not in view
    else:
        you = view["you"]
        assert you["seat"] == viewer
        assert Counter(you["hand"]) == Counter(state.hands[viewer])
        pick = state.picks[viewer]
        assert you["pick"] == (None if pick is None else pick.to_json())
        allowed.add("/you/hand")
    check_no_secret_hands(view, viewer, truth, allowed)


@dataclass
class Tally:
    """How many secrets the checks saw hidden: proof that they looked at something."""

    hidden_hands: int = 0
    hidden_piles: int = 0
    hidden_picks: int = 0
    seen: set[str] = field(default_factory=set)


def check_events(
    events: list[dict[str, Any]], viewer: int | None, truth: Truth, tally: Tally | None = None
) -> None:
    tally = tally or Tally()
    state = truth.state
    assert [e["version"] for e in events] == list(range(1, len(events) + 1))
    assert [e["type"] for e in events] == [r.type for r in truth.records[: len(events)]]
    if truth.over:
        assert events[-1]["type"] == GAME_ENDED
        assert all("redacted" not in e["data"] for e in events)
        return
    allowed = set()
    for i, event in enumerate(events):
        data = event["data"]
        assert "seed" not in data
        if event["type"] == ROUND_DEALT:
            for seat, hand in enumerate(data["hands"]):
                if seat == viewer:
                    assert hand == truth.dealt_hand(data["round"], seat)
                    allowed.add(f"/{i}/data/hands/{seat}")
                else:
                    assert hand is None, f"seat {seat}'s dealt hand is visible to {viewer}"
                    tally.hidden_hands += 1
            if state.rules is not None and state.rules.dummy:
                assert data["dummy_pile"] is None, f"the dummy pile is visible to {viewer}"
                tally.hidden_piles += 1
        elif event["type"] == CARD_PICKED and data["seat"] != viewer:
            if (data["round"], data["turn"]) == (state.round, state.turn):
                assert set(data) <= HIDDEN_PICK_KEYS, (
                    f"seat {data['seat']}'s unrevealed pick is visible to {viewer}: {data}"
                )
                tally.hidden_picks += 1
            else:
                assert data["cards"], "a revealed pick is public"
    check_no_secret_hands(events, viewer, truth, allowed)


# --- reading everything as everybody ------------------------------------------------------------


@dataclass
class LeakHunter:
    table: Table
    store: EventStore
    rng: random.Random
    tally: Tally = field(default_factory=Tally)
    checks: int = 0

    def viewers(self) -> list[tuple[int | None, ApiClient]]:
        return [(None, self.table.api), *((p.seat, p.client) for p in self.table.players)]

    def check_everything(self, *_: Any) -> None:
        truth = Truth.read(self.store, self.table.game_id)
        truth.check_sanity()
        path = self.table.path
        for viewer, client in self.viewers():
            response = client.get(path)
            expect_status(response, 200)
            check_no_seed(response.text, truth)
            view = response.json()
            check_view(view, viewer, truth)
            assert view["version"] == len(truth.records)

            events = []
            limit = self.rng.choice([60, 500, 500, 500])  # sometimes several pages
            for page in client.event_pages(self.table.game_id, limit=limit):
                check_no_seed(json.dumps(page), truth)
                events += page["events"]
            check_events(events, viewer, truth, self.tally)

            response = client.get(f"{path}/scores")
            expect_status(response, 200)
            check_no_seed(response.text, truth)
            check_no_secret_hands(response.json(), viewer, truth, set())
        # The game list does not depend on the viewer (it reads no token): once, as anybody.
        viewer, client = self.rng.choice(self.viewers())
        response = client.get("/games", params={"status": "playing", "limit": 10})
        expect_status(response, 200)
        check_no_seed(response.text, truth)
        check_no_secret_hands(response.json(), viewer, truth, set())
        self.checks += 1


GAMES = [
    pytest.param(2, {"dummy": True}, id="gamewright-2-dummy"),
    pytest.param(3, {"edition": "zoch"}, id="zoch-3"),
    pytest.param(4, {"pass_direction": "alternate"}, id="gamewright-4-alternate"),
]


@pytest.mark.parametrize(("players", "rules"), GAMES)
def test_nothing_leaks_before_the_end(
    api: ApiClient, store: EventStore, players: int, rules: dict[str, Any]
) -> None:
    table = Table.open(api, players, **rules)
    hunter = LeakHunter(table, store, random.Random(f"leaks-{players}-{sorted(rules.items())}"))
    try:
        hunter.check_everything()
        picks = play_to_end(table, hunter.rng, after_move=hunter.check_everything)
    finally:
        table.close()
    assert hunter.checks == picks + 1
    assert hunter.tally.hidden_hands > 0
    assert hunter.tally.hidden_picks > 0
    if rules.get("dummy"):
        assert hunter.tally.hidden_piles > 0
    # After the end, everything is public, to everybody.
    truth = Truth.read(store, table.game_id)
    assert truth.over
    view = api.game(table.game_id)
    assert view["seed"] == truth.seed
    check_view(view, None, truth)
    events = api.events(table.game_id)
    check_events(events, None, truth)
    assert [e["data"] for e in events] == [dict(r.data) for r in truth.records]


def test_the_checks_can_fail(api: ApiClient, store: EventStore) -> None:
    """Each check catches the leak it is there for (fed the unredacted truth)."""
    table = Table.open(api, 2, dummy=True)
    controller: Player = table.players[0]
    hand = controller.client.game(table.game_id)["you"]["hand"]
    controller.client.move(table.game_id, {"cards": hand[:1], "dummy_card": hand[1]})
    truth = Truth.read(store, table.game_id)
    truth.check_sanity()
    unredacted = [
        {"version": r.version, "type": r.type, "data": dict(r.data)} for r in truth.records
    ]

    # The API's own answers pass...
    events = api.events(table.game_id, token=table.players[1].token)
    check_events(events, 1, truth)
    view = api.game(table.game_id, token=table.players[1].token)
    check_view(view, 1, truth)
    # ... the truth does not.
    with pytest.raises(AssertionError, match="dealt hand is visible"):
        check_events(unredacted, 1, truth)
    for event in events:  # only the unrevealed pick of seat 0 un-hidden
        if event["type"] == CARD_PICKED and event["data"]["seat"] == 0:
            event["data"] = next(e["data"] for e in unredacted if e["version"] == event["version"])
    with pytest.raises(AssertionError, match="unrevealed pick"):
        check_events(events, 1, truth)
    leaky = {**view, "seats": [{**view["seats"][0], "hand": hand}, view["seats"][1]]}
    with pytest.raises(AssertionError, match="hand is visible"):
        check_view(leaky, 1, truth)
    shrunk = {**view, "seats": [{**view["seats"][0], "hand_size": 8}, view["seats"][1]]}
    with pytest.raises(AssertionError, match="hand size"):
        check_view(shrunk, 1, truth)
    pile = {"dummy": {**view["dummy"], "pile": truth.deals[0]["dummy_pile"]}}
    with pytest.raises(AssertionError):
        check_view({**view, **pile}, 1, truth)
    somewhere = {"anything": {"hand": truth.dealt_hand(1, 0)}}
    with pytest.raises(AssertionError, match="another seat's hand"):
        check_no_secret_hands(somewhere, 1, truth, {"/anything/hand"})
    with pytest.raises(AssertionError, match="sees a hand"):
        check_no_secret_hands({"x": {"hands": [["tempura"]]}}, None, truth, set())
    with pytest.raises(AssertionError, match="seed"):
        check_no_seed(f'{{"note": "{truth.seed}"}}', truth)
    table.close()


# --- the shape of a pick before the reveal ------------------------------------------------------


def _table_with_chopsticks(api: ApiClient, rules: dict[str, Any]) -> tuple[Table, Player]:
    """A 3-player game at a turn start where seat 0 may pick two cards with chopsticks (S6)."""
    rng = random.Random(3)
    for _ in range(20):
        table = Table.open(api, 3, **rules)
        for _turn in range(6):
            view = table.players[0].client.game(table.game_id)
            you = view["you"]
            if you["chopsticks_available"] and len(you["hand"]) >= 2 and view["turn"] > 1:
                return table, table.players[0]
            for player in table.players:
                hand = player.client.game(table.game_id)["you"]["hand"]
                # Only seat 0 takes chopsticks: the others leave them to it (fewer games needed).
                others = [c for c in hand if c != "chopsticks"] or hand
                mine = player is table.players[0] and "chopsticks" in hand
                card = "chopsticks" if mine else rng.choice(others)
                player.client.move(table.game_id, {"cards": [card]})
        table.close()
    pytest.fail("no game gave seat 0 chopsticks")


def test_hand_sizes_do_not_reveal_a_chopsticks_pick(api: ApiClient) -> None:
    """A chopsticks pick (S6) is secret until the reveal (S4): hand sizes stay those of the turn
    start until then."""
    table, player = _table_with_chopsticks(api, {})
    hand = player.client.game(table.game_id)["you"]["hand"]
    player.client.move(table.game_id, {"cards": hand[:2]})
    for viewer in (table.api, table.players[1].client, player.client):
        seats = viewer.game(table.game_id)["seats"]
        assert [s["picked"] for s in seats] == [True, False, False]
        assert [s["hand_size"] for s in seats] == [len(hand)] * 3
    table.close()


def test_a_hidden_pick_does_not_say_what_kind_of_pick_it_was(api: ApiClient) -> None:
    table = Table.open(api, 3, edition="zoch")
    first, second = table.players[0], table.players[1]
    first.client.move(table.game_id, {"cards": first.client.game(table.game_id)["you"]["hand"][:1]})
    hand = second.client.game(table.game_id)["you"]["hand"]
    second.client.move(table.game_id, {"cards": hand[:1], "use_wasabi": [False]})
    events = table.players[2].client.events(table.game_id)
    hidden = [e["data"] for e in events if e["type"] == CARD_PICKED]
    assert [set(h) for h in hidden] == [HIDDEN_PICK_KEYS] * 2
    assert hidden[0]["redacted"] == hidden[1]["redacted"]
    table.close()


# --- an account's history (issue 35) ----------------------------------------------------------


def check_history_item(item: dict[str, Any], truth: Truth) -> None:
    """A history item holds public facts only: no hand, no pick, no seed, no score before the
    end."""
    text = json.dumps(item)
    check_no_seed(text, truth)
    check_no_secret_hands(item, None, truth, set())  # not even the viewer's own hand
    assert not {"hand", "hands", "pick", "picks", "cards", "seed"} & set(item)
    for seat in item["seats"]:
        assert set(seat) == {"seat", "name", "bot", "account_id"}
    if not truth.over:
        assert item["totals"] is None and item["winners"] is None and item["result"] is None


def test_nothing_leaks_through_an_account_history(api: ApiClient, store: EventStore) -> None:
    """The history page and the JSON Lines export, read by the account that sits in the game
    (its token with history:read) and by anybody, after every pick of a whole game."""
    created = api.post("/accounts", {"name": f"leak{rng_name()}"}, token=None)
    expect_status(created, 201)
    account = created.json()
    view = api.create_game(3, edition="zoch")
    table = Table(api, view["game_id"], view["rules"])
    joined = api.post(f"/games/{table.game_id}/players", {}, token=account["token"])
    expect_status(joined, 201)
    table.players.append(Player(0, account["name"], account["token"], api.clone(account["token"])))
    for seat in (1, 2):
        granted = api.join(table.game_id, f"p{seat}{rng_name()}")
        table.players.append(
            Player(seat, granted["name"], granted["token"], api.clone(granted["token"]))
        )
    path = f"/accounts/{account['account_id']}/games"
    readings = 0

    def check(*_: Any) -> None:
        nonlocal readings
        truth = Truth.read(store, table.game_id)
        for token in (account["token"], None):
            page = api.get(path, token=token)
            expect_status(page, 200)
            (item,) = page.json()["games"]
            check_history_item(item, truth)
            export = api.get(path, token=token, headers={"Accept": "application/x-ndjson"})
            expect_status(export, 200)
            (line,) = [json.loads(text) for text in export.text.splitlines()]
            check_history_item(line, truth)
            readings += 2

    try:
        check()
        play_to_end(table, random.Random("history-leaks"), after_move=check)
        check()
    finally:
        table.close()
    assert readings > 20
    final = api.get(path).json()["games"][0]
    assert final["status"] == "over" and final["winners"]  # after the end: the result is public
