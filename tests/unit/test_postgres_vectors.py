"""Embeddings on PostgreSQL (docs/adr/0028): the vector port (embeddings/vector_rows.py)
behaves the same on both stores, the section 5 fixture's hybrid half gives SQLite's answers,
and what several daemons on one database need: a vector of stale text is never stored, even
when an update races the upsert; two daemons storing one memory's vector at once both
succeed; a vector one daemon's worker stores reaches the other daemon's index through the
relayed events, and a reload heals what a lost notification missed."""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import attrs
import numpy as np
import psycopg
import pytest

from tests.integration.test_hybrid_search import DIMS, M1, M2, M3, QUERY, section_5_stub, text
from tests.support.embed_stub import EmbedStub
from tests.support.postgres_server import PostgresServer, postgres_server
from tests.unit.test_postgres_search import stores
from venom_mem_adapters.daemon.event_log import EventLog
from venom_mem_adapters.embeddings.http_embedder import EmbeddingError
from venom_mem_adapters.embeddings.service import EmbeddingService, embedder_from_config
from venom_mem_adapters.embeddings.vector_rows import (
    HasVectorRows,
    PendingText,
    VectorRowStore,
    encode_vector,
)
from venom_mem_adapters.embeddings.worker import Backoff
from venom_mem_adapters.postgres import PostgresStore
from venom_mem_adapters.postgres.notify import EventBridge
from venom_mem_core.clock import SystemClock
from venom_mem_core.config import Config, EmbeddingsConfig
from venom_mem_core.local import LocalClient
from venom_mem_core.ports import Store
from venom_mem_core.testing.support import Env
from venom_mem_core.usecases.app import App
from venom_mem_core.usecases.principals import OWNER

__all__ = ["postgres_server", "stores"]  # the fixtures, imported for pytest

MODEL = "stub-model"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def pg(postgres_server: PostgresServer) -> Iterator[PostgresStore]:
    store = PostgresStore.open(postgres_server.fresh_url())
    try:
        yield store
    finally:
        store.close()


def rows_of(store: Store) -> VectorRowStore:
    assert isinstance(store, HasVectorRows)
    return store.vector_rows()


def pending_text(rows: VectorRowStore, memory: int) -> PendingText:
    with rows.read() as reads:
        found = [p for p in reads.pending_memories(limit=100) if p.id == memory]
    assert found, f"m{memory} is not pending"
    return found[0]


def stored_blobs(store: Store) -> dict[int, tuple[str, bytes]]:
    """memory_vectors as the store holds it, read with the store's own driver."""
    with store.read() as tx:
        connection: Any = getattr(tx, "connection")  # noqa: B009 (both transactions have it)
        rows = connection.execute(
            "SELECT memory, model, embedding FROM memory_vectors ORDER BY memory"
        ).fetchall()
    return {int(m): (str(model), bytes(blob)) for m, model, blob in rows}


# -- the port, the same on both stores ------------------------------------------------------


