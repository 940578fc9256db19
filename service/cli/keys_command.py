"""``cardroom keys ACTION``: show, init, rotate (the keys file), retire and check (against the
database's key ids: service/key_registry.py)."""

from __future__ import annotations

import argparse
import json
import sys


def keys_command(args: argparse.Namespace) -> int:
    """``cardroom keys ACTION``: 0 done, 1 the keys do not match the database, 2 refused."""
    from service import keys

    action = "rotate" if args.rotate else args.action
    if (action == "retire") != bool(args.kid):
        print("cardroom keys: retire takes one key id (and only retire does)", file=sys.stderr)
        return 2
    try:
        if action == "init":
            print(f"new keys written to {keys.init()}: back them up apart from the database")
            return 0
        if action == "rotate":
            print(
                f"new keys added to {keys.rotate()}: give every host this file; new games use"
                " the new keys from each host's next start",
                file=sys.stderr,
            )
        elif action in ("retire", "check"):
            return _keys_in_database(action, args.kid)
        print(json.dumps(keys.read().jwks(), indent=2))
    except keys.KeysError as exc:
        print(f"cardroom keys: {exc}", file=sys.stderr)
        return 2
    return 0


def _keys_in_database(action: str, kid: str | None) -> int:
    from service import key_registry, keys
    from service.store import db

    url = db.database_url()
    db.check_reachable(url)
    if action == "retire":
        assert kid is not None
        key_registry.retire(url, kid)
        print(f"{kid} retired: {keys.drop_secret(kid)} no longer holds its secret")
        return 0
    found = key_registry.check(url)
    if found:
        print(f"cardroom keys: {found}", file=sys.stderr)
        return 1
    print(f"the keys at {keys.source()} hold every key id the database has used")
    return 0
