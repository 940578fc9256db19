"""Private games (issue 20): not listed, joined only with the invitation returned once at
creation, which the creator's token revokes or replaces; the secrets are never in the events,
the export or the audit. Over HTTP, on both games."""

from __future__ import annotations

import hashlib
import threading
import uuid
from datetime import datetime
from typing import Any

import psycopg
import pytest
from api_client import ApiClient, expect_problem, expect_status, wait_until

from service.store import invitations
from service.store.events import GameCursor

pytest_plugins = ["api_fixtures"]

GAMES = ["sushi-go", "sequence"]


def _create(api: ApiClient, game: str, **extra: Any) -> dict[str, Any]:
    response = api.post("/games", {"game": game, "players": 2, **extra})
    expect_status(response, 201)
    return response.json()


def _join(api: ApiClient, game_id: str, name: str, invitation: str | None = None) -> Any:
    body = {"name": name} if invitation is None else {"name": name, "invitation": invitation}
    return api.post(f"/games/{game_id}/players", body)


@pytest.mark.parametrize("game", GAMES)
def test_a_private_game_is_joined_with_its_invitation_only(api: ApiClient, game: str) -> None:
    created = _create(api, game, visibility="private")
    gid, invitation = created["game_id"], created["invitation"]
    assert created["visibility"] == "private"
    assert len(invitation["token"]) >= 32 and len(invitation["creator_token"]) >= 32
    assert invitation["link"] == f"/#/game/{gid}?invitation={invitation['token']}"
    expect_problem(_join(api, gid, "Ann"), 403, "invitation_required")
    expect_problem(_join(api, gid, "Ann", invitation["creator_token"]), 403, "invalid_invitation")
    expect_problem(_join(api, gid, "Ann", "x" * 43), 403, "invalid_invitation")
    assert api.game(gid)["version"] == 1  # nothing recorded
    granted = _join(api, gid, "Ann", invitation["token"])
    expect_status(granted, 201)
    view = api.game(gid)
    assert view["visibility"] == "private" and "invitation" not in view  # shown once only
    expect_status(_join(api, gid, "Bob", invitation["token"]), 201)
    assert api.game(gid)["status"] == "playing"


@pytest.mark.parametrize("game", GAMES)
def test_a_public_game_needs_no_invitation(api: ApiClient, game: str) -> None:
    created = _create(api, game)
    assert created["visibility"] == "public" and "invitation" not in created
    expect_status(_join(api, created["game_id"], "Ann", "anything"), 201)  # ignored


@pytest.mark.parametrize("game", GAMES)
def test_private_games_are_listed_only_by_id(api: ApiClient, game: str) -> None:
    private = _create(api, game, visibility="private")
    public = _create(api, game)
    both = api.get("/games", params={"ids": f"{private['game_id']},{public['game_id']}"}).json()[
        "games"
    ]
    by_id = {g["game_id"]: g for g in both}
    assert by_id[private["game_id"]]["visibility"] == "private"
    assert by_id[public["game_id"]]["visibility"] == "public"
    # Every game listed from just before the private one on (games of other tests too).
    start = datetime.fromisoformat(by_id[private["game_id"]]["created_at"])
    after = GameCursor(start, uuid.UUID(int=0)).encode()
    for query in ({}, {"status": "waiting"}, {"game": game}):
        response = api.get("/games", params={"after": after, "limit": 100, **query})
        listed = [g["game_id"] for g in response.json()["games"]]
        assert public["game_id"] in listed and private["game_id"] not in listed, query
    newest = api.get("/games", params={"order": "newest", "limit": 100}).json()["games"]
    assert private["game_id"] not in [g["game_id"] for g in newest]


@pytest.mark.parametrize("game", GAMES)
def test_the_creator_revokes_and_replaces_the_invitation(api: ApiClient, game: str) -> None:
    created = _create(api, game, visibility="private")
    gid, first = created["game_id"], created["invitation"]
    creator = first["creator_token"]
    path = f"/games/{gid}/invitation"
    expect_problem(api.request("DELETE", path, request_valid=False), 401, "missing_token")
    expect_problem(api.request("DELETE", path, token=first["token"]), 403, "not_the_creator")
    expect_status(api.request("DELETE", path, token=creator), 204)
    expect_status(api.request("DELETE", path, token=creator), 204)  # already revoked: no change
    expect_problem(_join(api, gid, "Ann", first["token"]), 403, "invalid_invitation")
    renewed = api.post(path, None, token=creator)
    expect_status(renewed, 201)
    second = renewed.json()["invitation"]
    assert renewed.json()["game_id"] == gid and "creator_token" not in second
    assert second["token"] != first["token"]
    expect_problem(_join(api, gid, "Ann", first["token"]), 403, "invalid_invitation")
    expect_status(_join(api, gid, "Ann", second["token"]), 201)
    third = api.post(path, None, token=creator).json()["invitation"]
    expect_problem(_join(api, gid, "Bob", second["token"]), 403, "invalid_invitation")
    expect_status(_join(api, gid, "Bob", third["token"]), 201)  # Ann's seat stayed hers


