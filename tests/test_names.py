"""Names that cannot spoof (issue 20, domain/names.py): over HTTP on both games, what is refused
(422 invalid_name with its reason), what is normalised, look-alike names in one game (409
name_taken), and games recorded before the rule: they replay and audit as they were decided."""

from __future__ import annotations

import random
from typing import Any

import pytest
from api_client import ApiClient, expect_problem, expect_status
from hypothesis import given, settings
from hypothesis import strategies as st

from domain import names
from domain.decider import GAME_CREATED, GAME_STARTED, SEAT_TAKEN, DomainError, Event, Game
from domain.names import normalise, skeleton
from domain.replay import replay
from domain.sequence import SEQUENCE
from domain.sequence.randomplay import play_random_game as play_sequence
from domain.sushigo import SUSHI_GO
from domain.sushigo.randomplay import play_random_game as play_sushi_go

pytest_plugins = ["api_fixtures"]

GAMES = ["sushi-go", "sequence"]

REFUSED = [
    ("", "blank"),
    ("   ", "blank"),
    ("\u3000\u00a0", "blank"),  # ideographic and no-break spaces only
    ("Ann\u202eevil", "format"),  # right-to-left override: "Annlive" on screen
    ("\u2066Ann\u2069", "format"),  # a direction isolate
    ("\u200b", "format"),  # zero-width space only
    ("A\u200bnn", "format"),  # a zero-width space inside (two names that look the same)
    ("\ufeffAnn", "format"),  # byte order mark
    ("Ann\u2028Bob", "separator"),  # line separator: a second line in the lobby and the log
    ("Ann\u2029", "separator"),  # paragraph separator
    ("Ann\nBob", "control"),
    ("Ann\t", "control"),
    ("\x1b[31mAnn", "control"),
    ("\u3164", "invisible"),  # Hangul filler: a "letter" that draws nothing
    ("\u2800\u2800", "invisible"),  # the blank braille pattern
    ("\ue000Ann", "not_text"),  # private use
    ("e" + "\u0301" * 6, "too_many_marks"),  # zalgo
    ("x" * 33, "too_long"),
    ("🍣" * 33, "too_long"),
]


def _create(api: ApiClient, game: str, **extra: Any) -> dict[str, Any]:
    response = api.post("/games", {"game": game, "players": 2, **extra})
    expect_status(response, 201)
    return response.json()


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize(("name", "reason"), REFUSED)
def test_names_that_hide_or_spoof_are_refused_saying_why(
    api: ApiClient, game: str, name: str, reason: str
) -> None:
    created = _create(api, game)
    response = api.post(f"/games/{created['game_id']}/players", {"name": name})
    problem = expect_problem(response, 422, "invalid_name")
    assert problem["errors"] == {"reason": reason}, problem
    assert problem["detail"]  # in words, for the client's developer
    assert api.game(created["game_id"])["version"] == 1  # nothing recorded


@pytest.mark.parametrize("game", GAMES)
def test_names_are_recorded_nfc_normalised_and_stripped(api: ApiClient, game: str) -> None:
    created = _create(api, game)
    granted = api.join(created["game_id"], "  Zoe\u0308 ")  # e + combining diaeresis, decomposed
    assert granted["name"] == "Zo\u00eb"  # composed (NFC), without the spaces
    assert api.game(created["game_id"])["seats"][0]["name"] == "Zo\u00eb"
    assert api.events(created["game_id"])[-1]["data"]["name"] == "Zo\u00eb"
    family = api.join(created["game_id"], "👩\u200d👩\u200d👧")  # joiners between emoji: one emoji
    assert family["name"] == "👩\u200d👩\u200d👧"


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize(
    "lookalike",
    [
        "Bob",  # the same
        "bob",  # case
        " BOB ",  # case and spaces
        "ＢＯＢ",  # fullwidth (NFKC)
        "B0b",  # zero for o
        "Вοb",  # Cyrillic Ve, Greek omicron
    ],
)
def test_two_seats_cannot_have_names_that_look_alike(
    api: ApiClient, game: str, lookalike: str
) -> None:
    created = _create(api, game, players=3) if game == "sushi-go" else _create(api, game)
    api.join(created["game_id"], "Bob")
    response = api.post(f"/games/{created['game_id']}/players", {"name": lookalike})
    problem = expect_problem(response, 409, "name_taken")
    assert problem["errors"] == {"seat": 0}
    assert "Bob" in problem["detail"]
    assert problem["version"] == 2  # where the game is
    assert [s["name"] for s in api.game(created["game_id"])["seats"]][:2] == ["Bob", None]


