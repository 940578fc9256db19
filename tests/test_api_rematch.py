"""``POST /games/{id}/rematch`` over HTTP (issue 29): the whole table in one new game, however
many players ask at once and on however many servers; announced by the finished game's view and
stream; private stays private; bots come back as bots; Idempotency-Key honoured."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import requests
from api_client import ApiClient, LiveServer, expect_problem, expect_status, serving
from patience import scaled
from psycopg_pool import ConnectionPool

pytest_plugins = ["api_fixtures"]

WAIT = scaled(20.0)


def finished(
    api: ApiClient, game: str = "sushi-go", players: int = 2, **extra: Any
) -> tuple[str, list[str]]:
    """A game whose people all resigned (the greedy bot played it to its end): its id and the
    people's tokens, by seat."""
    created = api.post("/games", {"game": game, "players": players, **extra})
    expect_status(created, 201)
    gid = created.json()["game_id"]
    invitation = created.json().get("invitation", {}).get("token")
    bots = {b["seat"] for b in extra.get("bots", [])}
    tokens = []
    for n in range(players - len(bots)):
        body = (
            {"name": f"P{n}"} if invitation is None else {"name": f"P{n}", "invitation": invitation}
        )
        joined = api.post(f"/games/{gid}/players", body)
        expect_status(joined, 201)
        tokens.append(joined.json()["token"])
    for token in tokens:
        expect_status(api.clone(token).post(f"/games/{gid}/resign"), 200)
    assert api.game(gid)["status"] == "over"
    return gid, tokens


def ask(base: str, gid: str, token: str | None, key: str | None = None) -> requests.Response:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    if key is not None:
        headers["Idempotency-Key"] = key
    return requests.post(f"{base}/games/{gid}/rematch", headers=headers, timeout=WAIT)


@pytest.mark.parametrize("game", ["sushi-go", "sequence"])
def test_every_player_who_asks_sits_in_the_one_rematch(api: ApiClient, game: str) -> None:
    gid, (ann, bob) = finished(api, game)
    first = api.clone(ann).post(f"/games/{gid}/rematch")
    expect_status(first, 201)
    granted = first.json()
    new = granted["game_id"]
    assert granted["rematch_of"] == gid and granted["name"] == "P0" and not granted["started"]
    view = api.game(gid)
    assert view["rematch"]["game_id"] == new and view["rematch"]["proposed_by"] == 0
    again = api.clone(bob).post(f"/games/{gid}/rematch")
    expect_status(again, 201)
    assert again.json()["game_id"] == new and again.json()["started"]
    rematch = api.game(new, token=again.json()["token"])
    assert rematch["status"] == "playing" and rematch["rules"] == view["rules"]
    assert sorted(s["name"] for s in rematch["seats"]) == ["P0", "P1"]
    assert "you" in rematch  # the answer's token is that seat's
    expect_problem(api.clone(ann).post(f"/games/{gid}/rematch"), 409, "already_in_rematch")


def test_no_rematch_before_the_end_nor_for_a_spectator(api: ApiClient) -> None:
    created = api.post("/games", {"game": "sushi-go", "players": 2}).json()
    token = api.post(f"/games/{created['game_id']}/players", {"name": "Al"}).json()["token"]
    expect_problem(
        api.clone(token).post(f"/games/{created['game_id']}/rematch"), 409, "game_not_over"
    )
    gid, _ = finished(api)
    expect_problem(api.post(f"/games/{gid}/rematch", request_valid=False), 401, "missing_token")
    assert "rematch" not in api.game(gid)  # nothing was proposed


@pytest.fixture(scope="module")
def second_host(pool: ConnectionPool) -> Iterator[LiveServer]:
    """Another server process on the same database: its own caches, its own hub."""
    with serving(pool) as server:
        yield server


