"""``cardroom audit`` and ``cardroom replay`` on export files (offline: no server, no database)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from export_support import GAME_ID, edited, finished_export, rechain, to_jsonl, versions_of

from service.cli.main import main

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """good.jsonl, zoch.jsonl, tampered.jsonl (a round score raised and re-chained) and
    garbage.jsonl, in the current directory; a wide terminal so that no name wraps."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "200")
    good = finished_export("gamewright-4", 1)
    scored = versions_of(good, "round_scored", round=2)[0]

    def raise_score(record: dict) -> None:
        record["data"]["scores"][1]["total"] += 6
        record["data"]["scores"][1]["maki"]["points"] += 6

    contents = {
        "good.jsonl": to_jsonl(good),
        "zoch.jsonl": to_jsonl(finished_export("zoch-3", 2)),
        "tampered.jsonl": to_jsonl(rechain(edited(good, scored, raise_score))),
        "garbage.jsonl": "this is not an export\n",
    }
    for name, text in contents.items():
        Path(name).write_text(text)
    return {"scored": str(scored), **contents}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    status = main(list(argv))
    return status, capsys.readouterr().out


def test_a_good_file_passes(files: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    status, out = run(capsys, "audit", "good.jsonl")
    assert status == 0
    assert "good.jsonl  ✓ verified" in out
    for text in ("hash chain", "deals (S18)", "totals (S16)", "round 3", "end: puddings"):
        assert text in out
    assert "S11" in out and "S14" in out and "v" in out  # rules, and cards with their versions


def test_a_tampered_file_fails_at_its_version(
    files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    status, out = run(capsys, "audit", "tampered.jsonl")
    assert status == 1
    assert "✗ failed" in out
    assert f"version {files['scored']} (round_scored) differs from the replay" in out
    assert "recorded" in out  # the provenance shows the recorded points beside the real ones


def test_several_files_give_a_summary_table(
    files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    status, out = run(
        capsys, "audit", "good.jsonl", "zoch.jsonl", "tampered.jsonl", "garbage.jsonl"
    )
    assert status == 1
    header = next(line for line in out.splitlines() if "file" in line)
    for column in ("game", "events", "chain", "seed", "deals", "scores", "ok"):
        assert column in header
    rows = {line.split()[1]: line for line in out.splitlines() if ".jsonl " in line}
    assert rows["good.jsonl"].count("✓") == 5 and "sushi-go" in rows["good.jsonl"]
    assert rows["tampered.jsonl"].count("✗") == 2  # scores, ok
    assert "✗ garbage.jsonl: line 1 is not JSON" in out
    assert "2 of 4 passed" in out
    assert run(capsys, "audit", "good.jsonl", "zoch.jsonl")[0] == 0


def test_json_output(files: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    status, out = run(capsys, "audit", "--json", "good.jsonl")
    report = json.loads(out)
    assert status == 0 and report["ok"] and report["file"] == "good.jsonl"
    assert {"chain", "seed", "deals", "scores", "replay", "points", "provenance"} <= set(report)
    status, out = run(capsys, "audit", "--json", "good.jsonl", "tampered.jsonl")
    reports = json.loads(out)
    assert status == 1 and [r["ok"] for r in reports] == [True, False]
    assert reports[1]["scores"]["first_bad_version"] == int(files["scored"])


def test_a_missing_file_is_a_failed_report(
    files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    status, out = run(capsys, "audit", "--json", "nowhere.jsonl")
    assert status == 1 and "cannot read nowhere.jsonl" in json.loads(out)["error"]


def test_the_command_line_exit_status(files: dict[str, str]) -> None:
    def status(*names: str) -> int:
        command = [sys.executable, "-m", "service.cli.main", "audit", *names]
        env = {"PYTHONPATH": str(ROOT), "COLUMNS": "120", "PATH": ""}
        return subprocess.run(command, capture_output=True, env=env, check=False).returncode

    assert status("good.jsonl") == 0
    assert status("good.jsonl", "tampered.jsonl") == 1


def test_replay_prints_the_turns_and_the_score_sheet(
    files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    status, out = run(capsys, "replay", "good.jsonl")
    assert status == 0
    assert "Sushi Go! gamewright, 4 players" in out
    assert "round 1, passing left" in out and "dealt to p0:" in out
    assert "(auto)" in out  # the last card of every round (S5)
    for number in (1, 2, 3):
        assert f"round {number} scores" in out
    assert "winner" in out and "★" in out
    assert "audit: ✓ verified" in out


def test_replay_names_zoch_cards_and_a_tampered_game(
    files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    status, out = run(capsys, "replay", "zoch.jsonl")
    assert status == 0 and "zoch" in out and "S14/S15" in out
    status, out = run(capsys, "replay", "tampered.jsonl")
    assert status == 0 and "audit: ✗ failed" in out
    assert run(capsys, "replay", "garbage.jsonl")[0] == 1


@pytest.fixture
def server(files: dict[str, str]) -> Iterator[str]:
    """A stand-in for the service: GET /games/<id>/export answers the export as JSON Lines."""
    body = files["good.jsonl"].encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            found = self.path == f"/games/{GAME_ID}/export"
            self.send_response(200 if found else 404)
            self.send_header("Content-Type", "application/x-ndjson")
            self.end_headers()
            self.wfile.write(body if found else b"")

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_replay_and_audit_fetch_a_game_url(server: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, out = run(capsys, "replay", f"{server}/games/{GAME_ID}")
    assert status == 0 and "round 3 scores" in out and "audit: ✓ verified" in out
    assert run(capsys, "audit", f"{server}/games/{GAME_ID}/export")[0] == 0
    status, out = run(capsys, "replay", f"{server}/games/unknown")
    assert status == 1 and "404" in out


def test_replay_prints_a_sequence_game_turn_by_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import random

    from export_support import export_records

    from domain.sequence.randomplay import play_random_game

    monkeypatch.setenv("COLUMNS", "200")
    events, state = play_random_game({"players": 3, "teams": 3}, random.Random(4))
    path = tmp_path / "sequence.jsonl"
    path.write_text(to_jsonl(export_records(events)))
    assert main(["replay", str(path)]) == 0
    out = capsys.readouterr().out
    assert "Sequence" in out and "final board" in out
    plays = sum(e.type == "card_played" for e in events)
    assert out.count(" → ") + out.count("removes the chip") == plays
    assert ("wins" in out) or ("draw" in out)
    assert "audit: " in out
