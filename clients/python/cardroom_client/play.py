"""``python -m cardroom_client.play --game sushi-go --bot mybot:MyBot URL``: seat a bot and play
to the end, following the stream.

``URL`` is the service (a new game is created: ``--players``, the other seats the service's
``--house`` bots unless ``--open``) or a game (``…/games/<id>``: the bot takes its next free
seat). The last line printed is the result as JSON: game, seat, status, totals, winners and the
audit of the receipts kept (once the game is over).

``python -m cardroom_client.play --account TOKEN --bot mybot:MyBot URL``: the bot plays as the
account (its personal access token, scope ``play``) every game the account sits in, from the
account's stream, and accepts the challenges offered to it; ``--quick sushi-go`` (with
``--players`` and ``--rules``) asks for a quick match, and another after each game it ends;
``--games N`` stops after N finished games (else it runs until stopped). It prints one JSON line
per finished game (game, seat, status, totals, winners)."""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from typing import Any

from .bot import Bot
from .client import Client, game_id_of
from .models import BotSeat, Move, View


def load_bot(spec: str) -> Bot:
    """``module:Class`` (or ``module:factory``) to a Bot."""
    module_name, _, attribute = spec.partition(":")
    if not attribute:
        raise SystemExit(f"--bot takes module:Class, not {spec!r}")
    made = getattr(importlib.import_module(module_name), attribute)()
    if not hasattr(made, "choose"):
        raise SystemExit(f"{spec} has no choose(view) method")
    bot: Bot = made
    return bot


def arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m cardroom_client.play", description=__doc__)
    parser.add_argument("url", help="the service's URL, or a game's (…/games/<id>)")
    parser.add_argument("--bot", required=True, help="module:Class of the Bot to play")
    parser.add_argument("--game", choices=("sushi-go", "sequence"), default="sushi-go")
    parser.add_argument("--name", default="bot")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--rules", default="{}", help="the game's options as JSON")
    parser.add_argument("--house", choices=("greedy", "random"), default="greedy")
    parser.add_argument("--open", action="store_true", help="leave the other seats to others")
    parser.add_argument("--account", help="play as this account (its token): every game it is in")
    parser.add_argument("--quick", choices=("sushi-go", "sequence"), help="quick match this game")
    parser.add_argument("--games", type=int, help="with --account: stop after N finished games")
    return parser.parse_args(argv)


def result_of(final: View) -> dict[str, Any]:
    you = final.you
    return {
        "game_id": final.game_id,
        "game": final.game,
        "seat": None if you is None else you.seat,
        "status": final.status,
        "totals": list(final.totals),
        "winners": list(final.winners),
    }


def play_account(args: argparse.Namespace, bot: Bot) -> dict[str, Any]:
    """The bot plays as the account until ``--games`` games are over (or forever)."""
    with Client(args.url.rstrip("/")) as client:
        account = client.account(args.account)
        rules = json.loads(args.rules)
        wanted = args.games

        def quick() -> None:
            seat = account.quick(args.quick, args.players, rules=rules)
            print(json.dumps({"quick": seat.id, "seat": seat.seat}), flush=True)

        def next_game() -> None:
            if args.quick and (wanted is None or len(finals) < wanted):
                quick()

        finals: dict[str, View] = {}
        reporting = Reporting(bot, finals)
        if args.quick:
            quick()
        reporting.play_account(account, games=wanted, next_game=next_game)
    summary = {"account_id": account.id, "games": [result_of(v) for v in finals.values()]}
    print(json.dumps(summary), flush=True)
    return summary


class Reporting(Bot):
    """The loaded bot, printing each finished game's result as it ends."""

    def __init__(self, bot: Bot, finals: dict[str, View]) -> None:
        self.bot, self.finals = bot, finals

    def choose(self, view: View) -> Move:
        return self.bot.choose(view)

    def game_over(self, view: View) -> None:
        self.finals[view.game_id] = view
        self.bot.game_over(view)
        print(json.dumps(result_of(view)), flush=True)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = arguments(argv)
    bot = load_bot(args.bot)
    if args.account:
        return play_account(args, bot)
    joining = "/games/" in args.url
    base = args.url.split("/games/")[0] if joining else args.url
    with Client(base) as client:
        if joining:
            game = client.game(game_id_of(args.url))
        else:
            house = () if args.open else range(1, args.players)
            bots = [BotSeat(seat, args.house) for seat in house]
            rules = json.loads(args.rules)
            game = client.create_game(args.game, args.players, rules=rules, bots=bots)
            print(json.dumps({"game_id": game.id, "url": game.url}), flush=True)
        seat = game.join(args.name)
        final = bot.play(seat)
        result: dict[str, Any] = {
            "game_id": game.id,
            "game": final.game,
            "seat": seat.seat,
            "status": final.status,
            "totals": list(final.totals),
            "winners": list(final.winners),
        }
        if final.status == "over":
            result["audit_ok"] = client.audit(game)["ok"]
    print(json.dumps(result), flush=True)
    return result


if __name__ == "__main__":
    sys.path.insert(0, "")  # --bot mybot:MyBot finds mybot.py in the working directory
    main()
