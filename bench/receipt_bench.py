"""What a receipt costs a move: CPU of signing one (HMAC commitment, RFC 8785, Ed25519, the
header's base64url) next to the CPU of a whole POST /games/{id}/moves handled in-process (Flask
test client, the real database), measured in the same run; printed as the receipt's share.

    python -m bench.receipt_bench       # on DATABASE_URL's server, else the embedded one
"""

from __future__ import annotations

import secrets
import time
import uuid
from typing import Any

import rfc8785

from domain import receipts
from service import keys
from service.http.app import create_app
from service.store import db

RECEIPTS = 3000
GAMES = 6


def receipt_cpu(ring: keys.Keyring) -> float:
    """CPU seconds per receipt, as the routes make them."""
    start = time.process_time()
    for version in range(1, RECEIPTS + 1):
        receipt = ring.receipt(uuid.uuid4(), version, "ab" * 32, bytes(32))
        receipts.b64url(rfc8785.dumps(receipt))
    return (time.process_time() - start) / RECEIPTS


def move_cpu(url: str) -> tuple[int, float]:
    """Moves made, and CPU seconds per POST /moves (2-player games, first card of the hand)."""
    with db.make_pool(url) as pool:
        http = create_app(pool=pool, config={"CARDROOM_CLOCK_INTERVAL": 0}).test_client()
        return _play(http)


def _play(http: Any) -> tuple[int, float]:
    moves, spent = 0, 0.0
    for _ in range(GAMES):
        game = http.post("/games", json={"game": "sushi-go", "players": 2}).get_json()["game_id"]
        tokens = [
            http.post(f"/games/{game}/players", json={"name": n}).get_json()["token"]
            for n in ("a", "b")
        ]
        over = False
        while not over:
            for token in tokens:
                auth = {"Authorization": f"Bearer {token}"}
                view = http.get(f"/games/{game}", headers=auth).get_json()
                over = view["status"] == "over"
                if over or view["you"]["pick"] is not None or not view["you"]["hand"]:
                    continue
                start = time.process_time()
                body = {"cards": [view["you"]["hand"][0]]}
                assert http.post(f"/games/{game}/moves", json=body, headers=auth).status_code == 200
                spent += time.process_time() - start
                moves += 1
    return moves, spent / moves


def main() -> None:
    name = f"cardroom_bench_{secrets.token_hex(4)}"
    server_url = db.database_url()
    url = db.ensure_database(server_url, name)
    try:
        db.migrate(url)
        per_receipt = receipt_cpu(keys.load())
        moves, per_move = move_cpu(url)
    finally:
        db.drop_database(server_url, name)
    print(f"receipt: {per_receipt * 1e6:.0f} us CPU ({RECEIPTS} signed)")
    print(f"POST /moves: {per_move * 1e6:.0f} us CPU ({moves} moves, receipt included)")
    print(f"a receipt is {per_receipt / per_move:.1%} of a move's CPU in this process")


if __name__ == "__main__":
    main()
