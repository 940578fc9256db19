"""Sequence over HTTP, end to end: complete games of a 3-team and a 2-team table played by a
small legal-move client that sees only its own view, every request and response checked against
openapi.yaml; then the audit of each finished game; and turn order refused with 409."""

from __future__ import annotations

import random
from typing import Any

import pytest
from api_client import ApiClient, Player, Table, expect_problem, seed_matches

pytest_plugins = ["api_fixtures"]

TWO_EYED = {"JD", "JC"}
ONE_EYED = {"JH", "JS"}
DIRECTIONS = ((0, 1), (1, 0), (1, 1), (1, -1))


# --- a legal-move client, from a seat's view alone ----------------------------------------------


def targets(view: dict[str, Any], card: str) -> list[list[int]]:
    """The cells ``card`` may go to (Q6, Q10, Q11), read from the public board and chips."""
    board, chips, team = view["board"], view["chips"], view["you"]["team"]
    cells = [[r, c] for r in range(10) for c in range(10)]
    if card in ONE_EYED:
        locked = {tuple(cell) for run in view["sequences"] for cell in run["cells"]}
        if view["rules"]["advanced_jacks"]:
            locked = set()
        return [
            [r, c]
            for r, c in cells
            if chips[r][c] is not None and chips[r][c] != team and (r, c) not in locked
        ]
    if card in TWO_EYED:
        return [[r, c] for r, c in cells if chips[r][c] is None and board[r][c] != "XX"]
    return [[r, c] for r, c in cells if board[r][c] == card and chips[r][c] is None]


def line_value(view: dict[str, Any], cell: list[int], team: int) -> int:
    """How many of the team's chips (or corners) a chip on ``cell`` would line up with."""
    board, chips = view["board"], view["chips"]
    value = 0
    for dr, dc in DIRECTIONS:
        for sign in (1, -1):
            r, c = cell[0] + sign * dr, cell[1] + sign * dc
            while 0 <= r < 10 and 0 <= c < 10 and (chips[r][c] == team or board[r][c] == "XX"):
                value += 1
                r, c = r + sign * dr, c + sign * dc
    return value


