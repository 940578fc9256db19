"""Issue 29: what each reveal did, and the cards themselves. The cards a reveal added are marked
(animated only without prefers-reduced-motion), the reveal line says "onto the wasabi" or "kept off
the wasabi", a nigiri on a wasabi shows what it scores; every card kind has its own drawn face with
its value and set rule, the same in the replay; Zoch's wasabi choice appears only with a free
wasabi; the dummy's extra card is explained; arrow keys move in the hand and Enter picks.

Some tests drive the Sushi Go! module itself in the browser with views built here (the deal is
the seed's: a nigiri onto a wasabi cannot be arranged through the API), the rest play a game."""

from __future__ import annotations

import copy
from typing import Any

import requests
from patience import ANSWER
from playwright.sync_api import Page, expect
from test_web_sushigo import create_game
from web_support import SHOTS, screenshot

from domain.sushigo.cards import display_names

pytest_plugins = ["api_fixtures", "web_fixtures"]

KINDS = [
    "tempura",
    "sashimi",
    "dumpling",
    "maki_1",
    "maki_2",
    "maki_3",
    "egg_nigiri",
    "salmon_nigiri",
    "squid_nigiri",
    "wasabi",
    "pudding",
    "chopsticks",
]


def _seat(seat: int, name: str, cards: list[str], on_wasabi: list[str]) -> dict[str, Any]:
    return {
        "seat": seat,
        "name": name,
        "taken": True,
        "bot": None,
        "taken_over": None,
        "resigned": False,
        "picked": False,
        "score": 0,
        "puddings": 0,
        "hand_size": 5,
        "tableau": {"cards": cards, "on_wasabi": on_wasabi},
    }


def _view(edition: str = "gamewright", **you: Any) -> dict[str, Any]:
    return {
        "game": "sushi-go",
        "status": "playing",
        "version": 20,
        "round": 1,
        "turn": 3,
        "rules": {"players": 2, "edition": edition, "pass_direction": "left", "dummy": False},
        "seats": [
            _seat(0, "Ann", ["wasabi", "tempura"], []),
            _seat(1, "Ben", ["wasabi", "maki_2"], []),
        ],
        "you": {"seat": 0, "hand": ["salmon_nigiri", "egg_nigiri"], "pick": None, **you},
    }


def _module(page: Page) -> None:
    """The page, with the Sushi Go! module at hand as window.sg (what its game pages load)."""
    page.goto("/")
    page.wait_for_selector("#create-game")
    page.evaluate("async () => { window.sg = await import('/app/js/games/sushigo.js'); }")


def _draw(page: Page, view: dict[str, Any], **extra: Any) -> None:
    page.evaluate(
        """([view, extra]) => {
          const main = document.querySelector("main");
          const draft = window.sg.newDraft();
          if (extra.chosen !== undefined) draft.cards = [extra.chosen];
          main.replaceChildren(window.sg.render(view, draft, {
            onChange() {}, onMove() {}, reveal: window.__reveal, revealed: extra.revealed }));
        }""",
        [view, extra],
    )


def test_a_reveal_is_marked_and_says_where_the_nigiri_went(contexts: Any) -> None:
    """Before: the table was redrawn with nothing marked; the line never said whether a nigiri
    went onto the wasabi, and a salmon nigiri on a wasabi showed 2 where it scores 6."""
    page = contexts(width=390, height=844).new_page()
    _module(page)
    before = _view()
    after = copy.deepcopy(before)
    after["version"], after["turn"] = 23, 4
    after["seats"][0]["tableau"] = {
        "cards": ["wasabi", "tempura", "salmon_nigiri"],
        "on_wasabi": ["salmon_nigiri"],
    }
    after["seats"][1]["tableau"] = {"cards": ["wasabi", "maki_2", "tempura"], "on_wasabi": []}
    revealed = {
        "version": 23,
        "type": "turn_revealed",
        "data": {
            "round": 1,
            "turn": 3,
            "picks": [
                {"seat": 0, "cards": ["salmon_nigiri"], "chopsticks": False},
                {"seat": 1, "cards": ["tempura"], "chopsticks": False},
            ],
        },
    }
    page.evaluate("([b, a]) => { window.__reveal = window.sg.revealOf(b, a); }", [before, after])
    _draw(page, after, revealed=revealed)
    line = page.locator("#reveal-line")
    expect(line).to_have_text(
        "Turn 3 revealed — Ann took Salmon nigiri onto the wasabi (scores 6); Ben took Tempura"
    )
    dipped = page.locator("section.seat[data-seat='0'] .card.on-wasabi")
    expect(dipped).to_contain_text("2 × 3 = 6")
    expect(dipped).to_have_class("card sg-salmon_nigiri on-wasabi fresh")
    fresh = page.locator(".card.fresh")
    expect(fresh).to_have_count(2)  # one card each: Ann's salmon, Ben's tempura
    expect(page.locator("section.seat[data-seat='1'] .card.fresh")).to_have_attribute(
        "data-kind", "tempura"
    )
    animation = "el => getComputedStyle(el).animationName"
    assert fresh.first.evaluate(animation) == "reveal"
    screenshot(page, "reveal-mark")
    page.emulate_media(reduced_motion="reduce")
    assert fresh.first.evaluate(animation) == "none"  # marked, not moving
    expect(fresh.first.locator(".new")).to_have_text("new")

    # Kept off: a Zoch player who declines the free wasabi (S9).
    before = _view("zoch")
    after = copy.deepcopy(before)
    after["version"], after["turn"] = 23, 4
    after["seats"][0]["tableau"] = {"cards": ["wasabi", "tempura", "squid_nigiri"], "on_wasabi": []}
    revealed["data"]["picks"][0]["cards"] = ["squid_nigiri"]
    page.evaluate("([b, a]) => { window.__reveal = window.sg.revealOf(b, a); }", [before, after])
    _draw(page, after, revealed=revealed)
    expect(line).to_contain_text("Ann took Squid nigiri, kept off the wasabi")


