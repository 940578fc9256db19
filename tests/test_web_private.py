"""Private games on the web page (issue 20): created from the lobby's form, the invitation shown
as a link to copy, joined through that link in another browser, not joinable without it, and
revoked by its creator."""

from __future__ import annotations

from typing import Any

import requests
from patience import ANSWER
from playwright.sync_api import expect
from web_support import screenshot

pytest_plugins = ["api_fixtures", "web_fixtures"]


def test_a_private_game_is_joined_through_its_link_until_revoked(
    contexts: Any, live_server: Any
) -> None:
    creator = contexts().new_page()
    creator.goto("/")
    creator.select_option("#game", "sushi-go")
    creator.select_option("#players", "3")
    creator.select_option("#visibility", "private")
    creator.fill("#name", "Ada")
    creator.click("#create-game")
    creator.wait_for_url("**/#/game/*")
    creator.wait_for_selector("#game")
    game_id = creator.url.rsplit("/", 1)[1]
    link = creator.locator("#invite-link")
    expect(link).to_be_visible()
    invitation = link.input_value()
    assert invitation.startswith(f"{live_server.url}/#/game/{game_id}?invitation=")
    screenshot(creator, "private-invitation")
    listed = requests.get(f"{live_server.url}/games", params={"order": "newest"}, timeout=ANSWER)
    assert game_id not in [g["game_id"] for g in listed.json()["games"]]

    stranger = contexts().new_page()  # has the game's address, not the invitation
    stranger.goto(f"/#/game/{game_id}")
    expect(stranger.locator("#join")).to_contain_text("private")
    expect(stranger.locator("#join-name")).to_have_count(0)

    friend = contexts().new_page()
    friend.goto(invitation)
    friend.fill("#join-name", "Bo")
    friend.locator("#join button[type=submit]").click()
    expect(friend.locator("#game")).to_contain_text("Bo")
    seats = requests.get(f"{live_server.url}/games/{game_id}", timeout=ANSWER).json()["seats"]
    assert [s["name"] for s in seats] == ["Ada", "Bo", None]

    expect(friend.locator("#copy-invite")).to_be_visible()  # a player may pass the link on
    creator.click("#revoke-invite")
    expect(creator.locator("#notice")).to_contain_text("revoked")
    # Revoked from another browser (issue 39, item 11): the friend's page offers it no more.
    friend.reload()
    expect(friend.locator("#game")).to_contain_text("Bo")
    expect(friend.locator("#copy-invite")).to_have_count(0)
    expect(friend.locator("#invite-link")).to_have_count(0)
    late = contexts().new_page()  # the old link, after the revocation: refused before a try
    late.goto(invitation)
    expect(late.locator("#join")).to_contain_text("no longer valid")
    expect(late.locator("#join-name")).to_have_count(0)
    seats = requests.get(f"{live_server.url}/games/{game_id}", timeout=ANSWER).json()["seats"]
    assert seats[2]["name"] is None
    creator.click("#new-invite")  # a new link lets the last player in
    expect(creator.locator("#invite-link")).not_to_have_value(invitation)
    fresh = creator.locator("#invite-link").input_value()
    last = contexts().new_page()
    last.goto(fresh)
    last.fill("#join-name", "Cy")
    last.locator("#join button[type=submit]").click()
    expect(last.locator("#game")).to_have_attribute("data-status", "playing")
