"""Load: 24 clients play 6 whole 4-player games against ``cardroom serve`` (2 workers), with
random delays, resends after lost answers and duplicate sends; nothing is lost (bench/load.py)."""

from __future__ import annotations

import random
from pathlib import Path

from bench.load import (
    PLAYERS,
    Client,
    Options,
    Run,
    Server,
    check_game,
    create_games,
    free_port,
    play_seat,
    run_load,
)


def test_under_load_every_acknowledged_pick_is_in_the_log_once(
    database_url: str, tmp_path: Path
) -> None:
    options = Options(clients=24, games=6, workers=2, threads=16, deadline=90)
    result = run_load(database_url, options, log=tmp_path / "server.log")
    print(result.summary())
    assert result.ok, result.summary()
    assert result.complete == result.audits_passed == 6
    assert result.stats.acked and result.acked_found == len(result.stats.acked)
    assert not result.stats.server_errors
    assert result.stats.retries > 0 and result.stats.duplicates > 0


def test_a_pick_of_a_turn_not_yet_revealed_is_found_in_a_game_cut_off(
    database_url: str, tmp_path: Path
) -> None:
    """A game the run's deadline cut off mid-turn: its acknowledged pick is not revealed to a
    spectator yet. The check reads it as its own seat does; read as a spectator it counted as
    lost and "never sent" (the HA drill at load 30: 29 picks, every one of them this)."""
    server = Server(database_url, free_port(), 1, 4, tmp_path / "server.log")
    server.start()
    try:
        run = Run(Options(games=1, deadline=60), server.port)
        client = Client(run, random.Random(1))
        (game,) = create_games(run, 1)
        tokens = {}
        for index in range(PLAYERS):
            status, _, body = client.post(f"{game}/players", {"name": f"p{index}"})
            assert status == 201
            tokens[body["seat"]] = body["token"]
            run.stats.tokens[(game, body["seat"])] = body["token"]
        status, _, view = client.call("GET", game, token=tokens[0])
        card = view["you"]["hand"][0]
        run.choose(game, view["round"], view["turn"], 0, (card,))
        turn = {"round": view["round"], "turn": view["turn"], "cards": [card]}
        status, _, _ = client.post(f"{game}/moves", turn, tokens[0])
        assert status == 200
        run.acknowledge(game, view["round"], view["turn"], 0, (card,))
        over, picked, found, unchosen, _ = check_game(run, client, game)
        assert (over, picked, found, unchosen) == (False, 1, 1, 0), run.problems
    finally:
        server.stop()


def test_once_the_run_is_closed_players_send_nothing_and_the_checks_still_read(
    database_url: str, tmp_path: Path
) -> None:
    """The checks run after the players' time with a deadline of their own: players that went
    on under it had picks acknowledged after their game's log was read ("lost" in a drill)."""
    server = Server(database_url, free_port(), 1, 4, tmp_path / "server.log")
    server.start()
    try:
        run = Run(Options(games=1, deadline=60), server.port)
        (game,) = create_games(run, 1)
        run.closed.set()
        sent = run.stats.requests
        play_seat(run, game, 0)  # returns at once, its join not sent
        assert run.stats.requests == sent
        checker = Client(run, random.Random(0), player=False)
        assert checker.call("GET", game)[0] == 200
    finally:
        server.stop()
