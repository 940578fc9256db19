"""A problem's ``title`` is fixed per ``code`` (RFC 9457), whatever the detail or the status."""

from __future__ import annotations

import uuid

from api_client import ApiClient, Table, expect_problem
from test_api_spec import _documented_codes

from service.http.problems import title_of

pytest_plugins = ["api_fixtures"]
CARDS = ["tempura", "sashimi", "dumpling", "pudding", "wasabi", "chopsticks", "maki_1", "maki_2"]
CARDS += ["maki_3", "egg_nigiri", "salmon_nigiri", "squid_nigiri"]


def test_each_documented_code_has_its_own_title() -> None:
    codes = _documented_codes()
    titles = {title_of(code) for code in codes}
    assert len(titles) == len(codes)
    assert title_of("card_not_in_hand") == "Card not in hand"


def test_answers_carry_the_title_of_their_code(api: ApiClient) -> None:
    missing = expect_problem(api.get(f"/games/{uuid.uuid4()}"), 404, "game_not_found")
    also_missing = expect_problem(api.get(f"/games/{uuid.uuid4()}/events"), 404, "game_not_found")
    assert missing["title"] == also_missing["title"] == "Game not found"
    assert missing["detail"] != also_missing["detail"]  # the details differ, the title does not
    table = Table.open(api, 2)
    player = table.players[0]
    hand = player.client.get(table.path).json()["you"]["hand"]
    absent = next(card for card in CARDS if card not in hand)
    refused = expect_problem(
        player.client.post(f"{table.path}/moves", {"cards": [absent]}), 422, "card_not_in_hand"
    )
    assert refused["title"] == "Card not in hand"
    routing = expect_problem(api.get("/nowhere", request_valid=False), 404, "not_found")
    assert routing["title"] == "Not found"
    table.close()