def test_two_nigiri_of_a_kind_with_chopsticks_one_onto_the_wasabi(contexts: Any) -> None:
    """Issue 39, item 10: chopsticks took two salmon nigiri with one free wasabi; the table and
    the server put the first on it and the second beside it (S6, S8), the line said both went
    on ("scores 6" twice). In Zoch the pick's own order of choices is said (S9)."""
    page = contexts(width=390, height=844).new_page()
    _module(page)
    line = page.locator("#reveal-line")
    for edition, use_wasabi, said in (
        (
            "gamewright",
            None,
            "Ann took Salmon nigiri onto the wasabi (scores 6) and Salmon nigiri with chopsticks",
        ),
        (
            "zoch",
            [False, True],
            "Ann took Salmon nigiri, kept off the wasabi and Salmon nigiri onto the wasabi"
            " (scores 6) with chopsticks",
        ),
    ):
        before = _view(edition)
        before["seats"][0]["tableau"] = {"cards": ["wasabi", "chopsticks"], "on_wasabi": []}
        after = copy.deepcopy(before)
        after["version"], after["turn"] = 23, 4
        after["seats"][0]["tableau"] = {
            "cards": ["wasabi", "salmon_nigiri", "salmon_nigiri"],  # S7: chopsticks passed on
            "on_wasabi": ["salmon_nigiri"],
        }
        after["seats"][1]["tableau"] = {"cards": ["wasabi", "maki_2", "tempura"], "on_wasabi": []}
        pick: dict[str, Any] = {
            "seat": 0,
            "cards": ["salmon_nigiri", "salmon_nigiri"],
            "chopsticks": True,
        }
        if use_wasabi is not None:
            pick["use_wasabi"] = use_wasabi
        revealed = {
            "version": 23,
            "type": "turn_revealed",
            "data": {
                "round": 1,
                "turn": 3,
                "picks": [pick, {"seat": 1, "cards": ["tempura"], "chopsticks": False}],
            },
        }
        page.evaluate(
            "([b, a]) => { window.__reveal = window.sg.revealOf(b, a); }", [before, after]
        )
        _draw(page, after, revealed=revealed)
        expect(line).to_have_text(f"Turn 3 revealed — {said}; Ben took Tempura")
        expect(page.locator("section.seat[data-seat='0'] .card.on-wasabi")).to_have_count(1)


def test_zoch_offers_the_wasabi_only_when_one_is_free(contexts: Any) -> None:
    """Before: the box appeared, ticked, with no wasabi on the table."""
    page = contexts().new_page()
    _module(page)
    view = _view("zoch")
    view["seats"][0]["tableau"] = {"cards": ["tempura"], "on_wasabi": []}
    _draw(page, view, chosen=0)
    expect(page.locator("input.use-wasabi")).to_have_count(0)
    view["seats"][0]["tableau"] = {"cards": ["wasabi", "egg_nigiri"], "on_wasabi": ["egg_nigiri"]}
    _draw(page, view, chosen=0)
    expect(page.locator("input.use-wasabi")).to_have_count(0)  # its wasabi is taken
    view["seats"][0]["tableau"] = {"cards": ["wasabi"], "on_wasabi": []}
    _draw(page, view, chosen=0)
    expect(page.locator("input.use-wasabi")).to_be_checked()
    expect(page.locator("#hand .options")).to_contain_text("triple points: 6")