@pytest.mark.parametrize("method", ["DELETE", "POST"])
def test_a_token_that_is_no_token_is_401_and_one_not_the_creators_403(
    api: ApiClient, method: str
) -> None:
    """Changing the invitation tells an invalid token (401 ``invalid_token``, as every other
    authenticated route does) from a valid one that is not the creator's (403)."""
    created = _create(api, "sushi-go", visibility="private")
    gid, invitation = created["game_id"], created["invitation"]
    path = f"/games/{gid}/invitation"
    seat = _join(api, gid, "Ann", invitation["token"]).json()["token"]
    public = _create(api, "sushi-go")["game_id"]
    elsewhere = _join(api, public, "Bob").json()["token"]
    name = f"acct{uuid.uuid4().hex[:12]}"
    account = api.post("/accounts", {"name": name}, token=None).json()["token"]
    invalid = ("x" * 43, invitation["creator_token"] + "x", "cardroom_pat_" + "x" * 43)
    for token in invalid:
        refused = api.request(method, path, token=token)
        expect_problem(refused, 401, "invalid_token")
        assert refused.headers["WWW-Authenticate"] == 'Bearer error="invalid_token"', token
    for token in (seat, elsewhere, account, invitation["token"]):
        expect_problem(api.request(method, path, token=token), 403, "not_the_creator")
    expect_status(
        api.request(method, path, token=invitation["creator_token"]),
        {"DELETE": 204, "POST": 201}[method],
    )


def test_a_join_racing_the_revocation_of_its_invitation_is_refused(
    api: ApiClient, database_url: str
) -> None:
    """A join checks the invitation, then decides, then appends: a revocation committed in
    between must not let it through. Injected: a revocation held open (the lock a change of
    the invitation takes, and its row written) while the join comes; the join waits for it,
    then finds the invitation revoked. Without the lock the join took a seat."""
    created = _create(api, "sushi-go", visibility="private")
    gid, token = created["game_id"], created["invitation"]["token"]
    answers: list[Any] = []
    joining = threading.Thread(target=lambda: answers.append(_join(api.clone(), gid, "Ann", token)))
    with psycopg.connect(database_url, autocommit=True) as revoking, revoking.transaction():
        revoking.execute(invitations.LOCK_EXCLUSIVE, invitations.lock_key(uuid.UUID(gid)))
        revoking.execute(
            "INSERT INTO invitations (game_id, serial, token_hash)"
            " SELECT %(g)s, max(serial) + 1, NULL FROM invitations WHERE game_id = %(g)s",
            {"g": gid},
        )
        joining.start()
        wait_until(lambda: bool(answers) or _waits_for_advisory_lock(database_url), 10.0)
    joining.join(30)
    (answer,) = answers
    expect_problem(answer, 403, "invalid_invitation")
    view = api.game(gid)
    assert view["version"] == 1 and all(seat["name"] is None for seat in view["seats"])


def _waits_for_advisory_lock(database_url: str) -> bool:
    with psycopg.connect(database_url) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
            " AND classid = %s"
            " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
            (invitations.lock_key(uuid.uuid4())[0],),
        ).fetchone()
    return bool(row and row[0])


def test_a_public_game_has_no_invitation_to_change(api: ApiClient) -> None:
    created = _create(api, "sequence")
    path = f"/games/{created['game_id']}/invitation"
    expect_problem(api.request("DELETE", path, token="x" * 43), 409, "game_not_private")
    expect_problem(api.post(path, None, token="x" * 43), 409, "game_not_private")
    missing = api.request("DELETE", f"/games/{uuid.uuid4()}/invitation", token="x" * 43)
    expect_problem(missing, 404, "game_not_found")


