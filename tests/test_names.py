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

from domain import names, uts39
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
    # name rule 2, Unicode UTS #39 (domain/uts39.py): issue 31
    ("Alic\u0435", "mixed_scripts"),  # Latin with one Cyrillic e
    ("\u0410lice", "mixed_scripts"),  # Cyrillic A, then Latin
    ("\u0412\u03bfb", "mixed_scripts"),  # Cyrillic Ve, Greek omicron, Latin b
    ("Ann\u034fLee", "invisible"),  # combining grapheme joiner: default-ignorable
    ("Ann\ufe00", "invisible"),  # a variation selector after a letter
    ("Ann\ufe0f", "invisible"),  # the emoji selector, not after an emoji
    ("\u1820\u180b\u1821", "invisible"),  # a Mongolian free variation selector
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
        "\u0412\u041e\u0412",  # all Cyrillic: Ve, O, Ve
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


# Names whose UTS #39 skeletons are equal, each written in one script (so rule 2 lets each be a
# name), that the light table of rule 1 told apart.
LOOKALIKES = [
    ("BOB", "\u0392\u039f\u0392"),  # Greek capitals Beta, Omicron, Beta
    ("Tom", "\u03a4\u039f\u039c"),  # Greek capitals Tau, Omicron, Mu
    ("Ian", "1an"),  # capital I and digit one: both l
    ("Ian", "lan"),
]


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize(("first", "second"), LOOKALIKES)
def test_names_whose_uts39_skeletons_are_equal_cannot_both_sit(
    api: ApiClient, game: str, first: str, second: str
) -> None:
    created = _create(api, game)
    assert api.join(created["game_id"], first)["name"] == first
    response = api.post(f"/games/{created['game_id']}/players", {"name": second})
    problem = expect_problem(response, 409, "name_taken")
    assert problem["errors"] == {"seat": 0}, problem


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize(
    ("name", "mixed"),
    [
        ("\u041c\u0430\u0440\u0438\u044f", "\u041ca\u0440\u0438\u044f"),  # Мария; a Latin a
        ("\u674e\u96f7", "\u674e\u96f7\u0434"),  # 李雷; a Cyrillic letter after it
        ("Tanaka \u592a\u90ce", "Tanaka \u592a\u90ce \u0434"),  # Latin with Han is allowed
        ("\u0395\u03bb\u03ad\u03bd\u03b7", "\u0395\u03bb\u03ad\u03bda"),  # Ελένη; a Latin a
    ],
)
def test_a_name_is_one_script_or_an_allowed_mix(
    api: ApiClient, game: str, name: str, mixed: str
) -> None:
    """UTS #39's highly restrictive profile: a genuine one-script name is one, the same name
    with a letter of another script is not."""
    created = _create(api, game)
    response = api.post(f"/games/{created['game_id']}/players", {"name": mixed})
    problem = expect_problem(response, 422, "invalid_name")
    assert problem["errors"] == {"reason": "mixed_scripts"}, problem
    assert "mixed" in problem["detail"]
    assert api.join(created["game_id"], name)["name"] == name
    assert api.game(created["game_id"])["seats"][0]["name"] == name


def test_the_uts39_skeleton_maps_confusables_to_their_prototype() -> None:
    """UTS #39's skeletons, where the light table of rule 1 did not see the look-alike."""
    assert skeleton("\u0410lice", 2) == skeleton("Alice", 2)  # Cyrillic A
    assert skeleton("B\u03bfb", 2) == skeleton("Bob", 2)  # Greek omicron
    assert skeleton("J0HN", 2) == skeleton("JOHN", 2) == skeleton("john", 2)  # zero, O
    assert skeleton("I", 2) == skeleton("l", 2) == skeleton("1", 2) == skeleton("|", 2)
    assert skeleton("\u0392\u039f\u0392", 2) == skeleton("BOB", 2)
    assert skeleton("Zo\u00eb", 2) != skeleton("Zoe", 2)  # a diaeresis is still seen
    assert skeleton("Ann Lee", 2) == skeleton("Ann  Lee", 2) != skeleton("AnnLee", 2)
    assert skeleton("\u041c\u0430\u0440\u0438\u044f", 2) != skeleton("Maria", 2)
    assert all(skeleton(a, 1) != skeleton(b, 1) for a, b in LOOKALIKES)  # rule 1 kept as was


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
    assert events[0].data["name_rule"] == 2
    seed = bytes.fromhex(events[-1].data["seed"])
    assert all(replay(game, events, seed)[check]["ok"] for check in ("replay", "deals"))
    old = _as_before_the_rule(events, ["Bob", "b\u200bob\u202e"])  # look-alike, format chars
    checked = replay(game, old, seed)
    assert checked["replay"]["ok"] is True, checked["replay"]
    # The same names in a game created under the rule: the audit finds the join it refuses.
    forged = [old[0]._replace(data=events[0].data), *old[1:]]
    refused = replay(game, forged, seed)["replay"]
    assert refused["ok"] is False and "invalid_name" in refused["detail"], refused


@pytest.mark.parametrize(
    "seats", [["BOB", "\u0392\u039f\u0392"], ["Alic\u0435", "Ann\u034fLee"]]
)  # UTS #39 look-alikes; a mixed-script name and a default-ignorable character
def test_games_created_under_name_rule_1_replay_as_they_were_decided(seats: list[str]) -> None:
    """Rule 1 accepted these names, rule 2 refuses them: a game created under rule 1 keeps it."""
    events = play_sushi_go({"players": 2}, random.Random(21))[0]
    seed = bytes.fromhex(events[-1].data["seed"])
    renamed = _as_before_the_rule(events, seats)
    rule_1 = [renamed[0]._replace(data={**events[0].data, "name_rule": 1}), *renamed[1:]]
    assert replay(SUSHI_GO, rule_1, seed)["replay"]["ok"] is True
    rule_2 = [renamed[0]._replace(data=events[0].data), *renamed[1:]]
    refused = replay(SUSHI_GO, rule_2, seed)["replay"]
    assert refused["ok"] is False and (
        "invalid_name" in refused["detail"] or "name_taken" in refused["detail"]
    ), refused


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
    assert _outcome(lambda t: normalise(t, 2), text) == _outcome(
        lambda t: names._checked(t, 2), text
    )


@settings(max_examples=2000)
@given(
    st.one_of(
        st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=40),
        st.text(st.sampled_from("Il1|0Oo `'\" iLm rn"), max_size=12),
    )
)
def test_the_uts39_ascii_fast_path_gives_disarms_skeletons(text: str) -> None:
    """Rule 2's skeletons of printable ASCII come from a table of each character's skeleton (the
    engine's instruction guard, issue 32); they must be what disarm gives for the whole name,
    as written and case-folded (``I`` is the one ASCII letter whose skeleton folding changes)."""
    assert uts39.skeleton(text) == uts39._skeleton(text)
    assert uts39.skeletons(text) == {uts39._skeleton(text), uts39._skeleton(text.casefold())}