def test_every_card_kind_has_its_own_face_legible_on_a_phone(contexts: Any) -> None:
    page = contexts(width=360, height=740).new_page()
    _module(page)
    view = _view()
    view["you"]["hand"] = KINDS
    _draw(page, view)
    cards = page.locator("#hand button.pickable")
    expect(cards).to_have_count(len(KINDS))
    drawings = set()
    for i, kind in enumerate(KINDS):
        card = cards.nth(i)
        art = card.locator("svg.art")
        expect(art).to_have_count(1)
        drawings.add(art.inner_html())
        face = card.locator(".face")
        assert face.inner_text().strip(), kind  # its value or set rule, in words
        box = card.bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= 360, kind  # no overflow
        size = face.evaluate("el => parseFloat(getComputedStyle(el).fontSize)")
        assert size >= 12, (kind, size)
        art_box = art.bounding_box()
        assert art_box and art_box["width"] >= 40, kind
    assert len(drawings) == len(KINDS)  # one drawing per kind
    expect(cards.nth(0).locator(".face")).to_have_text("pair = 5")
    expect(cards.nth(9).locator(".face")).to_have_text("next nigiri ×3")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.locator("#hand").screenshot(path=str(SHOTS / "card-faces-phone.png"))


def test_zoch_cards_show_their_own_pictures(contexts: Any) -> None:
    """Issue 39, item 11: Zoch prints tuna nigiri and mussels (the squid nigiri and dumpling
    kinds, S1's table); their pictures were the squid's and the dumpling's."""
    page = contexts(width=360, height=740).new_page()
    _module(page)
    pictures = {}
    for edition in ("gamewright", "zoch"):
        view = _view(edition)
        view["card_names"] = display_names(edition)
        view["you"]["hand"] = ["squid_nigiri", "dumpling"]
        _draw(page, view)
        cards = page.locator("#hand button.pickable")
        for i, kind in enumerate(["squid_nigiri", "dumpling"]):
            pictures[(edition, kind)] = cards.nth(i).locator("svg.art").inner_html()
    expect(page.locator("#hand button.pickable").nth(0)).to_contain_text("Tuna nigiri")
    expect(page.locator("#hand button.pickable").nth(1)).to_contain_text("Mussels")
    for kind in ("squid_nigiri", "dumpling"):
        assert pictures[("zoch", kind)] != pictures[("gamewright", kind)], kind
    page.locator("#hand").screenshot(path=str(SHOTS / "zoch-faces-phone.png"))


def test_the_replay_shows_the_same_faces(contexts: Any, live_server: Any) -> None:
    base = live_server.url
    bots = [{"seat": 0, "kind": "greedy"}, {"seat": 1, "kind": "random"}]
    created = requests.post(
        f"{base}/games", json={"game": "sushi-go", "players": 2, "bots": bots}, timeout=ANSWER
    ).json()
    page = contexts().new_page()
    page.goto(f"/#/replay/{created['game_id']}")
    cards = page.locator("#replay-state .card")
    expect(cards.first).to_be_visible()
    assert cards.count() == page.locator("#replay-state .card svg.art").count() > 0


def test_the_dummys_extra_card_is_explained(contexts: Any) -> None:
    """Before: nothing said why the player feeding the dummy holds 10 cards."""
    page = contexts().new_page()
    create_game(page, "Dee", 2, dummy="on", **{"seat-1": "greedy"})
    page.wait_for_selector("#hand button.pickable")
    expect(page.locator("#hand button.pickable")).to_have_count(10)  # 9, and the dummy's top card
    expect(page.locator("#dummy-note")).to_contain_text(
        "You hold 10 cards: you control the dummy this turn, so the top card of its pile was"
        " added to your hand"
    )


def test_arrow_keys_move_in_the_hand_and_enter_picks(contexts: Any) -> None:
    """Before: arrow keys did nothing in the hand, and picking meant Tab to the Pick button."""
    page = contexts().new_page()
    create_game(page, "Kit", 2, **{"seat-1": "greedy"})
    cards = page.locator("#hand button.pickable")
    expect(cards.first).to_be_visible()
    cards.first.focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert cards.nth(2).evaluate("el => el === document.activeElement")
    page.keyboard.press("ArrowLeft")
    assert cards.nth(1).evaluate("el => el === document.activeElement")
    page.keyboard.press("End")
    assert cards.last.evaluate("el => el === document.activeElement")
    wanted = cards.nth(1).get_attribute("data-card")
    page.keyboard.press("Home")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Enter")  # chooses it
    expect(cards.nth(1)).to_have_attribute("aria-pressed", "true")
    with page.expect_response(lambda r: r.url.endswith("/moves")) as answer:
        page.keyboard.press("Enter")  # on the chosen card: picks
    assert answer.value.status == 200
    assert answer.value.request.post_data_json["cards"] == [wanted]