def test_the_port_gives_the_same_answers_and_bytes_on_both_stores(
    stores: tuple[Store, Store],
) -> None:
    seen = []
    for store in stores:
        env = Env.on(store)
        ids = [int(env.add(f"memory {n}", tags=["t"] if n % 2 else [])[1:]) for n in range(5)]
        env.g1.call("memory.delete", {"id": f"m{ids[4]}", "revision": 1})
        rows = rows_of(store)
        with rows.read() as reads:
            assert reads.count_pending() == 4
            pending = reads.pending_memories(limit=3)
        assert [p.id for p in pending] == [4, 3, 2]  # newest first
        with rows.write() as writes:
            for n, p in enumerate(pending):
                stored = writes.upsert_vector(p, MODEL, [1.0, float(n), 0.0, 0.0])
                assert stored is not None
                assert stored.id == p.id
            with pytest.raises(ValueError, match="nonzero"):
                writes.upsert_vector(pending_text(rows, 1), MODEL, [0.0] * DIMS)
        with rows.read() as reads:
            found = reads.stored_vector(4, MODEL, DIMS)  # the tagged one
            assert reads.stored_vector(1, MODEL, DIMS) is None
            assert reads.stored_vector(4, "other-model", DIMS) is None
            loaded = reads.load_vectors(MODEL, DIMS, spare_fraction=0.0, min_spare=2)
            counts = (reads.count_pending(), reads.count_vectors(), reads.count_vectors("x"))
        assert found is not None
        assert found.facets.tags == ("t",)
        assert found.facets.author == "g1"
        seen.append(
            (
                [p.id for p in pending],
                found.vector.tolist(),
                loaded.ids.tolist(),
                loaded.matrix[: len(loaded.ids)].tolist(),
                loaded.matrix.shape,
                loaded.tags,
                counts,
                stored_blobs(store),
            )
        )
    assert seen[0] == seen[1]
    blobs = seen[1][-1]
    assert blobs[4] == (MODEL, encode_vector([1.0, 0.0, 0.0, 0.0]))  # little-endian f32 unit


def test_a_changed_text_is_not_stored_and_other_models_are_dropped(
    stores: tuple[Store, Store],
) -> None:
    for store in stores:
        env = Env.on(store)
        first, second = env.add("first"), env.add("second")
        rows = rows_of(store)
        old = pending_text(rows, int(first[1:]))
        env.g1.call("memory.update", {"id": first, "revision": 1, "content": "first, edited"})
        with rows.write() as writes:
            assert writes.upsert_vector(old, MODEL, [1.0, 0.0, 0.0, 0.0]) is None
            other = pending_text(rows, int(second[1:]))
            assert writes.upsert_vector(other, "old-model", [1.0, 0.0, 0.0, 0.0]) is not None
        with rows.read() as reads:
            loaded = reads.load_vectors(MODEL, DIMS, spare_fraction=0.0, min_spare=0)
        assert loaded.ids.tolist() == []
        assert loaded.stale == [int(second[1:])]
        with rows.write() as writes:
            assert writes.delete_stale_vectors(MODEL, DIMS) == 1
        assert stored_blobs(store) == {}


def test_the_load_reads_every_page(pg: PostgresStore, monkeypatch: pytest.MonkeyPatch) -> None:
    from venom_mem_adapters.postgres import vectors

    monkeypatch.setattr(vectors, "_PAGE", 2)
    env = Env.on(pg)
    for n in range(7):
        env.add(f"paged {n}")
    rows = rows_of(pg)
    with rows.read() as reads:
        pending = reads.pending_memories(limit=10)
    with rows.write() as writes:
        for p in pending:
            writes.upsert_vector(p, MODEL, [1.0, float(p.id), 0.0, 0.0])
    with rows.read() as reads:
        loaded = reads.load_vectors(MODEL, DIMS, spare_fraction=0.0, min_spare=0)
    assert loaded.ids.tolist() == [1, 2, 3, 4, 5, 6, 7]
    expected = [encode_vector([1.0, float(n), 0.0, 0.0]) for n in range(1, 8)]
    assert [row.tobytes() for row in loaded.matrix] == expected


# -- several daemons on one database --------------------------------------------------------


def test_an_update_racing_an_upsert_leaves_no_vector_of_the_old_text(pg: PostgresStore) -> None:
    """The upsert holds its share lock on the memory; another daemon's update of the text
    waits for it, and its trigger then deletes the vector just stored."""
    env = Env.on(pg)
    memory = env.add("original text")
    rows = rows_of(pg)
    old = pending_text(rows, int(memory[1:]))
    updated = threading.Event()
    outcome: list[Any] = []

    def update() -> None:
        outcome.append(
            env.g1.call("memory.update", {"id": memory, "revision": 1, "content": "new text"})
        )
        updated.set()

    with rows.write() as writes:
        assert writes.upsert_vector(old, MODEL, [1.0, 0.0, 0.0, 0.0]) is not None
        racer = threading.Thread(target=update)
        racer.start()
        assert not updated.wait(0.5)  # it waits for the share lock
    racer.join(10)
    assert outcome
    assert outcome[0]["revision"] == 2
    assert stored_blobs(pg) == {}
    with rows.read() as reads:
        assert [p.content for p in reads.pending_memories(limit=5)] == ["new text"]