def sequence_move(view: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """A legal move, mostly greedy (the chip that lines up best) so that games end soon."""
    you = view["you"]
    # The view's own list of legal cells agrees with this independent reading of the board.
    offered = {play["card"]: sorted(play["cells"]) for play in you["plays"]}
    assert offered == {card: sorted(targets(view, card)) for card in set(you["hand"])}
    if you["can_discard"] and rng.random() < 0.5:
        return {"discard": rng.choice(you["dead_cards"])}
    options = [(card, cell) for card in set(you["hand"]) for cell in targets(view, card)]
    if not options:
        return {"discard": you["dead_cards"][0]} if you["can_discard"] else {"pass": True}
    if rng.random() < 0.8:
        placing = [o for o in options if o[0] not in ONE_EYED] or options
        card, cell = max(placing, key=lambda o: (line_value(view, o[1], you["team"]), rng.random()))
    else:
        card, cell = rng.choice(options)
    body: dict[str, Any] = {"card": card, "cell": cell}
    if rng.random() < 0.1:
        body["seat"] = you["seat"]
    return body


def play_sequence(table: Table, rng: random.Random) -> int:
    """Play until the game is over; returns the number of moves sent. Every seat checks the
    public turn, so exactly one seat moves at a time (Q4)."""
    moves = 0
    view = table.api.game(table.game_id)
    while view["status"] != "over":
        assert view["status"] == "playing"
        player: Player = table.players[view["seat_to_move"]]
        mine = player.client.game(table.game_id)
        assert (
            mine["you"]["your_turn"]
            and len(mine["you"]["hand"]) == mine["seats"][player.seat]["hand_size"]
        )
        after = player.client.move(table.game_id, sequence_move(mine, rng))
        moves += 1
        assert moves < 2000, "no end (Q8/Q12)"
        view = after
    return moves


def check_finished(api: ApiClient, table: Table) -> dict[str, Any]:
    view = api.game(table.game_id)
    assert view["status"] == "over" and seed_matches(view["seed"], view["seed_commitment"])
    assert all("hand" in seat for seat in view["seats"])  # everything public once over
    sheet = api.scores(table.game_id)
    assert sheet["result"] == view["result"] and sheet["winners"] == view["winners"]
    if view["result"] == "win":
        team = view["winning_team"]
        assert sheet["teams"][team]["sequences"] >= view["to_win"]  # Q12
        assert view["winners"] == list(range(team, len(table.players), view["rules"]["teams"]))
    events = api.events(table.game_id, limit=500)
    assert events[-1]["type"] == "game_ended" and not any("redacted" in e["data"] for e in events)
    response = api.get(f"/games/{table.game_id}/audit")
    assert response.status_code == 200
    report = response.json()
    assert report["ok"], report
    assert report["game"] == "sequence" and report["winners"] == view["winners"]
    return view


@pytest.mark.parametrize(
    ("players", "rules", "seed"),
    [
        pytest.param(3, {"teams": 3}, 3, id="3-teams"),
        pytest.param(2, {}, 2, id="2-teams"),
        pytest.param(4, {"advanced_jacks": True}, 4, id="2-teams-of-2-advanced"),
    ],
)
def test_a_complete_game_and_its_audit(
    api: ApiClient, players: int, rules: dict[str, Any], seed: int
) -> None:
    table = Table.open(api, players, game="sequence", **rules)
    try:
        view = api.game(table.game_id)
        assert view["game"] == "sequence" and view["seat_to_move"] == 0 and view["turn"] == 1
        assert "you" not in view and all("hand" not in s for s in view["seats"])
        moves = play_sequence(table, random.Random(seed))
        assert moves > 10
        check_finished(api, table)
    finally:
        table.close()


def test_only_the_seat_to_move_may_move_and_hidden_cards_stay_hidden(api: ApiClient) -> None:
    table = Table.open(api, 2, game="sequence")
    try:
        other = table.players[1]
        mine = other.client.game(table.game_id)
        card = mine["you"]["hand"][0]
        cell = [0, 1] if card[0] == "J" else next(iter(targets(mine, card) or [[0, 1]]))
        response = other.client.post(
            f"{table.path}/moves", {"card": card, "cell": cell}, request_valid=True
        )
        problem = expect_problem(response, 409, "not_your_turn")
        assert problem["errors"] == {"turn": 1, "seat_to_move": 0}
        first = table.players[0]
        first.client.move(
            table.game_id, sequence_move(first.client.game(table.game_id), random.Random(1))
        )
        # seat 1 reads the log: its own hand, not seat 0's, nor the card seat 0 drew
        events = other.client.events(table.game_id)
        dealt = next(e for e in events if e["type"] == "cards_dealt")["data"]
        assert dealt["hands"][0] is None and dealt["hands"][1] == mine["you"]["hand"]
        played = next(e for e in events if e["type"] in ("card_played", "dead_card_discarded"))
        assert played["data"]["drawn"] is None and played["data"]["redacted"] == ["drawn"]
        response = table.api.post(f"{table.path}/moves", {"pass": False}, request_valid=False)
        assert response.status_code in (400, 401)
    finally:
        table.close()


def test_bots_play_sequence_and_the_audit_replays_them(api: ApiClient) -> None:
    """The built-in bots (domain.bots) play Sequence too: all-bot games end at creation."""
    body = {
        "game": "sequence",
        "players": 3,
        "bots": [{"seat": s, "kind": k} for s, k in enumerate(["greedy", "random", "greedy"])],
    }
    response = api.post("/games", body)
    assert response.status_code == 201, response.text
    view = response.json()
    assert view["status"] == "over" and [s["bot"] for s in view["seats"]] == [
        "greedy",
        "random",
        "greedy",
    ]
    report = api.get(f"/games/{view['game_id']}/audit").json()
    assert report["ok"], report
    moves = [e for e in api.events(view["game_id"], limit=500) if e["type"] == "card_played"]
    assert moves and all(e["data"]["by"] == "bot" for e in moves)
