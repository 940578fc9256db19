"""``python -m cardroom_client.play --game sushi-go --bot mybot:MyBot URL``: seat a bot and play
to the end, following the stream.

``URL`` is the service (a new game is created: ``--players``, the other seats the service's
``--house`` bots unless ``--open``) or a game (``…/games/<id>``: the bot takes its next free
seat). The last line printed is the result as JSON: game, seat, status, totals, winners and the
audit of the receipts kept (once the game is over)."""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from typing import Any

from .bot import Bot
from .client import Client, game_id_of
from .models import BotSeat


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
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = arguments(argv)
    bot = load_bot(args.bot)
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
