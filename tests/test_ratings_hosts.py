"""Rated games finishing at once on two hosts (issue 37): two ``cardroom serve`` processes on one
database of this test's own, every game's last command sent to both at once
(bench/ratings_hosts.py, which runs 1,000). Each game is rated exactly once (the ``rated_games``
primary key, not a lock in one process), and the ratings rebuilt from the exports alone are the
stored ones bit for bit: the two hosts applied the games in an order the exports show."""

from __future__ import annotations

from collections.abc import Iterator

import dbsupport
import pytest
from serve_support import cardroom_serve

from bench import ratings_hosts

GAMES = 40


@pytest.fixture(scope="module")
def own_url(database_url: str) -> Iterator[str]:
    with dbsupport.own_database(database_url) as url:
        yield url


def test_games_ending_at_once_on_two_hosts_are_rated_once_in_a_rebuildable_order(
    own_url: str,
) -> None:
    with cardroom_serve(own_url) as one, cardroom_serve(own_url) as other:
        result = ratings_hosts.run(own_url, GAMES, 5, 8, [one.url, other.url])
    print(result)
    assert result["answers"].get("200", 0) >= GAMES  # each game's end answered by some host
    # the other: the seat is played by the bot already
    assert set(result["answers"]) <= {"200", "409 seat_taken_over", "409 game_over"}
    assert (result["rated"], result["twice"], result["missing"]) == (GAMES, 0, 0)
    assert result["games"] == GAMES
    assert result["equal"] == result["ratings"] == result["rebuilt"] == 5
