"""Webhooks (issue 36): registration with verification, each event type delivered and signed,
order per game through failures, the retry schedule, Retry-After, 410, giving up, disabling
after days of failures, redelivery with the same webhook-id, the delivery log and its purge.

The API runs in-process (the real app over HTTP); the receiver is a real HTTP server on
loopback (pytest-httpserver); delivery runs in the test's thread (``Deliverer.deliver_due``),
so that each step is the test's to drive. tests/test_webhooks_processes.py runs delivery in
``cardroom serve`` and ``cardroom deliver`` processes, and kills them."""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from typing import Any

import own_database
import psycopg
import pytest
from api_client import (
    ApiClient,
    Player,
    Table,
    expect_problem,
    expect_status,
    play_to_end,
    random_move,
    wait_until,
)
from patience import scaled
from psycopg_pool import ConnectionPool
from pytest_httpserver import HTTPServer
from standardwebhooks.webhooks import WebhookVerificationError
from webhook_support import SETTINGS, Received, Receiver, receiving, verify_both

from service import keys as service_keys
from service.store import webhooks as store
from service.webhooks.deliver import Deliverer, Options, Schedule

pytest_plugins = ["api_fixtures"]
WAIT = scaled(30.0)

# A database of its own: the `cardroom serve` processes other modules start deliver webhooks
# too (with their own settings), and must not meet these endpoints.
database_url = own_database.database_url
pool = own_database.pool
live_server = own_database.live_server


@pytest.fixture(scope="module")
def hooks_server() -> Iterator[HTTPServer]:
    yield from receiving()


