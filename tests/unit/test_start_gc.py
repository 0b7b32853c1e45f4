"""start_gc: the collector paused through a start, and resumed once with the start's objects
frozen (docs/adr/0038)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from venom_mem_adapters import start_gc


@pytest.fixture(autouse=True)
def _collector_restored() -> Iterator[None]:
    was = gc.isenabled()
    yield
    start_gc.resume()
    gc.unfreeze()
    if was:
        gc.enable()


def test_pause_stops_the_collector_until_resume_freezes_and_restarts_it() -> None:
    gc.enable()
    gc.unfreeze()
    start_gc.pause()
    assert not gc.isenabled()
    made_at_start = [object() for _ in range(10)]
    start_gc.resume()
    assert gc.isenabled()
    assert gc.get_freeze_count() >= len(made_at_start)


def test_resume_without_a_pause_leaves_the_collector_as_it_was() -> None:
    gc.disable()
    gc.unfreeze()
    start_gc.resume()
    assert not gc.isenabled()
    assert gc.get_freeze_count() == 0