def test_two_daemons_storing_one_memory_at_once_both_succeed(
    pg: PostgresStore, postgres_server: PostgresServer
) -> None:
    env = Env.on(pg)
    memory = int(env.add("embedded twice")[1:])
    second = PostgresStore.open(_full_url(pg, postgres_server))
    try:
        first_rows, second_rows = rows_of(pg), rows_of(second)
        text = pending_text(first_rows, memory)
        done = threading.Event()
        errors: list[BaseException] = []

        def store_second() -> None:
            try:
                with second_rows.write() as writes:
                    assert writes.upsert_vector(text, MODEL, [0.0, 1.0, 0.0, 0.0]) is not None
            except BaseException as exc:  # reported below
                errors.append(exc)
            done.set()

        with first_rows.write() as writes:
            assert writes.upsert_vector(text, MODEL, [1.0, 0.0, 0.0, 0.0]) is not None
            racer = threading.Thread(target=store_second)
            racer.start()
            assert not done.wait(0.5)  # the second insert waits on the first's row
        racer.join(10)
        assert errors == []
        assert stored_blobs(pg) == {memory: (MODEL, encode_vector([0.0, 1.0, 0.0, 0.0]))}
    finally:
        second.close()


def _full_url(store: PostgresStore, server: PostgresServer) -> str:
    """The URL the store was opened with: its public URL plus the test server's socket."""
    schema = store.url.split("search_path%3D", 1)[1]
    return server.url(schema=schema)


# -- the section 5 fixture, hybrid, on both stores -------------------------------------------


@asynccontextmanager
async def serving(store: Store, stub: EmbedStub) -> AsyncIterator[tuple[App, EmbeddingService]]:
    cfg = EmbeddingsConfig(provider="http", base_url=stub.base_url, model=MODEL, dimensions=DIMS)
    events = EventLog(SystemClock())
    app = App(
        store=store,
        clock=SystemClock(),
        events=events,
        embedder=embedder_from_config(cfg),
        settings=Config(embeddings=cfg).memory_settings(),
    )
    assert isinstance(store, HasVectorRows)
    service = EmbeddingService(app=app, store=store, config=cfg, events=events)
    service.start()
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(service.run)
            yield app, service
            tg.cancel_scope.cancel()
    finally:
        service.close()


@pytest.mark.anyio
async def test_section_5_fixture_hybrid_matches_sqlite(stores: tuple[Store, Store]) -> None:
    """RFC-0020 section 5 with embeddings on: m2 (fts 1, vector 2), m3 (vector 1), m1 (fts 2),
    with the same scores, similarities and snippets on both stores."""
    answers = []
    with section_5_stub() as stub:
        for store in stores:
            async with serving(store, stub) as (app, service):
                for memory in (M1, M2, M3):
                    LocalClient(app, OWNER).call("memory.add", memory)
                assert await anyio.to_thread.run_sync(service.worker.wait_idle, 10)
                search = functools.partial(
                    LocalClient(app, OWNER).call, "memory.search", {"query": QUERY, "fusion": "rrf"}
                )
                answers.append(await anyio.to_thread.run_sync(search))
    lite, pg = answers
    assert pg["mode"] == "hybrid"
    assert [(h["id"], h.get("fts_rank"), h.get("vector_rank")) for h in pg["results"]] == [
        ("m2", 1, 2),
        ("m3", None, 1),
        ("m1", 2, None),
    ]
    ranked = ("id", "fts_rank", "vector_rank", "score", "similarity", "snippet", "content")
    assert [{k: h.get(k) for k in ranked} for h in pg["results"]] == [
        {k: h.get(k) for k in ranked} for h in lite["results"]
    ]  # (the timestamps differ: two adds at two moments)
    assert {k: v for k, v in pg.items() if k != "results"} == {
        k: v for k, v in lite.items() if k != "results"
    }
    similarities = [h.get("similarity") for h in pg["results"]]
    assert similarities[1] == pytest.approx(float(np.dot([1, 0], [0.9, 0.1]) / np.hypot(0.9, 0.1)))