@pytest.fixture(autouse=True)
def insecure(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in SETTINGS.items():
        monkeypatch.setenv(name, value)


def deliverer(pool: ConnectionPool, **options: Any) -> Deliverer:
    chosen = Options(timeout=1.0, disable_after=3600.0, insecure=True, poll=0.1)
    for name, value in options.items():
        setattr(chosen, name, value)
    schedule = Schedule((0.05, 0.05, 0.05), 0.0, random.Random(7))
    return Deliverer(pool, service_keys.load, schedule=schedule, options=chosen)


def register(client: ApiClient, path: str, receiver: Receiver, **body: Any) -> dict[str, Any]:
    response = client.post(path, {"url": receiver.url, **body})
    expect_status(response, 201)
    return dict(response.json())


def drain(sender: Deliverer, hook: dict[str, Any], until: Any, seconds: float = WAIT) -> None:
    """Deliver to ``hook`` until ``until()`` holds (retries come due every 50 ms). (Only to it:
    the other tests' endpoints, in the same database, are theirs to deliver.)"""
    only = [uuid.UUID(hook["webhook_id"])]
    wait_until(lambda: sender.deliver_due(only=only) >= 0 and until(), seconds)


@pytest.fixture
def table(api: ApiClient) -> Iterator[Table]:
    """A 2-player Sushi Go! game, both seats taken: it has started."""
    opened = Table.open(api, 2)
    yield opened
    opened.close()


def test_registration_verifies_the_url_and_shows_the_secret_once(
    api: ApiClient, table: Table, hooks_server: Any
) -> None:
    receiver = Receiver(hooks_server)
    seat = table.players[0].client
    created = register(seat, f"{table.path}/webhooks", receiver)
    assert created["secret"].startswith("whsec_") and created["status"] == "active"
    assert created["seat"] == 0 and created["game_id"] == table.game_id
    assert created["events"] == ["game.started", "game.turn", "game.finished", "game.rematch"]
    assert [c.type for c in receiver.challenges] == ["webhook.verify"]
    jwks = api.get("/.well-known/cardroom-keys").json()
    verify_both(receiver.challenges[0], created["secret"], jwks)
    listed = seat.get(f"{table.path}/webhooks").json()["webhooks"]
    assert [w["webhook_id"] for w in listed] == [created["webhook_id"]]
    assert "secret" not in listed[0]
    one = seat.get(created["links"]["self"]).json()
    assert "secret" not in one and one["url"] == receiver.url
    # Another seat sees none of seat 0's endpoints; a stranger's token is refused.
    other = table.players[1].client
    assert other.get(f"{table.path}/webhooks").json()["webhooks"] == []
    expect_problem(other.get(created["links"]["self"]), 404, "webhook_not_found")
    expect_problem(api.get(f"{table.path}/webhooks", request_valid=False), 401, "missing_token")


def test_a_url_that_does_not_echo_its_challenge_is_not_registered(
    table: Table, hooks_server: Any
) -> None:
    receiver = Receiver(hooks_server, echo=False)
    seat = table.players[0].client
    problem = expect_problem(
        seat.post(f"{table.path}/webhooks", {"url": receiver.url}),
        422,
        "webhook_verification_failed",
    )
    assert "challenge" in problem["detail"]
    assert seat.get(f"{table.path}/webhooks").json()["webhooks"] == []


def test_plain_http_and_loopback_are_refused_outside_the_development_setting(
    table: Table, hooks_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CARDROOM_WEBHOOKS_INSECURE", "0")
    receiver = Receiver(hooks_server)
    seat = table.players[0].client
    expect_problem(
        seat.post(f"{table.path}/webhooks", {"url": receiver.url}), 422, "webhook_url_refused"
    )
    assert receiver.challenges == []  # refused before any packet


def test_at_most_five_endpoints_a_game(table: Table, hooks_server: Any) -> None:
    receiver = Receiver(hooks_server)
    for player in (table.players[0], table.players[1], table.players[0]):
        register(player.client, f"{table.path}/webhooks", receiver)
    register(table.players[1].client, f"{table.path}/webhooks", receiver)
    register(table.players[1].client, f"{table.path}/webhooks", receiver)
    problem = expect_problem(
        table.players[0].client.post(f"{table.path}/webhooks", {"url": receiver.url}),
        409,
        "too_many_webhooks",
    )
    assert problem["errors"] == {"limit": 5}
    assert len(receiver.challenges) == 5  # the sixth was refused before its verification


def test_a_seats_endpoint_hears_its_game_in_order_signed_and_thin(
    api: ApiClient, pool: ConnectionPool, hooks_server: Any
) -> None:
    """game.started, the seat's own turns, game.finished, game.rematch: in version order, each
    passing v1 (standardwebhooks) and v1a (the published key alone), no hand in any body."""
    game = api.create_game(2)["game_id"]
    first = api.join(game, "Wanda")
    seat = api.clone(token=first["token"])
    receiver = Receiver(hooks_server)
    created = register(seat, f"/games/{game}/webhooks", receiver)
    second = api.join(game, "Xavier")
    table = Table(api, game, {})
    table.players = [
        Player(0, "Wanda", first["token"], seat),
        Player(1, "Xavier", second["token"], api.clone(token=second["token"])),
    ]
    play_to_end(table, random.Random(3))
    expect_status(seat.post(f"/games/{game}/rematch", {}), 201)
    sender = deliverer(pool)
    final = api.game(game)["version"]
    drain(sender, created, lambda: any(r.type == "game.rematch" for r in receiver.snapshot()))
    got = receiver.snapshot()
    types = [r.type for r in got]
    assert types[0] == "game.started" and types[-2:] == ["game.finished", "game.rematch"]
    turns = [r for r in got if r.type == "game.turn"]
    assert len(turns) >= 3 and all(r.data["your_turn"] and r.data["seat"] == 0 for r in turns)
    versions = [r.data["version"] for r in got]
    assert versions == sorted(versions) and versions[-1] == final
    assert len({r.id for r in got}) == len(got)  # one delivery each: nothing failed
    jwks = api.get("/.well-known/cardroom-keys").json()
    for received in got:
        verify_both(received, created["secret"], jwks)
        assert "hand" not in received.body.decode() and received.data["game_id"] == game
    tampered = got[0].body.replace(b"game.started", b"game.startex")
    forged = Received(got[0].id, got[0].timestamp, got[0].signature, tampered, 0.0)
    with pytest.raises(WebhookVerificationError):  # one byte changed: v1 fails (v1a below)
        verify_both(forged, created["secret"], jwks)


def test_the_creator_hears_every_turn_with_the_seats_it_waits_for(
    api: ApiClient, pool: ConnectionPool, hooks_server: Any
) -> None:
    created = api.post("/games", {"game": "sequence", "players": 2, "visibility": "private"})
    expect_status(created, 201)
    game, invitation = created.json()["game_id"], created.json()["invitation"]
    creator = api.clone(token=invitation["creator_token"])
    receiver = Receiver(hooks_server)
    hook = register(creator, f"/games/{game}/webhooks", receiver)
    assert hook["seat"] is None
    for name in ("Yara", "Zeno"):
        joined = api.post(
            f"/games/{game}/players", {"name": name, "invitation": invitation["token"]}
        )
        expect_status(joined, 201)
    sender = deliverer(pool)
    drain(sender, hook, lambda: [r.type for r in receiver.snapshot()][-1:] == ["game.turn"])
    got = receiver.snapshot()
    assert [r.type for r in got] == ["game.started", "game.turn"]
    assert got[1].data["seats"] in ([0], [1])  # Sequence waits for one seat at a time
    assert "your_turn" not in got[1].data


def test_an_account_endpoint_hears_challenges_and_its_games(
    api: ApiClient, pool: ConnectionPool, hooks_server: Any
) -> None:
    ada, bob = (
        api.post("/accounts", {"name": f"hook{uuid.uuid4().hex[:10]}"}, token=None).json()
        for _ in range(2)
    )
    receiver = Receiver(hooks_server)
    bobs = api.clone(token=bob["token"])
    hook = register(bobs, "/accounts/me/webhooks", receiver)
    assert hook["account_id"] == bob["account_id"] and "challenge.received" in hook["events"]
    offered = api.post(
        f"/accounts/{bob['account_id']}/challenges",
        {"game": "sushi-go", "players": 2},
        token=ada["token"],
    )
    expect_status(offered, 201)
    challenge = offered.json()["challenge_id"]
    expect_status(bobs.post(f"/challenges/{challenge}/accept", {}), 201)
    sender = deliverer(pool)
    drain(sender, hook, lambda: "game.turn" in [r.type for r in receiver.snapshot()])
    got = receiver.snapshot()
    types = [r.type for r in got]
    assert types[0] == "challenge.received" and got[0].data["challenge_id"] == challenge
    assert got[0].data["links"]["challenge"] == f"/challenges/{challenge}"
    assert "game.started" in types and types.index("game.started") < types.index("game.turn")
    # Ada's account has no endpoint: nothing for her; the limit's problem names its number.
    assert all(r.data["account_id"] == bob["account_id"] for r in got)
    anonymous = api.post("/accounts/me/webhooks", {"url": receiver.url}, request_valid=False)
    expect_problem(anonymous, 401, "missing_token")


def test_failures_are_retried_in_order_with_the_same_webhook_id(
    api: ApiClient, table: Table, pool: ConnectionPool, hooks_server: Any
) -> None:
    """Each message fails twice, then passes: the endpoint waits for it (head of line), so the
    receiver's successes come in version order; every retry carries the same webhook-id."""
    tries: dict[str, int] = {}

    def flaky(received: Any) -> int:
        tries[received.id] = tries.get(received.id, 0) + 1
        return 500 if tries[received.id] <= 2 else 200

    receiver = Receiver(hooks_server, answer=flaky)
    seat = table.players[0].client
    hook = register(seat, f"{table.path}/webhooks", receiver)
    for _ in range(3):
        view = seat.game(table.game_id)
        seat.move(table.game_id, random_move(view, random.Random(1)))
        other = table.players[1].client
        other.move(table.game_id, random_move(other.game(table.game_id), random.Random(2)))
    sender = deliverer(pool)
    drain(sender, hook, lambda: len(receiver.delivered()) >= 3)
    delivered = receiver.delivered()
    versions = [r.data["version"] for r in delivered]
    assert versions == sorted(versions)
    for received in delivered:
        assert [r.status for r in receiver.snapshot() if r.id == received.id] == [500, 500, 200]
    log = seat.get(f"{table.path}/webhooks").json()["webhooks"][0]["links"]["deliveries"]
    attempts = seat.get(log).json()["deliveries"]
    first = [a for a in attempts if a["webhook_id"] == delivered[0].id]
    assert sorted((a["attempt"], a["outcome"]) for a in first) == [
        (1, "failed"),
        (2, "failed"),
        (3, "delivered"),
    ]


def test_a_failure_after_a_success_in_one_claim_keeps_the_success(
    api: ApiClient, pool: ConnectionPool, hooks_server: Any, owner_connection: Any
) -> None:
    """One claim delivers a message, then the next fails: the checkpoint stays past the first
    (bench/webhooks.py found it going back to the claim's start, every success posted again)."""
    answers = iter([200, 500])
    receiver = Receiver(hooks_server, answer=lambda received: next(answers, 200))
    body = {"game": "sushi-go", "players": 2, "bots": [{"seat": 1, "kind": "greedy"}]}
    game = api.post("/games", body).json()["game_id"]
    seat = api.clone(token=api.join(game, "Quinn")["token"])
    hook = register(seat, f"/games/{game}/webhooks", receiver)
    for number in range(2):  # each pick opens the next turn in its own append (the bot's too)
        seat.move(game, random_move(seat.game(game), random.Random(number)))
    assert deliverer(pool).deliver_due(only=[uuid.UUID(hook["webhook_id"])]) == 1
    first, second = receiver.snapshot()
    assert (first.status, second.status) == (200, 500)
    done = owner_connection.execute(
        "SELECT done_version FROM webhook_endpoints WHERE id = %s", (hook["webhook_id"],)
    ).fetchone()[0]
    assert done == first.data["version"] < second.data["version"]


def test_a_claims_last_record_gives_its_lease_up(
    api: ApiClient,
    pool: ConnectionPool,
    hooks_server: Any,
    owner_connection: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The record of a claim's last attempt frees the endpoint in its own transaction, whether
    the message went or failed: no release after it (one transaction a message fewer), and the
    endpoint is free at once for the next claim."""
    answers = iter([200, 200, 500])
    receiver = Receiver(hooks_server, answer=lambda received: next(answers, 200))
    body = {"game": "sushi-go", "players": 2, "bots": [{"seat": 1, "kind": "greedy"}]}
    game = api.post("/games", body).json()["game_id"]
    seat = api.clone(token=api.join(game, "Rowan")["token"])
    hook = register(seat, f"/games/{game}/webhooks", receiver)
    only = [uuid.UUID(hook["webhook_id"])]
    releases: list[Any] = []
    release = store.release
    monkeypatch.setattr(store, "release", lambda *a: (releases.append(a), release(*a))[1])
    state = "SELECT lease, done_version, attempts FROM webhook_endpoints WHERE id = %s"
    sender = deliverer(pool)

    for number in range(2):  # each pick opens the next turn in its own append (the bot's too)
        seat.move(game, random_move(seat.game(game), random.Random(number)))
    assert sender.deliver_due(only=only) == 1  # one claim, both delivered
    lease, done, attempts = owner_connection.execute(state, (hook["webhook_id"],)).fetchone()
    assert [r.status for r in receiver.snapshot()] == [200, 200]
    assert (lease, done, attempts) == (None, receiver.snapshot()[1].data["version"], 0)

    seat.move(game, random_move(seat.game(game), random.Random(2)))
    assert sender.deliver_due(only=only) == 1  # this one fails: retried later
    lease, done_after, attempts = owner_connection.execute(state, (hook["webhook_id"],)).fetchone()
    assert [r.status for r in receiver.snapshot()][2:] == [500]
    assert (lease, done_after, attempts) == (None, done, 1)
    assert releases == []


def test_a_message_past_the_last_retry_is_given_up_and_the_next_goes(
    api: ApiClient, table: Table, pool: ConnectionPool, hooks_server: Any
) -> None:
    refused: list[str] = []

    def refuse_the_first(received: Any) -> int:
        if not refused:
            refused.append(received.id)
        return 500 if received.id == refused[0] else 200

    receiver = Receiver(hooks_server, answer=refuse_the_first)
    seat = table.players[0].client
    hook = register(seat, f"{table.path}/webhooks", receiver)
    _move_both(table)
    _move_both(table)
    drain(deliverer(pool), hook, lambda: len(receiver.delivered()) >= 1)
    failed = [r for r in receiver.snapshot() if r.status == 500]
    assert len(failed) == 4 and {r.id for r in failed} == set(refused)  # 1 + 3 retries
    attempts = seat.get(hook["links"]["deliveries"]).json()["deliveries"]
    assert [a["outcome"] for a in attempts if a["webhook_id"] == refused[0]][0] == "given_up"
    assert receiver.delivered()[0].data["version"] > failed[0].data["version"]


def test_retry_after_is_honoured(
    table: Table, pool: ConnectionPool, hooks_server: Any, owner_connection: Any
) -> None:
    receiver = Receiver(hooks_server, answer=lambda r: (503, {"Retry-After": "30"}))
    seat = table.players[0].client
    hook = register(seat, f"{table.path}/webhooks", receiver)
    _move_both(table)
    sender = deliverer(pool)
    sender.schedule = Schedule((0.05, 60.0), 0.0)  # Retry-After is capped by the last delay
    drain(sender, hook, lambda: len(receiver.snapshot()) >= 1)
    assert sender.deliver_due(only=[uuid.UUID(hook["webhook_id"])]) == 0  # not after 50 ms
    wait = owner_connection.execute(
        "SELECT extract(epoch FROM next_attempt_at - now()) FROM webhook_endpoints WHERE id = %s",
        (hook["webhook_id"],),
    ).fetchone()[0]
    assert 25 < wait <= 30
    view = seat.get(hook["links"]["self"]).json()
    assert view["retrying"] == 1 and view["failing_since"] is not None


def test_410_gone_disables_the_endpoint_and_enabling_resumes_it(
    table: Table, pool: ConnectionPool, hooks_server: Any
) -> None:
    gone = {"yes": True}
    receiver = Receiver(hooks_server, answer=lambda r: 410 if gone["yes"] else 200)
    seat = table.players[0].client
    hook = register(seat, f"{table.path}/webhooks", receiver)
    _move_both(table)
    sender = deliverer(pool)
    drain(sender, hook, lambda: len(receiver.snapshot()) >= 1)
    view = seat.get(hook["links"]["self"]).json()
    assert view["status"] == "disabled" and "410" in view["disabled_reason"]
    assert sender.deliver_due(only=[uuid.UUID(hook["webhook_id"])]) == 0
    assert len(receiver.snapshot()) == 1
    gone["yes"] = False
    enabled = seat.request("PATCH", hook["links"]["self"], json={"enabled": True})
    expect_status(enabled, 200)
    assert enabled.json()["status"] == "active" and enabled.json()["disabled_reason"] is None
    drain(sender, hook, lambda: len(receiver.delivered()) >= 1)
    assert receiver.delivered()[0].id == receiver.snapshot()[0].id  # the same message, resumed


def test_an_endpoint_failing_for_longer_than_the_limit_is_disabled_and_says_so(
    table: Table, pool: ConnectionPool, hooks_server: Any
) -> None:
    receiver = Receiver(hooks_server, answer=lambda r: 500)
    seat = table.players[0].client
    hook = register(seat, f"{table.path}/webhooks", receiver)
    _move_both(table)
    sender = deliverer(pool, disable_after=0.1)
    drain(sender, hook, lambda: seat.get(hook["links"]["self"]).json()["status"] == "disabled")
    reason = seat.get(hook["links"]["self"]).json()["disabled_reason"]
    assert reason.startswith("every attempt failed since") and "enable it" in reason


def test_redelivery_keeps_the_webhook_id(
    table: Table, pool: ConnectionPool, hooks_server: Any
) -> None:
    receiver = Receiver(hooks_server)
    seat = table.players[0].client
    hook = register(seat, f"{table.path}/webhooks", receiver)
    _move_both(table)
    drain(deliverer(pool), hook, lambda: len(receiver.snapshot()) >= 1)
    attempt = seat.get(hook["links"]["deliveries"]).json()["deliveries"][-1]
    again = seat.post(attempt["links"]["redeliver"], {})
    expect_status(again, 200)
    assert (
        again.json()["outcome"] == "redelivered"
        and again.json()["webhook_id"] == attempt["webhook_id"]
    )
    assert [r.id for r in receiver.snapshot()].count(attempt["webhook_id"]) == 2
    expect_problem(
        seat.post(f"{hook['links']['deliveries']}/{uuid.uuid4()}/redeliver", {}),
        404,
        "delivery_not_found",
    )


def test_update_and_delete(table: Table, hooks_server: Any) -> None:
    receiver, moved = Receiver(hooks_server), Receiver(hooks_server)
    seat = table.players[0].client
    hook = register(seat, f"{table.path}/webhooks", receiver)
    changed = seat.request(
        "PATCH", hook["links"]["self"], json={"url": moved.url, "events": ["game.finished"]}
    )
    expect_status(changed, 200)
    assert changed.json()["url"] == moved.url and changed.json()["events"] == ["game.finished"]
    assert len(moved.challenges) == 1  # a new URL is verified again
    refused = seat.request("PATCH", hook["links"]["self"], json={"events": ["challenge.received"]})
    expect_problem(refused, 400, "invalid_request")
    disabled = seat.request("PATCH", hook["links"]["self"], json={"enabled": False})
    assert disabled.json()["disabled_reason"] == "disabled by its owner"
    expect_status(seat.request("DELETE", hook["links"]["self"]), 204)
    expect_problem(seat.get(hook["links"]["self"]), 404, "webhook_not_found")


def test_the_delivery_log_is_purged_after_three_days(
    table: Table, pool: ConnectionPool, hooks_server: Any, owner_connection: psycopg.Connection[Any]
) -> None:
    receiver = Receiver(hooks_server)
    seat = table.players[0].client
    hook = register(seat, f"{table.path}/webhooks", receiver)
    _move_both(table)
    drain(deliverer(pool), hook, lambda: len(receiver.snapshot()) >= 1)
    owner_connection.execute(
        "UPDATE webhook_deliveries SET created_at = now() - interval '73 hours'"
        " WHERE endpoint_id = %s",
        (hook["webhook_id"],),
    )
    with pool.connection() as conn:
        while store.purge(conn):
            pass
    assert seat.get(hook["links"]["deliveries"]).json()["deliveries"] == []


def test_readyz_names_the_development_setting(
    pool: ConnectionPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from api_client import serving_app

    from service.http.app import create_app

    with serving_app(create_app(pool=pool)) as server, ApiClient(server.url) as client:
        checks = client.get("/readyz").json()["checks"]
    assert "CARDROOM_WEBHOOKS_INSECURE" in checks["webhooks_insecure"]
    monkeypatch.setenv("CARDROOM_WEBHOOKS_INSECURE", "0")
    with serving_app(create_app(pool=pool)) as server, ApiClient(server.url) as client:
        assert "webhooks_insecure" not in client.get("/readyz").json()["checks"]


def _move_both(table: Table) -> None:
    """Each seat picks once: the next turn opens (a game.turn for each seat)."""
    for number, player in enumerate(table.players):
        view = player.client.game(table.game_id)
        player.client.move(table.game_id, random_move(view, random.Random(number)))
