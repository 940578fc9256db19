"""``cardroom_client.audit_export`` (issue 38, item 4): an export checked offline by the client
kit agrees with ``cardroom audit --json`` (its report, its verdict) on every kind of case the
audit tests make (test_audit.py, test_tamper.py, test_cli_audit.py, test_verdicts.py): honest
games of both kinds and editions, an event byte changed, an event deleted, a seed replaced, a
score raised with the hashes recomputed, an unfinished or unreadable export; with the
service's keys, the signed checkpoint missing or altered, the wrong keys, and each refused
receipt. And it runs where the service cannot be imported; without the rules it raises
``RulesNotInstalled``."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from api_client import ApiClient
from cardroom_client import CardroomError, RulesNotInstalled, audit_export
from export_support import edited, finished_export, rechain, to_jsonl, versions_of
from test_verdicts import TAMPERINGS, finished_game

from service import keys as service_keys
from service.cli.main import main

pytest_plugins = ["api_fixtures"]

Records = list[dict[str, Any]]


def _raise_score(records: Records) -> Records:
    def more(record: dict[str, Any]) -> None:
        record["data"]["scores"][1]["total"] += 6
        record["data"]["scores"][1]["maki"]["points"] += 6

    return rechain(edited(records, versions_of(records, "round_scored", round=2)[0], more))


def _byte_changed(records: Records) -> Records:
    changed = json.loads(json.dumps(records))
    changed[5]["data"]["seat"] = 1 - changed[5]["data"].get("seat", 0)
    return changed


def _seed_replaced(records: Records) -> Records:
    changed = json.loads(json.dumps(records))
    changed[-1]["data"]["seed"] = "00" * 32
    return rechain(changed)


OFFLINE: dict[str, Callable[[], str]] = {
    "honest": lambda: to_jsonl(finished_export("gamewright-4", 1)),
    "zoch": lambda: to_jsonl(finished_export("zoch-3", 2)),
    "dummy": lambda: to_jsonl(finished_export("gamewright-dummy")),
    "score raised, re-chained": lambda: to_jsonl(_raise_score(finished_export("gamewright-4"))),
    "an event changed": lambda: to_jsonl(_byte_changed(finished_export())),
    "an event deleted": lambda: to_jsonl(finished_export()[:6] + finished_export()[7:]),
    "seed replaced": lambda: to_jsonl(_seed_replaced(finished_export())),
    "unfinished": lambda: to_jsonl(finished_export()[:12]),
    "garbage": lambda: "this is not an export\n",
    "empty": lambda: "\n",
}


def cli_report(
    capsys: pytest.CaptureFixture[str], export: Path, keys: Path | None, receipts: Path | None
) -> tuple[int, dict[str, Any]]:
    argv = ["audit", str(export), "--json"]
    argv += ["--keys", str(keys)] if keys else []
    argv += ["--receipts", str(receipts)] if receipts else []
    status = main(argv)
    report = json.loads(capsys.readouterr().out)
    report.pop("file")
    return status, report


def agree(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    text: str,
    jwks: dict[str, Any] | None = None,
    receipts: list[Any] | None = None,
) -> dict[str, Any]:
    """The client's report, after checking it is the command's (given as paths and as data)."""
    export = tmp_path / f"{uuid.uuid4().hex}.jsonl"
    export.write_text(text)
    keys_file = receipts_file = None
    if jwks is not None:
        keys_file = tmp_path / "keys.json"
        keys_file.write_text(json.dumps(jwks))
    if receipts is not None:
        receipts_file = tmp_path / "receipts.json"
        receipts_file.write_text(json.dumps(receipts))
    status, expected = cli_report(capsys, export, keys_file, receipts_file)
    from_paths = audit_export(export, keys_file, receipts_file or ())
    from_data = audit_export(text, jwks, receipts or ())
    for report in (from_paths, from_data):
        assert json.loads(json.dumps(report)) == expected
    assert status == (0 if from_data["ok"] else 1)
    return from_data


@pytest.mark.parametrize("case", OFFLINE)
def test_an_export_audits_as_the_command_says(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = agree(capsys, tmp_path, OFFLINE[case]())
    assert report["ok"] is (case in ("honest", "zoch", "dummy"))


def _served(api: ApiClient) -> tuple[str, dict[str, Any], str, dict[str, Any]]:
    game, receipt = finished_game(api)
    jwks = api.get("/.well-known/cardroom-keys").json()
    return game, receipt, api.get(f"/games/{game}/export").text, jwks


def test_a_served_export_with_its_keys_and_receipts(
    api: ApiClient, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    game, receipt, text, jwks = _served(api)
    assert agree(capsys, tmp_path, text, jwks, [receipt])["ok"] is True
    lines = text.splitlines()
    assert "checkpoint" in json.loads(lines[-1])
    unsigned = "\n".join(lines[:-1]) + "\n"  # the checkpoint missing
    assert agree(capsys, tmp_path, unsigned, jwks)["signature"]["ok"] is not True
    altered = json.loads(lines[-1])
    signature = altered["checkpoint"]["signature"]
    altered["checkpoint"]["signature"] = ("A" if signature[0] != "A" else "B") + signature[1:]
    forged = "\n".join([*lines[:-1], json.dumps(altered)]) + "\n"
    assert agree(capsys, tmp_path, forged, jwks)["ok"] is False
    wrong = service_keys.Keyring.from_jwks({"keys": service_keys.new_pair()}).jwks()
    assert agree(capsys, tmp_path, text, wrong, [receipt])["ok"] is False
    second = json.loads(lines[1])
    second["data"]["tampered"] = True
    event_changed = "\n".join([lines[0], json.dumps(second), *lines[2:]]) + "\n"
    assert agree(capsys, tmp_path, event_changed, jwks, [receipt])["ok"] is False


@pytest.mark.parametrize("kind", TAMPERINGS)
def test_a_refused_receipt_fails_as_the_command_says(
    api: ApiClient, tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    tamper, reason = TAMPERINGS[kind]
    game, good, text, jwks = _served(api)
    report = agree(capsys, tmp_path, text, jwks, [tamper(api, game, good), good])
    assert report["ok"] is False and reason in report["receipts"]["refused"][0]["reason"]


BLOCK = """
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in {blocked!r}:
            raise ImportError("not installed: " + name)
        return None