# -- two daemons' indexes on one database, kept in step by the relayed events ---------------


class QueriesOnly:
    """B's provider: answers the search query and fails every memory's text, so B's index
    can learn a memory's vector only from what A's worker stored (a fake, not a mock)."""

    def __init__(self, real: Any) -> None:
        self._real = real
        self.model, self.dimensions = real.model, real.dimensions

    def embed(self, texts: Any, *, timeout_s: float) -> list[list[float]]:
        if list(texts) != [QUERY]:
            raise EmbeddingError("status", "this daemon's provider embeds queries only")
        result: list[list[float]] = self._real.embed(texts, timeout_s=timeout_s)
        return result


@attrs.define
class Daemon:
    app: App
    service: EmbeddingService
    bridge: EventBridge

    def add(self, memory: dict[str, str]) -> str:
        return str(LocalClient(self.app, OWNER).call("memory.add", memory)["id"])

    def ids(self) -> set[int]:
        return set(self.service.index.ids())

    async def search(self) -> list[tuple[str, int | None, int | None]]:
        call = functools.partial(
            LocalClient(self.app, OWNER).call, "memory.search", {"query": QUERY, "fusion": "rrf"}
        )
        result = await anyio.to_thread.run_sync(call)
        assert result["mode"] == "hybrid"
        return [(h["id"], h.get("fts_rank"), h.get("vector_rank")) for h in result["results"]]


async def until(check: Callable[[], bool], what: str) -> None:
    """The relay and the workers are asynchronous: the end state is asserted, within 20 s."""
    with anyio.fail_after(20):
        while not check():
            await anyio.sleep(0.05)
    assert check(), what


@asynccontextmanager
async def two_daemons(
    url: str, stub: EmbedStub, *, queries_only: tuple[bool, bool] = (False, True)
) -> AsyncIterator[tuple[Daemon, Daemon]]:
    """A and B on one database; ``queries_only`` says whose provider fails memories' text."""
    cfg = EmbeddingsConfig(provider="http", base_url=stub.base_url, model=MODEL, dimensions=DIMS)
    with contextlib.ExitStack() as stack:
        daemons = []
        for fails_texts in queries_only:
            store = PostgresStore.open(url)
            stack.callback(store.close)
            events = EventLog(SystemClock())
            bridge = EventBridge(url, events)
            bridge.start()  # listening before the index loads, as serve does
            stack.callback(bridge.close)
            embedder: Any = embedder_from_config(cfg)
            app = App(
                store=store,
                clock=SystemClock(),
                events=events,
                embedder=QueriesOnly(embedder) if fails_texts else embedder,
                settings=Config(embeddings=cfg).memory_settings(),
            )
            service = EmbeddingService(
                app=app,
                store=store,
                config=cfg,
                events=events,
                backoff=Backoff(0.05, 0.1),
                shared=True,
            )
            service.start()
            stack.callback(service.close)
            daemons.append(Daemon(app=app, service=service, bridge=bridge))
        async with anyio.create_task_group() as tg:
            for daemon in daemons:
                tg.start_soon(daemon.service.run)
            yield daemons[0], daemons[1]
            tg.cancel_scope.cancel()


