"""``cardroom sign-finished``: sign the finished games that have no stored signature.

Since migration 0014 the service signs a game once, when it finishes, in the statement that
appends its last event (service/store/signatures.py). Games that finished before have no
signature; this one-off command, run by the operator after the upgrade, signs each of them
with the active signing key *as its rows are at that moment*. Such a signature proves the
history from then on, not before: a rewrite made before the command ran is signed with the
rest (the README's "What each kind of evidence proves" says so). It is not run by ``migrate``:
a migration has no access to the keys, and the operator should choose when to vouch for the
old rows.
"""

from __future__ import annotations

import sys


def sign_finished_command() -> int:
    from service import keys
    from service.store import db, signatures
    from service.store.events import EventStore

    url = db.database_url()
    db.check_reachable(url)
    ring = keys.load()
    with db.make_pool(url, max_size=2) as pool:
        store = EventStore(pool)
        games = signatures.unsigned(store)
        signed = sum(signatures.sign_unsigned(store, ring.receipt, game) for game in games)
    print(f"signed {signed} finished game(s) that had no signature (key {ring.active_signing})")
    print(
        "these signatures vouch for the games as their rows are now, not for before",
        file=sys.stderr,
    )
    return 0
