"""Issue 36's signature measure: recorded webhook deliveries (bodies shaped like ``game.turn``,
signed by service/webhooks/sign.py for endpoints with secrets of their own) checked as receivers
check them: ``v1`` by the ``standardwebhooks`` library with the endpoint's secret, ``v1a`` with
the published JWK Set alone (cardroom_client.webhooks.verify: none of the service's code, no
secret). Then one byte of each body is changed (a random position, XOR a random non-zero value)
and both checks run again: none may pass. The costs of signing and of each check are printed
beside them, measured in the same run.

    python -m bench.webhook_signatures                  # 1,000 deliveries
    python -m bench.webhook_signatures --count 10000 --seed 7 --json

Exits 1 unless every delivery passes both checks and no changed one passes either.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

from cardroom_client.webhooks import WebhookError
from cardroom_client.webhooks import verify as verify_v1a
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

from service import keys
from service.webhooks import sign

ENDPOINTS = 20  # endpoint secrets the deliveries are spread over


@dataclass(frozen=True)
class Delivery:
    body: bytes
    headers: dict[str, str]
    secret: str


@dataclass
class Report:
    deliveries: int
    v1_pass: int
    v1a_pass: int
    changed_v1_pass: int
    changed_v1a_pass: int
    sign_us: float  # per delivery, both signatures
    v1_verify_us: float
    v1a_verify_us: float

    @property
    def ok(self) -> bool:
        n = self.deliveries
        return (self.v1_pass, self.v1a_pass, self.changed_v1_pass, self.changed_v1a_pass) == (
            n,
            n,
            0,
            0,
        )

    def text(self) -> str:
        n = self.deliveries
        verdict = "ok" if self.ok else "FAILED"
        return "\n".join(
            [
                f"webhook signatures, {n:,} recorded game.turn deliveries ({ENDPOINTS} endpoints):",
                f"  v1 (standardwebhooks, endpoint secret)  {self.v1_pass:,}/{n:,} pass",
                f"  v1a (Ed25519, published JWK Set alone)  {self.v1a_pass:,}/{n:,} pass",
                f"  one body byte changed, v1               {self.changed_v1_pass:,}/{n:,} pass",
                f"  one body byte changed, v1a              {self.changed_v1a_pass:,}/{n:,} pass",
                f"  cost: sign both {self.sign_us:.0f} us, check v1 {self.v1_verify_us:.0f} us,"
                f" check v1a {self.v1a_verify_us:.0f} us"
                f" (v1a/v1 {self.v1a_verify_us / max(self.v1_verify_us, 1e-9):.1f}x)",
                f"  {verdict}",
            ]
        )


def turn_body(rng: random.Random, version: int) -> bytes:
    """A ``game.turn`` delivery's body: thin, as the issue has it (type, game, version, links,
    the subscribing seat's own news)."""
    game_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    seat = rng.randrange(5)
    event = {
        "type": "game.turn",
        "timestamp": datetime.now(UTC).isoformat(timespec="seconds"),
        "data": {
            "game_id": game_id,
            "game": rng.choice(["sushi-go", "sequence"]),
            "version": version,
            "seat": seat,
            "your_turn": True,
            "links": {
                "game": f"https://cardroom.example/games/{game_id}",
                "view": f"https://cardroom.example/games/{game_id}?seat={seat}",
            },
        },
    }
    return json.dumps(event, separators=(",", ":")).encode()


def record(count: int, ring: keys.Keyring, rng: random.Random) -> tuple[list[Delivery], float]:
    """``count`` deliveries signed now, and the seconds their signing took."""
    secrets = [sign.new_secret() for _ in range(ENDPOINTS)]
    bodies = [turn_body(rng, rng.randrange(1, 400)) for _ in range(count)]
    now = int(time.time())
    started = time.perf_counter()
    recorded = []
    for n, body in enumerate(bodies):
        secret = secrets[n % ENDPOINTS]
        msg_id = f"msg_{uuid.UUID(int=rng.getrandbits(128), version=4).hex}"
        recorded.append(Delivery(body, sign.headers(msg_id, now, body, secret, ring), secret))
    return recorded, time.perf_counter() - started


def passes_v1(body: bytes, headers: Mapping[str, str], secret: str) -> bool:
    try:
        Webhook(secret).verify(body, dict(headers))
    except (WebhookVerificationError, UnicodeDecodeError, ValueError):
        return False  # a changed byte may also leave the body no longer UTF-8
    return True


def passes_v1a(body: bytes, headers: Mapping[str, str], jwks: Mapping[str, Any]) -> bool:
    try:
        verify_v1a(body, headers, jwks)
    except WebhookError as error:
        return error.reason == "body"  # verified, only not JSON any more: still a pass
    return True


def changed(body: bytes, rng: random.Random) -> bytes:
    flipped = bytearray(body)
    flipped[rng.randrange(len(body))] ^= rng.randrange(1, 256)
    return bytes(flipped)


def timed(check: Callable[[Delivery], bool], deliveries: list[Delivery]) -> tuple[int, float]:
    started = time.perf_counter()
    passed = sum(1 for delivery in deliveries if check(delivery))
    return passed, (time.perf_counter() - started) / max(len(deliveries), 1) * 1e6


def run(count: int, seed: int = 36) -> Report:
    rng = random.Random(seed)
    ring = keys.Keyring.from_jwks({"keys": keys.new_pair()})
    published = json.loads(json.dumps(ring.jwks()))  # the public JWK Set, as served: no secret
    recorded, signing = record(count, ring, rng)
    v1_pass, v1_us = timed(lambda d: passes_v1(d.body, d.headers, d.secret), recorded)
    v1a_pass, v1a_us = timed(lambda d: passes_v1a(d.body, d.headers, published), recorded)
    altered = [Delivery(changed(d.body, rng), d.headers, d.secret) for d in recorded]
    return Report(
        deliveries=count,
        v1_pass=v1_pass,
        v1a_pass=v1a_pass,
        changed_v1_pass=sum(passes_v1(d.body, d.headers, d.secret) for d in altered),
        changed_v1a_pass=sum(passes_v1a(d.body, d.headers, published) for d in altered),
        sign_us=signing / max(count, 1) * 1e6,
        v1_verify_us=v1_us,
        v1a_verify_us=v1a_us,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=1000, help="deliveries (default 1000)")
    parser.add_argument("--seed", type=int, default=36, help="bodies and changed bytes")
    parser.add_argument("--json", action="store_true", help="one JSON line instead of text")
    args = parser.parse_args(argv)
    report = run(args.count, args.seed)
    print(json.dumps({**asdict(report), "ok": report.ok}) if args.json else report.text())
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
