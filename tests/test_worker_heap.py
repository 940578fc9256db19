"""The gevent worker's cycle collector (service/http/heap.py): once its app is loaded, what is
alive is frozen out of every collection and the young generation is collected less often, so
that thousands of open connections do not make each request wait for full collections."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import pytest
from gunicorn.workers.ggevent import GeventWorker

from service.http import heap
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