@pytest.mark.parametrize("game", GAMES)
def test_a_retried_create_shows_the_same_invitation(api: ApiClient, game: str) -> None:
    key = {"Idempotency-Key": str(uuid.uuid4())}
    body = {"game": game, "players": 2, "visibility": "private"}
    first = api.post("/games", body, headers=key)
    again = api.post("/games", body, headers=key)
    expect_status(again, 201)
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json()["invitation"] == first.json()["invitation"]
    expect_status(
        _join(api, first.json()["game_id"], "Ann", again.json()["invitation"]["token"]), 201
    )


@pytest.mark.parametrize("game", GAMES)
def test_the_secrets_are_in_no_event_export_or_audit(api: ApiClient, game: str) -> None:
    bots = [{"seat": 1, "kind": "greedy"}]
    created = _create(api, game, visibility="private", bots=bots)
    gid, invitation = created["game_id"], created["invitation"]
    granted = _join(api, gid, "Ann", invitation["token"]).json()
    seat = api.clone(token=granted["token"])
    while (view := seat.game(gid))["status"] == "playing":  # play it out: export and audit
        if game == "sushi-go":
            move = {"round": view["round"], "turn": view["turn"], "cards": view["you"]["hand"][:1]}
        else:
            move = _sequence_move(view)
        expect_status(seat.post(f"/games/{gid}/moves", move), 200)
    secrets = [invitation["token"], invitation["creator_token"]]
    secrets += [hashlib.sha256(s.encode()).hexdigest() for s in secrets]
    export = api.get(f"/games/{gid}/export")
    expect_status(export, 200)
    audit = api.get(f"/games/{gid}/audit")
    expect_status(audit, 200)
    assert audit.json()["ok"] is True
    texts = [export.text, audit.text, api.get(f"/games/{gid}/events").text]
    for text in texts:
        for secret in secrets:
            assert secret not in text
    seat.close()


def _sequence_move(view: dict[str, Any]) -> dict[str, Any]:
    """Seat 0's first legal play (a pass if none: Q8)."""
    for play in view["you"]["plays"]:
        if play["cells"]:
            cell = play["cells"][0]
            return {"turn": view["turn"], "card": play["card"], "cell": cell}
    return {"turn": view["turn"], "pass": True}


def test_a_retried_new_invitation_is_the_same_one(api: ApiClient) -> None:
    created = _create(api, "sushi-go", visibility="private")
    gid, creator = created["game_id"], created["invitation"]["creator_token"]
    key = {"Idempotency-Key": str(uuid.uuid4())}
    first = api.post(f"/games/{gid}/invitation", None, token=creator, headers=key)
    again = api.post(f"/games/{gid}/invitation", None, token=creator, headers=key)
    expect_status(again, 201)
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
    expect_status(_join(api, gid, "Ann", again.json()["invitation"]["token"]), 201)


@pytest.mark.parametrize("game", GAMES)
def test_a_page_can_tell_a_revoked_or_replaced_invitation(api: ApiClient, game: str) -> None:
    """GET /games/{id}/invitation (issue 39, item 11): a page holding a link asks whether it
    still works before it offers "Copy link"; the creator's token tells whether one is in force."""
    created = _create(api, game, visibility="private")
    gid, first = created["game_id"], created["invitation"]
    path, creator = f"/games/{gid}/invitation", first["creator_token"]
    assert api.get(path, token=first["token"]).json() == {"game_id": gid, "active": True}
    assert api.get(path, token=creator).json()["active"] is True
    expect_status(api.request("DELETE", path, token=creator), 204)
    expect_problem(api.get(path, token=first["token"]), 403, "invalid_invitation")
    assert api.get(path, token=creator).json() == {"game_id": gid, "active": False}
    second = api.post(path, None, token=creator).json()["invitation"]
    expect_problem(api.get(path, token=first["token"]), 403, "invalid_invitation")
    assert api.get(path, token=second["token"]).json()["active"] is True
    assert api.get(path, token=creator).json()["active"] is True
    expect_problem(api.get(path, token="x" * 43), 403, "invalid_invitation")
    missing = api.get(path, token=None, request_valid=False)
    expect_problem(missing, 401, "missing_token")
    assert missing.headers["WWW-Authenticate"] == "Bearer"
    public = _create(api, game)["game_id"]
    expect_problem(api.get(f"/games/{public}/invitation", token="x" * 43), 409, "game_not_private")
    unknown = api.get(f"/games/{uuid.uuid4()}/invitation", token="x" * 43)
    expect_problem(unknown, 404, "game_not_found")