@pytest.mark.anyio
async def test_a_vector_stored_by_one_daemon_reaches_the_others_index(
    pg: PostgresStore, postgres_server: PostgresServer
) -> None:
    with section_5_stub() as stub:
        async with two_daemons(_full_url(pg, postgres_server), stub) as (a, b):
            m1, m2, m3 = a.add(M1), a.add(M2), a.add(M3)
            await until(lambda: b.ids() == {1, 2, 3}, "B indexed A's three vectors")
            assert await b.search() == [(m2, 1, 2), (m3, None, 1), (m1, 2, None)]
            assert b.service.worker.state.embedded == 0  # B embedded none of them

            updated = {**M3, "content": "Upgrade the compiler toolchain slowly."}
            stub.set(text(updated), [0.6, 0.8, 0.0, 0.0])
            LocalClient(a.app, OWNER).call(
                "memory.update", {"id": m3, "revision": 1, "content": updated["content"]}
            )
            new = encode_vector([0.6, 0.8, 0.0, 0.0])

            def b_has_new_vector() -> bool:
                row = b.service.index.get(3)
                return row is not None and row[0].astype("<f4").tobytes() == new

            await until(b_has_new_vector, "B's row for m3 is the new text's vector")
            assert await b.search() == [(m2, 1, 1), (m3, None, 2), (m1, 2, None)]

            LocalClient(a.app, OWNER).call("memory.delete", {"id": m2, "revision": 1})
            await until(lambda: b.ids() == {1, 3}, "B dropped m2's row")
            assert await b.search() == [(m3, None, 1), (m1, 1, None)]


@pytest.mark.anyio
async def test_a_daemons_own_memories_embedded_by_another_reach_its_index(
    pg: PostgresStore, postgres_server: PostgresServer
) -> None:
    """The other way round: A adds, but A's provider fails memories' text and B (woken by
    the relay) embeds them. They are never pending on A again, so A indexes them only if it
    awaits its own new text as it awaits the relayed."""
    with section_5_stub() as stub:
        url = _full_url(pg, postgres_server)
        async with two_daemons(url, stub, queries_only=(True, False)) as (a, b):
            m1, m2, m3 = a.add(M1), a.add(M2), a.add(M3)
            await until(lambda: b.ids() == {1, 2, 3}, "B embedded A's three memories")
            await until(lambda: a.ids() == {1, 2, 3}, "A indexed B's vectors of its memories")
            assert a.service.worker.state.embedded == 0  # A embedded none of them
            assert await a.search() == [(m2, 1, 2), (m3, None, 1), (m1, 2, None)]


@pytest.mark.anyio
async def test_a_reload_catches_up_with_what_the_relay_missed(
    pg: PostgresStore, postgres_server: PostgresServer
) -> None:
    """What a lost notification costs, and how it heals: B hears nothing while its listener
    is away; the reload (which the bridge calls once it listens again) brings B in step."""
    with section_5_stub() as stub:
        async with two_daemons(_full_url(pg, postgres_server), stub) as (a, b):
            m1 = a.add(M1)
            await until(lambda: b.ids() == {1}, "B indexed m1")
            b.bridge.close()  # B hears no more of A
            m2 = a.add(M2)
            LocalClient(a.app, OWNER).call("memory.delete", {"id": m1, "revision": 1})
            await until(lambda: a.ids() == {2}, "A embedded m2")
            assert b.ids() == {1}  # B missed both
            await anyio.to_thread.run_sync(b.service.reload)
            assert b.ids() == {int(m2[1:])}


def test_the_bridge_calls_back_once_it_listens_again(
    pg: PostgresStore, postgres_server: PostgresServer
) -> None:
    url = _full_url(pg, postgres_server)
    bridge = EventBridge(url, EventLog(SystemClock()))
    relistened = threading.Event()
    bridge.after_relisten(relistened.set)
    bridge.start()
    try:
        assert not relistened.is_set()  # not for the first LISTEN
        with psycopg.connect(url, autocommit=True) as admin:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE query LIKE 'LISTEN %%' AND pid <> pg_backend_pid()"
            )
        assert relistened.wait(20)
    finally:
        bridge.close()
