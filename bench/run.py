"""`make bench`: benchmarks against a scratch database made for the run and dropped after it.

The server is the one ``DATABASE_URL`` names, else the embedded PostgreSQL (as for `serve`).
Set BENCH_OPS to change the number of operations per loop. (An HTTP benchmark joins later.)
"""

from __future__ import annotations

import os
import secrets

from bench import store_bench
from service import db


def main() -> None:
    server_url = db.database_url()
    name = f"cardroom_bench_{secrets.token_hex(4)}"
    url = db.ensure_database(server_url, name)
    try:
        db.migrate(url)
        for result in store_bench.run(url, int(os.environ.get("BENCH_OPS", "1000"))):
            print(result)
    finally:
        db.drop_database(server_url, name)


if __name__ == "__main__":
    main()
