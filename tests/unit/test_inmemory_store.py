"""What only InMemoryStore has to show beyond the store contract: its description, that a
closed store and an ended transaction refuse, and that its transactions hold under threads."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from venom_mem_core.errors import VenomError
from venom_mem_core.inmemory import InMemoryStore
from venom_mem_core.testing import Env
from venom_mem_core.testing.support import draft


@pytest.fixture
def store() -> Iterator[InMemoryStore]:
    with InMemoryStore() as store:
        yield store


def test_describe(store: InMemoryStore) -> None:
    assert store.describe() == {
        "path": ":memory:",
        "schema_version": 3,
        "sqlite_version": "none",
        "engine": "in-memory",
        "bytes": 0,
    }
    store.erase_traces()


def test_closed_store_refuses() -> None:
    store = InMemoryStore()
    store.close()
    with pytest.raises(VenomError) as caught, store.read():
        pass
    assert caught.value.code == "failed.internal"


def test_transaction_is_dead_after_its_block(store: InMemoryStore) -> None:
    with store.write() as tx:
        tx.insert_memory(draft("text"))
    with pytest.raises(VenomError):
        tx.insert_memory(draft("after the block"))
    with store.read() as reader:
        assert reader.counts().memories == 1


def test_write_is_not_reentrant(store: InMemoryStore) -> None:
    with store.write(), pytest.raises(VenomError) as caught, store.write():
        pass
    assert caught.value.code == "failed.internal"


def test_reads_do_not_wait_for_a_write(store: InMemoryStore) -> None:
    inside, release = threading.Event(), threading.Event()

    def writer() -> None:
        with store.write() as tx:
            tx.insert_memory(draft("slow write"))
            inside.set()
            release.wait(5)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        assert inside.wait(5)
        with store.read() as reader:
            assert reader.counts().memories == 0
    finally:
        release.set()
        thread.join(5)
    with store.read() as reader:
        assert reader.counts().memories == 1


def test_racing_adds_and_updates(store: InMemoryStore) -> None:
    """MEM-04 at the store: one add wins, one update from a revision wins."""
    env = Env.on(store)
    results: list[dict[str, object]] = []

    def add() -> None:
        results.append(env.g1.call("memory.add", {"space": "user", "content": "race"}))

    threads = [threading.Thread(target=add) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 8
    assert sorted(r["changed"] is True for r in results) == [False] * 7 + [True]
    assert {r["id"] for r in results} == {"m1"}

    errors: list[str] = []

    def update(n: int) -> None:
        try:
            env.g1.call("memory.update", {"id": "m1", "revision": 1, "title": f"t{n}"})
        except VenomError as error:
            errors.append(error.code)

    threads = [threading.Thread(target=update, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == ["conflict.memory_revision"] * 7
