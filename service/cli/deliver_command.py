"""``cardroom deliver``: a process that only delivers webhooks (service/webhooks/deliver.py), for
operators who keep delivery apart from the API's workers (docker-compose's ``deliver``
service). Any number may run beside ``cardroom serve`` on any hosts: claims make exactly one
post each message at a time. Stops on SIGTERM or SIGINT."""

from __future__ import annotations

import logging
import signal
import threading
from typing import Any

log = logging.getLogger("cardroom.deliver")


def deliver_command() -> int:
    from service import keys
    from service.live.hub import Hub
    from service.store import db
    from service.webhooks.deliver import Deliverer

    url = db.database_url()
    db.check_reachable(url)
    if not db.is_app_role(url):
        db.migrate(url)  # as `cardroom serve` does: the owner's URL brings the schema up to date
    ring = keys.load()
    stopping = threading.Event()

    def stop(number: int, frame: Any) -> None:
        stopping.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    with db.make_pool(db.app_url(url)) as pool:
        hub = Hub(lambda: str(pool.conninfo), name="cardroom-deliver")
        deliverer = Deliverer(pool, lambda: ring)
        hub.follow(deliverer.wake)
        hub.start()
        deliverer.start()
        log.info("delivering webhooks")
        stopping.wait()
        deliverer.stop()
        hub.stop()
    return 0