def test_two_players_asking_at_once_on_two_hosts_share_one_game(
    api: ApiClient, live_server: LiveServer, second_host: LiveServer
) -> None:
    for _ in range(5):  # the race is real each time: two threads, two servers, one database
        gid, (ann, bob) = finished(api)
        barrier = threading.Barrier(2)
        answers: dict[str, requests.Response] = {}
        threads = [
            threading.Thread(target=_race, args=(barrier, answers, name, base, gid, token))
            for name, base, token in (("ann", live_server.url, ann), ("bob", second_host.url, bob))
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(WAIT)
        assert [answers[n].status_code for n in ("ann", "bob")] == [201, 201], answers
        games = {answers[n].json()["game_id"] for n in ("ann", "bob")}
        assert len(games) == 1  # one game, both seated
        (new,) = games
        assert api.game(new)["status"] == "playing"
        assert api.game(gid)["rematch"]["game_id"] == new


def _race(
    barrier: threading.Barrier,
    answers: dict[str, requests.Response],
    name: str,
    base: str,
    gid: str,
    token: str,
) -> None:
    barrier.wait(WAIT)
    answers[name] = ask(base, gid, token)


def test_bots_come_back_as_bots(api: ApiClient) -> None:
    bots = [{"seat": 1, "kind": "random", "name": "Rita"}, {"seat": 2, "kind": "greedy"}]
    gid, (token,) = finished(api, players=3, bots=bots, turn_seconds=60)
    granted = api.clone(token).post(f"/games/{gid}/rematch").json()
    assert granted["started"]  # the bots took their seats at once: the game is on
    view = api.game(granted["game_id"])
    before = api.game(gid)
    assert [(s["name"], s["bot"]) for s in view["seats"]] == [
        (s["name"], s["bot"]) for s in before["seats"]
    ]
    assert view["turn_deadline"]  # the same clock


def test_a_private_games_rematch_stays_private(api: ApiClient) -> None:
    gid, (ann, bob) = finished(api, visibility="private")
    granted = api.clone(ann).post(f"/games/{gid}/rematch").json()
    new = granted["game_id"]
    view = api.game(new)
    assert view["visibility"] == "private" and "invitation" not in granted
    listed = api.get("/games", params={"status": "waiting", "limit": 100}).json()["games"]
    assert new not in {g["game_id"] for g in listed}
    # Nobody else takes its free seat: there is no invitation to show.
    expect_problem(api.post(f"/games/{new}/players", {"name": "Eve"}), 403, "invitation_required")
    expect_status(api.clone(bob).post(f"/games/{gid}/rematch"), 201)
    assert api.game(new)["status"] == "playing"


def test_an_idempotency_key_gets_the_first_answer_again(
    api: ApiClient, live_server: LiveServer
) -> None:
    gid, (ann, _) = finished(api)
    key = str(uuid.uuid4())
    first = ask(live_server.url, gid, ann, key)
    expect_status(first, 201)
    again = ask(live_server.url, gid, ann, key)
    assert again.status_code == 201 and again.headers["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()  # the same seat and token
    expect_problem(ask(live_server.url, gid, ann), 409, "already_in_rematch")


def test_the_views_etag_changes_with_the_rematch(api: ApiClient) -> None:
    gid, (ann, _) = finished(api)
    tag = api.get(f"/games/{gid}").headers["ETag"]
    assert api.get(f"/games/{gid}", headers={"If-None-Match": tag}).status_code == 304
    expect_status(api.clone(ann).post(f"/games/{gid}/rematch"), 201)
    fresh = api.get(f"/games/{gid}", headers={"If-None-Match": tag})
    assert fresh.status_code == 200 and "rematch" in fresh.json()


# --- the stream announces it ---------------------------------------------------------------------


@contextmanager
def sse(base: str, gid: str, last_id: str, **params: str) -> Iterator[Iterator[dict[str, str]]]:
    response = requests.get(
        f"{base}/games/{gid}/stream",
        headers={"Accept": "text/event-stream", "Last-Event-ID": last_id},
        params=params,
        stream=True,
        timeout=WAIT,
    )
    try:
        yield _messages(response)
    finally:
        response.close()


def _messages(response: requests.Response) -> Iterator[dict[str, str]]:
    fields: dict[str, str] = {}
    for line in response.iter_lines(decode_unicode=True):
        if line.startswith(":") or line.startswith("retry:"):
            continue
        if line:
            name, _, value = line.partition(":")
            fields[name] = value.removeprefix(" ")
        elif fields:
            yield fields
            fields = {}


def test_a_followed_stream_announces_the_rematch_live(
    api: ApiClient, live_server: LiveServer, second_host: LiveServer
) -> None:
    gid, (ann, _) = finished(api)
    last = api.game(gid)["version"]
    assert api.get(f"/games/{gid}/stream", headers={"Last-Event-ID": str(last)}).status_code == 204
    with sse(live_server.url, gid, str(last), follow_rematch="true") as messages:
        proposer = threading.Timer(0.3, lambda: ask(second_host.url, gid, ann))  # another host
        proposer.start()
        message = next(messages)
        proposer.join()
    assert (message["event"], message["id"]) == ("rematch", f"{last}r")
    data = json.loads(message["data"])
    assert data["game_id"] == api.game(gid)["rematch"]["game_id"] and data["proposed_by"] == 0
    # Announced once: resuming after it, nothing is left (204); a stream that reaches the end
    # later gets it after game_ended, without asking to follow.
    done = api.get(f"/games/{gid}/stream", headers={"Last-Event-ID": f"{last}r"})
    assert done.status_code == 204
    with sse(live_server.url, gid, str(last - 1)) as messages:
        kinds = [(m["event"], m["id"]) for m in messages]
    assert kinds == [("game_ended", str(last)), ("rematch", f"{last}r")]
