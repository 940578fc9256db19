"""One read for many waiters (service/live/shared.py): an append wakes every watcher of a game at
once, and they must share one store read, not each make their own (issue 14: 10,000 watchers)."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from api_client import wait_until
from patience import scaled

from service.live.shared import SingleFlight

WAIT = scaled(5.0)  # seconds: a bound, never reached when all goes well


def test_callers_of_one_key_in_flight_share_one_call() -> None:
    flights: SingleFlight[int] = SingleFlight()
    gate, calls, results = threading.Event(), [], []

    def read(value: int) -> Callable[[], int]:
        def call() -> int:
            calls.append(value)
            gate.wait(WAIT)
            return value

        return call

    def ask(value: int) -> None:
        flight = flights.run("game 1 after 7", read(value))
        results.append(flight.result)

    leader = threading.Thread(target=ask, args=(1,))
    leader.start()
    wait_until(lambda: calls == [1])  # the leader is in its call
    followers = [threading.Thread(target=ask, args=(2 + i,)) for i in range(5)]
    for thread in followers:
        thread.start()
    flight = flights.in_flight("game 1 after 7")
    assert flight is not None
    wait_until(lambda: flight.followers == 5)
    other = flights.run("game 2 after 7", lambda: 99)  # another key does not wait
    assert other.result == 99
    gate.set()
    for thread in [leader, *followers]:
        thread.join(WAIT)
    assert calls == [1]  # one call for the six callers
    assert results == [1] * 6
    # Nothing is kept once it is over: the next caller calls again (it may be behind).
    assert flights.in_flight("game 1 after 7") is None
    assert flights.run("game 1 after 7", lambda: 3).result == 3


def test_a_failed_call_fails_its_followers_too() -> None:
    flights: SingleFlight[int] = SingleFlight()
    gate, errors = threading.Event(), []

    def failing() -> int:
        gate.wait(WAIT)
        raise ConnectionError("the database went away")

    def ask() -> None:
        try:
            flights.run("k", failing)
        except ConnectionError as exc:
            errors.append(exc)

    threads = [threading.Thread(target=ask) for _ in range(3)]
    threads[0].start()
    wait_until(lambda: flights.in_flight("k") is not None)
    for thread in threads[1:]:
        thread.start()
    wait_until(lambda: (flight := flights.in_flight("k")) is not None and flight.followers == 2)
    gate.set()
    for thread in threads:
        thread.join(WAIT)
    assert len(errors) == 3 and len({id(e) for e in errors}) == 1  # the one call's error
    with pytest.raises(ValueError):
        flights.run("k", lambda: int("x"))  # and the next caller calls again
