"""GET /rules/{game} (issue 17): the rulings' text behind every rule code the audit cites."""

from __future__ import annotations

from api_client import ApiClient, expect_problem, expect_status

pytest_plugins = ["api_fixtures"]


def test_every_ruling_of_each_game_is_served_by_its_code(api: ApiClient) -> None:
    for game, prefix, count in (("sushi-go", "S", 18), ("sequence", "Q", 13)):
        response = api.get(f"/rules/{game}")
        expect_status(response, 200)
        body = response.json()
        codes = [r["code"] for r in body["rulings"]]
        assert codes == [f"{prefix}{n}" for n in range(1, count + 1)]
        assert all(r["text"] and "\n" not in r["text"] for r in body["rulings"])
        assert body["markdown"].startswith("# ")
    s8 = next(r for r in api.get("/rules/sushi-go").json()["rulings"] if r["code"] == "S8")
    assert "wasabi" in s8["text"].lower() and not s8["text"].startswith("S8")


def test_a_game_without_rulings_is_a_404_problem(api: ApiClient) -> None:
    for game in ("chess", "README", "Sushi-Go", "sushi-go.md"):
        expect_problem(api.get(f"/rules/{game}", request_valid=None), 404, "rules_not_found")
