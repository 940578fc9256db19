"""The gevent worker's cycle collector (service/http/heap.py): once its app is loaded, what is
alive is frozen out of every collection, the young generation is collected every second and
otherwise less often, and a waiting stream holds few objects, so that thousands of open
connections do not make each request wait for long collections."""

from __future__ import annotations

import gc
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import gevent
import pytest
from gunicorn.workers.ggevent import GeventWorker

from service.http import heap, worker
from service.http.worker import CardroomWorker


@pytest.fixture
def collector() -> Iterator[None]:
    """This test process's collector as it was, afterwards."""
    thresholds = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)


class _App:
    pass


def _loaded_worker(monkeypatch: pytest.MonkeyPatch) -> CardroomWorker:
    def load_wsgi(self: Any) -> None:
        self.wsgi = _App()

    monkeypatch.setattr(GeventWorker, "load_wsgi", load_wsgi)
    loaded = object.__new__(CardroomWorker)
    CardroomWorker.load_wsgi(loaded)
    return loaded


@pytest.mark.usefixtures("collector")
def test_the_worker_freezes_what_its_app_holds_once_loaded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    gc.unfreeze()
    loaded = _loaded_worker(monkeypatch)
    assert gc.get_freeze_count() > 0
    assert gc.is_tracked(loaded.flask_app) and not any(
        loaded.flask_app is o for o in gc.get_objects()
    ), "the loaded app is out of every collection"
    assert gc.get_threshold() == (heap.YOUNG, heap.MIDDLE, heap.OLD)


@pytest.mark.usefixtures("collector")
def test_cycles_made_after_it_are_still_collected() -> None:
    heap.settle()

    class Node:
        pass

    for _ in range(3):
        node = Node()
        node.me = node  # type: ignore[attr-defined]
        del node
    assert gc.collect(0) >= 3  # a young collection finds them (not frozen: made after)


@pytest.mark.usefixtures("collector")
def test_the_worker_collects_its_young_generation_every_second(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spawned: list[tuple[Any, ...]] = []
    monkeypatch.setattr(worker.gevent, "spawn", lambda *args: spawned.append(args))
    _loaded_worker(monkeypatch)
    assert spawned == [(heap.collect_young, gevent.sleep)]
    assert heap.YOUNG_SECONDS == 1.0


@pytest.mark.usefixtures("collector")
def test_collect_young_collects_after_each_sleep_and_the_middle_generation_when_due() -> None:
    """Young collections asked for alone never collect the middle generation (Python applies
    its thresholds only to the collections it starts): it would grow with every survivor for
    one long collection later. So every MIDDLE + 1-th one takes the middle generation too."""
    slept: list[float] = []
    collected: list[int] = []

    def sleep(seconds: float) -> None:
        if len(slept) == 8:
            raise StopIteration  # ends the loop: eight rounds seen
        slept.append(seconds)

    def callback(phase: str, info: dict[str, int]) -> None:
        if phase == "stop":
            collected.append(info["generation"])

    heap.settle()
    gc.disable()  # only the collections collect_young asks for
    gc.callbacks.append(callback)
    try:
        with pytest.raises(StopIteration):
            heap.collect_young(sleep, 0.25)
    finally:
        gc.callbacks.remove(callback)
        gc.enable()
    assert slept == [0.25] * 8
    assert collected == [0, 0, 0, 1, 0, 0, 0, 1]


# A gevent-patched process with N streams waiting on the hub, each watching its client's
# socket; it prints how many tracked objects each wait allocated and holds while it waits.
WAITING_STREAMS = """
from gevent import monkey; monkey.patch_all()
import gc, socket, sys, uuid, gevent
from service.http.hangup import Hangup
from service.live.hub import Hub
N = 300
hub = Hub(lambda: sys.argv[1])
assert hub.start()
pairs = [socket.socketpair() for _ in range(N)]
game = uuid.uuid4()
def stream(i):
    hangup = Hangup(pairs[i][0])
    while True:
        hub.wait(game, 0, 0.2 + i / N / 10, hangup)  # a heartbeat: wait again
waiting = [gevent.spawn(stream, i) for i in range(N)]
gevent.sleep(0.1)
gc.collect(); gc.freeze(); gc.disable()
gevent.sleep(0.4)  # every stream waited again once since the freeze
print(len(gc.get_objects(0)) / N)
"""


def test_a_waiting_stream_holds_few_objects_for_the_young_collections(database_url: str) -> None:
    """Each stream waits again after every heartbeat: what a wait holds while it waits is what
    the young collections beside 10,000 open streams walk (service/http/heap.py). It was 19
    objects (a generator, a context manager, a closure and its cells, a dict per waiter)."""
    done = subprocess.run(
        [sys.executable, "-c", WAITING_STREAMS, database_url],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert float(done.stdout) < 14