sys.meta_path.insert(0, Block())
"""


def run_blocked(blocked: set[str], code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    program = BLOCK.format(blocked=blocked) + code
    return subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=120, cwd=cwd
    )


def test_it_needs_no_service(tmp_path: Path) -> None:
    (tmp_path / "good.jsonl").write_text(to_jsonl(finished_export("gamewright-4", 1)))
    code = (
        "from cardroom_client import audit_export\n"
        "report = audit_export('good.jsonl')\n"
        "assert report['ok'] is True, report\n"
        "loaded = {m.split('.')[0] for m in sys.modules} & {'service', 'flask', 'psycopg'}\n"
        "assert not loaded, loaded\n"
        "print('ok')\n"
    )
    run = run_blocked({"service", "flask", "psycopg", "gevent", "gunicorn"}, code, tmp_path)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr


def test_without_the_rules_it_says_so(tmp_path: Path) -> None:
    code = (
        "from cardroom_client import RulesNotInstalled, audit_export\n"
        "try:\n"
        "    audit_export('{}')\n"
        "except RulesNotInstalled as error:\n"
        "    print(type(error).__mro__[1].__name__, 'pip install ./domain' in str(error))\n"
    )
    run = run_blocked({"domain"}, code, tmp_path)
    assert run.returncode == 0 and run.stdout.strip() == "CardroomError True", run.stderr
    assert issubclass(RulesNotInstalled, CardroomError)