@pytest.mark.parametrize("game", GAMES)
def test_a_name_cannot_look_like_a_bot_seat_not_yet_taken(api: ApiClient, game: str) -> None:
    bots = [{"seat": 1, "kind": "greedy", "name": "Rita"}]
    created = _create(api, game, bots=bots)
    response = api.post(f"/games/{created['game_id']}/players", {"name": "RITA"})
    assert expect_problem(response, 409, "name_taken")["errors"] == {"seat": 1}
    api.join(created["game_id"], "Ann")  # a different name takes the seat, then the bot its own


@pytest.mark.parametrize("game", GAMES)
def test_bot_names_follow_the_same_rule(api: ApiClient, game: str) -> None:
    bots = [{"seat": 1, "kind": "greedy", "name": "R\u202eita"}]
    response = api.post("/games", {"game": game, "players": 2, "bots": bots})
    assert expect_problem(response, 422, "invalid_name")["errors"] == {"reason": "format"}
    alike = [{"seat": 0, "kind": "greedy", "name": "Rita"}, {"seat": 1, "kind": "random"}]
    alike[1]["name"] = "rita"
    response = api.post("/games", {"game": game, "players": 2, "bots": alike})
    expect_problem(response, 422, "invalid_bots")


def test_the_skeleton_folds_what_looks_alike_and_keeps_what_does_not() -> None:
    assert skeleton("Ａｌｉｃｅ") == skeleton("alice") == skeleton("ALICE ")
    assert skeleton("Zoë") != skeleton("Zoe")  # a diaeresis is seen
    assert skeleton("Ann Lee") == skeleton("Ann  Lee") != skeleton("AnnLee")
    assert normalise("Ann  Lee") == "Ann  Lee"  # recorded as sent (inside spaces kept)


# --- games recorded before the rule ----------------------------------------------------------


def _as_before_the_rule(events: list[Event], names: list[str]) -> list[Event]:
    """``events`` as a game created before domain/names.py records them: no ``name_rule``, and
    seat names the rule now refuses."""
    old: list[Event] = []
    for event in events:
        data = dict(event.data)
        if event.type == GAME_CREATED:
            data.pop("name_rule")
        elif event.type == SEAT_TAKEN:
            data["name"] = names[data["seat"]]
        elif event.type == GAME_STARTED:
            data["seats"] = names
        old.append(Event(event.type, data, event.schema_version))
    return old


@pytest.mark.parametrize(
    ("game", "play"),
    [
        (SUSHI_GO, lambda rng: play_sushi_go({"players": 2}, rng)[0]),
        (SEQUENCE, lambda rng: play_sequence({"players": 2}, rng)[0]),
    ],
)
def test_games_recorded_before_the_rule_still_replay_and_audit(game: Game[Any], play: Any) -> None:
    events = play(random.Random(20))
    assert events[0].data["name_rule"] == 1
    seed = bytes.fromhex(events[-1].data["seed"])
    assert all(replay(game, events, seed)[check]["ok"] for check in ("replay", "deals"))
    old = _as_before_the_rule(events, ["Bob", "b\u200bob\u202e"])  # look-alike, format chars
    checked = replay(game, old, seed)
    assert checked["replay"]["ok"] is True, checked["replay"]
    # The same names in a game created under the rule: the audit finds the join it refuses.
    forged = [old[0]._replace(data=events[0].data), *old[1:]]
    refused = replay(game, forged, seed)["replay"]
    assert refused["ok"] is False and "invalid_name" in refused["detail"], refused


def _outcome(check: Any, text: str) -> tuple[str, Any]:
    try:
        return "ok", check(text)
    except DomainError as refused:
        return "refused", (refused.code, dict(refused.details), refused.message)


@settings(max_examples=500)
@given(
    st.one_of(
        st.text(st.characters(max_codepoint=127), max_size=40),
        st.text(max_size=40),
        st.sampled_from(["", " ", "  bob  ", "a" * 32, " " + "a" * 32 + " ", "a" * 33, "x\ty"]),
    )
)
def test_the_ascii_fast_paths_decide_what_the_checks_decide(text: str) -> None:
    """``normalise`` and ``skeleton`` skip the character checks for printable ASCII (issue 15:
    every join runs them); they must accept, refuse and fold exactly as the checks do."""
    assert _outcome(normalise, text) == _outcome(names._checked, text)
    assert skeleton(text) == names._folded(text)
