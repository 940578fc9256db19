"""No account token in clear in a dump of the database (issue 35's measure).

``python -m bench.account_tokens [--accounts N]``

A fresh database on the server ``DATABASE_URL`` names (else the embedded one; dropped after):
``N`` accounts created through the API (``POST /accounts``, on the app itself: rate limits off),
each minting a second token (``POST /accounts/me/tokens``), then ``pg_dump`` of the whole
database, searched for every token the API handed out (its 43 random characters, with and
without the ``cardroom_pat_`` prefix). Prints how many were found (goal: 0) and the dump's size.
Scratch databases only; nothing leaves this machine.
"""

from __future__ import annotations

import argparse
import os
import secrets
import subprocess
import time
import uuid

from bench.account_history import ensure_keys
from service.store import db

PREFIX = "cardroom_pat_"


def run(server_url: str, accounts: int) -> dict[str, int]:
    ensure_keys()
    os.environ.setdefault("CARDROOM_RATE_LIMITS", "off")
    os.environ.setdefault("CARDROOM_CLOCK_INTERVAL", "0")
    from service.http.app import create_app  # after the settings above

    name = f"cardroom_tokens_{secrets.token_hex(4)}"
    url = db.ensure_database(server_url, name)
    pool = None
    try:
        db.migrate(url)
        pool = db.make_pool(url, max_size=4)
        client = create_app(pool=pool).test_client()
        tokens = []
        for _ in range(accounts):
            made = client.post("/accounts", json={"name": f"acct{uuid.uuid4().hex[:16]}"})
            assert made.status_code == 201, made.get_data(as_text=True)
            token = made.get_json()["token"]
            headers = {"Authorization": f"Bearer {token}"}
            minted = client.post("/accounts/me/tokens", json={"scopes": ["play"]}, headers=headers)
            assert minted.status_code == 201, minted.get_data(as_text=True)
            tokens += [token, minted.get_json()["token"]]
        dump = subprocess.run(
            ["pg_dump", "--no-owner", url], capture_output=True, text=True, check=True
        ).stdout
        found = sum(1 for token in tokens if token.removeprefix(PREFIX) in dump)
        return {"accounts": accounts, "tokens": len(tokens), "found": found, "bytes": len(dump)}
    finally:
        if pool is not None:
            pool.close()
        db.drop_database(server_url, name)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.account_tokens", description=__doc__)
    parser.add_argument("--accounts", type=int, default=1_000)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    result = run(db.database_url(), args.accounts)
    print(
        f"{result['accounts']} accounts, {result['tokens']} tokens handed out; pg_dump"
        f" ({result['bytes'] / 1e6:.1f} MB) holds {result['found']} of them in clear (goal 0);"
        f" {time.perf_counter() - started:.0f} s"
    )


if __name__ == "__main__":
    main()
