"""The background worker with hand-written fakes: batches, backoff, notify, stop."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence

import anyio
import pytest

from venom_mem_adapters.embeddings.http_embedder import EmbeddingError
from venom_mem_adapters.embeddings.vector_rows import PendingText
from venom_mem_adapters.embeddings.worker import Backoff, EmbeddingWorker
from venom_mem_core.errors import VenomError


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class FakeEmbedder:
    model = "fake"
    dimensions = 2

    def __init__(self) -> None:
        self.calls: list[list[str]] = []
        self.fail: EmbeddingError | None = None
        self.gate = threading.Event()
        self.gate.set()

    def embed(self, texts: Sequence[str], *, timeout_s: float) -> list[list[float]]:
        self.gate.wait(10)
        self.calls.append(list(texts))
        if self.fail is not None:
            raise self.fail
        return [[1.0, float(len(t))] for t in texts]


class FakeTable:
    """Pending memories and stored vectors, as the service's callbacks would see them."""

    def __init__(self, count: int) -> None:
        self.lock = threading.Lock()
        self.texts = {i: f"memory {i}" for i in range(1, count + 1)}
        self.vectors: dict[int, Sequence[float]] = {}

    def add(self, id_: int) -> None:
        with self.lock:
            self.texts[id_] = f"memory {id_}"

    def fetch(self, limit: int) -> list[PendingText]:
        with self.lock:
            ids = sorted((i for i in self.texts if i not in self.vectors), reverse=True)[:limit]
            return [
                PendingText(
                    id=i,
                    title="T",
                    content=self.texts[i],
                    content_sha256=hashlib.sha256(self.texts[i].encode()).digest(),
                )
                for i in ids
            ]

    def store(self, items: Sequence[tuple[PendingText, Sequence[float]]]) -> int:
        with self.lock:
            for pending, vector in items:
                self.vectors[pending.id] = vector
            return len(items)


def worker(
    table: FakeTable, embedder: FakeEmbedder, backoff: Backoff | None = None
) -> EmbeddingWorker:
    return EmbeddingWorker(
        embedder=embedder,
        fetch_pending=table.fetch,
        store=table.store,
        max_input_bytes=12,
        batch_timeout_s=5,
        backoff=backoff,
    )


def test_backoff_doubles_from_five_seconds_to_an_hour() -> None:
    b = Backoff()
    delays = [b.failed() for _ in range(12)]
    assert delays[:5] == [5, 10, 20, 40, 80]
    assert delays[-1] == 3600
    assert max(delays) == 3600
    b.succeeded()
    assert b.delay is None
    assert b.failed() == 5


@pytest.mark.anyio
async def test_a_backlog_is_embedded_in_batches_of_at_most_32() -> None:
    table, embedder = FakeTable(100), FakeEmbedder()
    w = worker(table, embedder)
    async with anyio.create_task_group() as tg:
        tg.start_soon(w.run)
        assert await anyio.to_thread.run_sync(w.wait_idle, 10)
        tg.cancel_scope.cancel()
    assert len(table.vectors) == 100
    assert [len(c) for c in embedder.calls] == [32, 32, 32, 4]
    assert embedder.calls[0][0] == "T\n\nmemory 100"[:12]  # cut to max_input_bytes
    assert w.state.embedded == 100
    assert not w.state.running


@pytest.mark.anyio
async def test_notify_embeds_a_new_memory_promptly() -> None:
    table, embedder = FakeTable(0), FakeEmbedder()
    w = worker(table, embedder)
    async with anyio.create_task_group() as tg:
        tg.start_soon(w.run)
        assert await anyio.to_thread.run_sync(w.wait_idle, 10)
        table.add(7)
        w.notify()
        assert await anyio.to_thread.run_sync(w.wait_idle, 10)
        assert 7 in table.vectors
        w.stop()
    assert not w.state.running


@pytest.mark.anyio
async def test_a_failure_leaves_memories_pending_and_backs_off() -> None:
    table, embedder = FakeTable(3), FakeEmbedder()
    embedder.fail = EmbeddingError("status", "stub answered HTTP 500")
    w = worker(table, embedder, Backoff(start=0.2, cap=0.4))
    async with anyio.create_task_group() as tg:
        tg.start_soon(w.run)
        with anyio.fail_after(5):
            while w.state.failures < 1:
                await anyio.sleep(0.01)
        assert table.vectors == {}
        state = w.state
        assert state.last_reason == "status"
        assert state.backoff_s == 0.2
        assert state.retry_in_s is not None
        assert state.retry_in_s > 0
        for _ in range(5):  # writes during the backoff don't cut it short
            w.notify()
        await anyio.sleep(0.1)
        assert w.state.failures == 1
        with anyio.fail_after(5):
            while w.state.failures < 3:
                await anyio.sleep(0.01)
        assert w.state.backoff_s == 0.4  # doubled, then capped
        embedder.fail = None
        with anyio.fail_after(5):
            while len(table.vectors) < 3:
                await anyio.sleep(0.01)
        assert w.state.backoff_s is None
        assert w.state.last_error is None
        tg.cancel_scope.cancel()


@pytest.mark.anyio
async def test_stop_ends_the_worker_while_idle() -> None:
    w = worker(FakeTable(0), FakeEmbedder())
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(w.run)
            await anyio.to_thread.run_sync(w.wait_idle, 5)
            w.stop()
    assert not w.state.running


def test_batch_size_is_at_most_32() -> None:
    with pytest.raises(ValueError, match="batch_size"):
        EmbeddingWorker(
            embedder=FakeEmbedder(),
            fetch_pending=FakeTable(0).fetch,
            store=FakeTable(0).store,
            max_input_bytes=10,
            batch_timeout_s=1,
            batch_size=33,
        )


@pytest.mark.anyio
async def test_a_store_error_backs_off_instead_of_ending_the_worker() -> None:
    table, embedder = FakeTable(2), FakeEmbedder()
    calls = []

    def busy(items: Sequence[tuple[PendingText, Sequence[float]]]) -> int:
        calls.append(len(items))
        if len(calls) == 1:
            raise VenomError("unavailable.store_busy", "the store is busy")
        return table.store(items)

    w = EmbeddingWorker(
        embedder=embedder,
        fetch_pending=table.fetch,
        store=busy,
        max_input_bytes=100,
        batch_timeout_s=5,
        backoff=Backoff(start=0.05),
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(w.run)
        with anyio.fail_after(5):
            while len(table.vectors) < 2:
                await anyio.sleep(0.01)
        assert w.state.failures == 1
        assert w.state.running
        tg.cancel_scope.cancel()
