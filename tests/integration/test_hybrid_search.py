"""Hybrid search and MEM-07 at the library level: a real SqliteStore, the core App, the
EmbeddingService with its worker running, and a real embeddings server on 127.0.0.1.

No account and no network: the stub answers fixed vectors per input text.
"""

from __future__ import annotations

import functools
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import attrs
import numpy as np
import pytest

from tests.support.embed_stub import EmbedStub, embed_stub
from venom_mem_adapters.daemon.event_log import EventLog
from venom_mem_adapters.daemon.ops.doctor import run_checks
from venom_mem_adapters.embeddings.service import EmbeddingService, embedder_from_config
from venom_mem_adapters.embeddings.worker import Backoff
from venom_mem_adapters.health import Inputs
from venom_mem_adapters.sqlite import SqliteStore
from venom_mem_adapters.sqlite.backend import SqliteBackend
from venom_mem_core import LocalClient
from venom_mem_core.clock import FixedClock, SystemClock
from venom_mem_core.config import Config, EmbeddingsConfig
from venom_mem_core.embedding_text import embedding_input
from venom_mem_core.errors import VenomError
from venom_mem_core.records import Grant, Principal
from venom_mem_core.usecases.app import App
from venom_mem_core.usecases.principals import OWNER

DIMS = 4
QUERY = "zig pin"
M1 = {"space": "project/venom-std", "content": "Which zig version to use is in the notes."}
M2 = {
    "space": "project/venom-std",
    "title": "Zig pin",
    "content": "venom-std pins Zig with .zigversion; check it before upgrading.",
}
M3 = {"space": "project/venom-std", "content": "Upgrade the compiler toolchain carefully."}
KEY = "sk-local-test-key"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@contextmanager
def section_5_stub() -> Iterator[EmbedStub]:
    """The stub serving the section 5 fixture's vectors."""
    with embed_stub(dimensions=DIMS) as s:
        # The query points along x; m3 is closest, m2 next, m1 points away (similarity < 0,
        # so below search.min_similarity = 0.0 and not in the vector list at all).
        s.set(QUERY, [1.0, 0.0, 0.0, 0.0])
        s.set(text(M3), [0.9, 0.1, 0.0, 0.0])
        s.set(text(M2), [0.5, 0.5, 0.0, 0.0])
        s.set(text(M1), [-0.5, 0.5, 0.0, 0.0])
        yield s


@pytest.fixture
def stub() -> Iterator[EmbedStub]:
    with section_5_stub() as s:
        yield s


def text(m: dict[str, str]) -> str:
    return embedding_input(m.get("title", ""), m["content"], 32768)


@attrs.define
class Lib:
    store: SqliteStore
    app: App
    service: EmbeddingService

    def call(self, verb: str, params: dict[str, Any]) -> dict[str, Any]:
        """A verb as the owner, in process (as the daemon would run it after hello)."""
        return LocalClient(self.app, OWNER).call(verb, params)

    def add(self, **params: Any) -> str:
        return str(self.call("memory.add", params)["id"])

    async def settle(self) -> None:
        assert await anyio.to_thread.run_sync(self.service.worker.wait_idle, 10)

    async def search(self, who: Principal = OWNER, **params: Any) -> dict[str, Any]:
        """memory.search (the core's use case, embedding the query through the app's
        embedder) under RFC-0020's own fusion unless told (``fusion=None``: the store's
        default)."""
        call = functools.partial(
            LocalClient(self.app, who).call,
            "memory.search",
            {k: v for k, v in {"query": QUERY, "fusion": "rrf", **params}.items() if v is not None},
        )
        return await anyio.to_thread.run_sync(call)

    async def embedding(self, id_: str) -> str:
        got = await anyio.to_thread.run_sync(
            functools.partial(self.call, "memory.get", {"id": id_})
        )
        return str(got["embedding"])

    def stored(self) -> dict[int, str]:
        with self.store.read() as tx:
            rows = tx._connection.execute("SELECT memory, model FROM memory_vectors").fetchall()
        return {int(str(m)): str(model) for m, model in rows}


def config(stub: EmbedStub, **kw: Any) -> EmbeddingsConfig:
    return EmbeddingsConfig(
        **{
            "provider": "http",
            "base_url": stub.base_url,
            "model": "stub-model",
            "dimensions": DIMS,
            **kw,
        }
    )


@asynccontextmanager
async def running(path: Path, cfg: EmbeddingsConfig, **kw: Any) -> AsyncIterator[Lib]:
    store = SqliteStore.open(path)
    events = EventLog(SystemClock())
    app = App(
        store=store,
        clock=SystemClock(),
        events=events,
        embedder=embedder_from_config(cfg),
        settings=Config(embeddings=cfg).memory_settings(),  # the query's timeout and bytes
    )
    service = EmbeddingService(app=app, store=store, config=cfg, events=events, **kw)
    service.start()
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(service.run)
            yield Lib(store=store, app=app, service=service)
            tg.cancel_scope.cancel()
    finally:
        service.close()
        store.close()


async def doctor(lib: Lib, cfg: EmbeddingsConfig | None = None) -> dict[str, dict[str, str]]:
    """doctor's checks as the daemon runs them, with the service's facts."""
    inputs = Inputs(
        store=lib.store.path,
        config=Config(embeddings=cfg or lib.service._config),
        on_demand=False,
        facts=lib.service.embedding_facts(),
        health=getattr(lib.app.embedder, "last_health", None),
    )
    report = await anyio.to_thread.run_sync(run_checks, inputs, SqliteBackend(lib.store.path))
    return {c["id"]: c for c in report["checks"] if c["id"].startswith("embeddings.")}


def ids(result: dict[str, Any]) -> list[str]:
    return [hit["id"] for hit in result["results"]]


def ranks(result: dict[str, Any]) -> list[tuple[str, int | None, int | None]]:
    return [(h["id"], h.get("fts_rank"), h.get("vector_rank")) for h in result["results"]]


async def fixture(lib: Lib) -> tuple[str, str, str]:
    m1, m2, m3 = lib.add(**M1), lib.add(**M2), lib.add(**M3)
    await lib.settle()
    return m1, m2, m3


# -- the section 5 fixture --------------------------------------------------------------------


@pytest.mark.anyio
async def test_section_5_fixture_hybrid(tmp_path: Path, stub: EmbedStub) -> None:
    async with running(tmp_path / "store.db", config(stub)) as lib:
        m1, m2, m3 = await fixture(lib)
        result = await lib.search()
    assert result["mode"] == "hybrid"
    assert "fallback" not in result
    assert ranks(result) == [(m2, 1, 2), (m3, None, 1), (m1, 2, None)]
    scores = [h["score"] for h in result["results"]]
    assert scores == [1 / 61 + 1 / 62, 1 / 61, 1 / 62]
    assert scores[0] == pytest.approx(0.03252247, abs=5e-9)
    by_id = {h["id"]: h for h in result["results"]}
    assert by_id[m3]["similarity"] == pytest.approx(0.9 / np.hypot(0.9, 0.1), abs=1e-6)
    assert by_id[m2]["similarity"] == pytest.approx(np.sqrt(0.5), abs=1e-6)
    assert "similarity" not in by_id[m1]
    assert by_id[m3]["snippet"] == M3["content"]  # a vector-only hit: the first 240 bytes


@pytest.mark.anyio
async def test_section_5_fixture_under_each_fusion(tmp_path: Path, stub: EmbedStub) -> None:
    """docs/adr/0016: ``rrf`` is the fixture exactly, whatever the store's default; the other
    options on the same lists (similarities: m3 0.994, m2 0.707)."""
    async with running(tmp_path / "store.db", config(stub)) as lib:
        m1, m2, m3 = await fixture(lib)
        lib.app.settings = attrs.evolve(lib.app.settings, fusion="rerank")  # a store default
        rrf = await lib.search(fusion="rrf")
        default = await lib.search(fusion=None)
        weighted = await lib.search(fusion="weighted")
        margin = await lib.search(fusion="margin")
        rerank = await lib.search(fusion="rerank")
        convex = await lib.search(fusion="convex")
        vector_only = await lib.search(mode="vector", fusion="convex")
        fts_only = await lib.search(mode="fts", fusion="convex")
    # One list alone is scored as section 5 does, whatever the fusion.
    assert [h["score"] for h in vector_only["results"]] == [1 / 61, 1 / 62]
    assert [h["score"] for h in fts_only["results"]] == [1 / 61, 1 / 62]
    # convex: m2 has the best BM25 (0.8) and the lower similarity (scaled to 0 of 2).
    assert ranks(convex)[0] == (m2, 1, 2)
    assert convex["results"][0]["score"] == 0.8
    assert ranks(rrf) == [(m2, 1, 2), (m3, None, 1), (m1, 2, None)]
    assert [h["score"] for h in rrf["results"]] == [1 / 61 + 1 / 62, 1 / 61, 1 / 62]
    assert default == rerank
    assert ranks(rerank) == [(m2, 1, 2), (m1, 2, None), (m3, None, 1)]
    assert [h["score"] for h in rerank["results"]] == [1 / 61 + 1 / 62, 1 / 62, 0.0]
    assert ranks(weighted) == [(m2, 1, 2), (m1, 2, None), (m3, None, 1)]
    assert [h["score"] for h in weighted["results"]] == [1 / 61 + 0.5 / 62, 1 / 62, 0.5 / 61]
    # m2 is 0.29 below m3, outside the 0.1 margin: it keeps only its full-text vote.
    assert ranks(margin) == [(m3, None, 1), (m2, 1, None), (m1, 2, None)]
    assert {r["mode"] for r in (rrf, weighted, margin, rerank)} == {"hybrid"}


@pytest.mark.anyio
async def test_a_vector_only_snippet_ends_at_a_word_with_an_ellipsis(
    tmp_path: Path, stub: EmbedStub
) -> None:
    long = {"space": "project/venom-std", "content": "Upgrade the toolchain " + "carefully " * 40}
    stub.set(text(long), [1.0, 0.0, 0.0, 0.0])
    async with running(tmp_path / "store.db", config(stub)) as lib:
        lib.add(**long)
        await lib.settle()
        (hit,) = (await lib.search(mode="vector"))["results"]
    assert hit["snippet"].endswith("carefully…")
    assert len(hit["snippet"].encode()) <= 240


@pytest.mark.anyio
async def test_section_5_fixture_with_embeddings_off(tmp_path: Path, stub: EmbedStub) -> None:
    path = tmp_path / "store.db"
    async with running(path, config(stub)) as lib:
        await fixture(lib)  # the vectors are stored, and must be ignored once off
        assert len(lib.stored()) == 3
    with SqliteStore.open(path) as store:
        app = App(store=store, clock=SystemClock())
        result = LocalClient(app, OWNER).call("memory.search", {"query": QUERY})
        assert result["mode"] == "fts"
        assert "fallback" not in result
        assert ranks(result) == [("m2", 1, None), ("m1", 2, None)]
        assert [h["score"] for h in result["results"]] == [1 / 61, 1 / 62]
        with pytest.raises(VenomError) as err:
            LocalClient(app, OWNER).call("memory.search", {"query": QUERY, "mode": "vector"})
        assert err.value.code == "unsupported.embeddings_off"


@pytest.mark.anyio
async def test_modes_fts_and_vector(tmp_path: Path, stub: EmbedStub) -> None:
    async with running(tmp_path / "store.db", config(stub)) as lib:
        m1, m2, m3 = await fixture(lib)
        before = len(stub.recorded())
        fts = await lib.search(mode="fts")
        assert len(stub.recorded()) == before  # fts never calls the provider
        vector = await lib.search(mode="vector")
    assert fts["mode"] == "fts"
    assert ids(fts) == [m2, m1]
    assert vector["mode"] == "vector"
    assert ranks(vector) == [(m3, None, 1), (m2, None, 2)]


@pytest.mark.anyio
async def test_a_query_with_no_words_is_refused_before_any_call(
    tmp_path: Path, stub: EmbedStub
) -> None:
    async with running(tmp_path / "store.db", config(stub)) as lib:
        await lib.settle()
        before = len(stub.recorded())
        with pytest.raises(VenomError) as err:
            await lib.search(query="   ")
    assert err.value.code == "invalid_params.query"
    assert len(stub.recorded()) == before


# -- MEM-07: the provider failing or hanging --------------------------------------------------


@pytest.mark.anyio
async def test_a_failing_provider_falls_back_to_fts(tmp_path: Path, stub: EmbedStub) -> None:
    async with running(tmp_path / "store.db", config(stub)) as lib:
        m1, m2, _ = await fixture(lib)
        stub.mode = "fail"
        result = await lib.search()
        assert result["mode"] == "fts"
        assert result["fallback"] == "embedding_unavailable"
        assert ranks(result) == [(m2, 1, None), (m1, 2, None)]
        with pytest.raises(VenomError) as err:
            await lib.search(mode="vector")
        assert err.value.code == "unavailable.embeddings"
        assert err.value.data == {}


@pytest.mark.anyio
async def test_a_hung_provider_times_out_to_fts(tmp_path: Path, stub: EmbedStub) -> None:
    async with running(tmp_path / "store.db", config(stub, query_timeout_ms=300)) as lib:
        m1, m2, _ = await fixture(lib)
        stub.mode = "hang"
        started = time.monotonic()
        result = await lib.search()
        took = time.monotonic() - started
        assert result["mode"] == "fts"
        assert result["fallback"] == "embedding_unavailable"
        assert ids(result) == [m2, m1]
        assert 0.25 < took < 1.5
        with pytest.raises(VenomError) as err:
            await lib.search(mode="vector")
        assert err.value.code == "unavailable.embeddings"
        stub.release()


@pytest.mark.anyio
async def test_add_answers_while_the_provider_hangs(tmp_path: Path, stub: EmbedStub) -> None:
    stub.mode = "hang"
    async with running(tmp_path / "store.db", config(stub)) as lib:
        first = lib.add(space="user", content="the worker is now stuck embedding this")
        with anyio.fail_after(5):
            while not stub.recorded():  # the worker's batch is in the hung server
                await anyio.sleep(0.01)
        for n in range(5):
            started = time.monotonic()
            add = functools.partial(
                lib.call,
                "memory.add",
                {"space": "user", "content": f"note {n}"},
            )
            added = await anyio.to_thread.run_sync(add)
            assert time.monotonic() - started < 0.5
            assert added["changed"] is True
        assert await lib.embedding(first) == "pending"
        assert await lib.embedding(added["id"]) == "pending"
        stub.mode = "ok"
        stub.release()
        await lib.settle()
        assert await lib.embedding(added["id"]) == "ready"
        assert len(lib.stored()) == 6


@pytest.mark.anyio
async def test_failures_leave_memories_pending_and_back_off(
    tmp_path: Path, stub: EmbedStub
) -> None:
    stub.mode = "fail"
    backoff = Backoff(start=0.2, cap=0.2)
    async with running(tmp_path / "store.db", config(stub), backoff=backoff) as lib:
        mid = lib.add(space="user", content="waiting for a vector")
        with anyio.fail_after(5):
            while lib.service.worker.state.failures < 2:
                await anyio.sleep(0.01)
        assert await lib.embedding(mid) == "pending"
        assert lib.stored() == {}
        status = await anyio.to_thread.run_sync(lib.service.status)
        assert status["pending"] == 1
        health = (await doctor(lib))["embeddings.health"]
        assert health["status"] == "warn"
        assert "HTTP 500" in health["message"]
        stub.mode = "ok"
        await lib.settle()
        assert await lib.embedding(mid) == "ready"


@pytest.mark.anyio
async def test_a_wrong_length_is_not_stored_and_doctor_says_so(
    tmp_path: Path, stub: EmbedStub
) -> None:
    stub.mode = "wrong_length"
    async with running(tmp_path / "store.db", config(stub), backoff=Backoff(start=30)) as lib:
        lib.add(space="user", content="five numbers come back for this")
        with anyio.fail_after(5):
            while lib.service.worker.state.failures < 1:
                await anyio.sleep(0.01)
        assert lib.stored() == {}
        assert len(lib.service.index) == 0
        assert lib.service.worker.state.last_reason == "dimensions"
        health = (await doctor(lib))["embeddings.health"]
    assert health["status"] == "warn"
    assert "length 5" in health["message"]
    assert "dimensions is 4" in health["message"]


# -- MEM-07: a changed model, a changed text ---------------------------------------------------


@pytest.mark.anyio
async def test_changing_the_model_re_embeds_after_restart(tmp_path: Path, stub: EmbedStub) -> None:
    path = tmp_path / "store.db"
    async with running(path, config(stub, model="model-a")) as lib:
        await fixture(lib)
        assert set(lib.stored().values()) == {"model-a"}
        assert len(lib.service.index) == 3
    stub.requests.clear()
    async with running(path, config(stub, model="model-b")) as lib:
        assert lib.service.dropped_at_start == 3
        await lib.settle()
        assert lib.stored() == dict.fromkeys(range(1, 4), "model-b")
        assert len(lib.service.index) == 3
        result = await lib.search()
    assert {r.body["model"] for r in stub.recorded()} == {"model-b"}
    assert sorted(t for batch in stub.inputs()[:-1] for t in batch) == sorted(
        [text(M1), text(M2), text(M3)]
    )
    assert ranks(result) == [("m2", 1, 2), ("m3", None, 1), ("m1", 2, None)]


@pytest.mark.anyio
async def test_restarting_with_the_same_model_keeps_vectors(
    tmp_path: Path, stub: EmbedStub
) -> None:
    path = tmp_path / "store.db"
    async with running(path, config(stub)) as lib:
        await fixture(lib)
    stub.requests.clear()
    async with running(path, config(stub)) as lib:
        await lib.settle()
        assert lib.service.dropped_at_start == 0
        assert len(lib.service.index) == 3
        result = await lib.search()
    assert stub.inputs() == [[QUERY]]  # only the query was embedded
    assert result["mode"] == "hybrid"


@pytest.mark.parametrize("change", ["title", "content"])
@pytest.mark.anyio
async def test_a_changed_text_drops_the_vector_and_it_comes_back(
    tmp_path: Path, stub: EmbedStub, change: str
) -> None:
    async with running(tmp_path / "store.db", config(stub)) as lib:
        _m1, _m2, m3 = await fixture(lib)
        number = int(m3[1:])
        stub.mode = "hang"  # hold the re-embedding so the gap can be seen
        new = {"title": "Toolchain"} if change == "title" else {"content": "Upgrade slowly."}
        lib.call("memory.update", {"id": m3, "revision": 1, **new})
        assert number not in lib.stored()
        assert number not in lib.service.index
        assert await lib.embedding(m3) == "pending"
        stub.mode = "ok"
        stub.release()
        await lib.settle()
        assert lib.stored()[number] == "stub-model"
        assert number in lib.service.index
        assert await lib.embedding(m3) == "ready"
    changed = {**M3, **new}
    assert [text(changed)] in stub.inputs()


@pytest.mark.anyio
async def test_a_tags_change_keeps_the_vector_and_moves_the_filter(
    tmp_path: Path, stub: EmbedStub
) -> None:
    async with running(tmp_path / "store.db", config(stub)) as lib:
        _m1, _m2, m3 = await fixture(lib)
        calls = len(stub.recorded())
        assert ids(await lib.search(tags=["zig"])) == []
        lib.call("memory.update", {"id": m3, "revision": 1, "tags": ["zig"], "kind": "fact"})
        assert await lib.embedding(m3) == "ready"
        result = await lib.search(tags=["zig"], kinds=["fact"])
        assert ranks(result) == [(m3, 1, 1)]  # the tag now matches the text query too
        await lib.settle()
        assert len(stub.recorded()) == calls + 2  # two queries, no re-embedding


@pytest.mark.anyio
async def test_delete_restore_and_purge_keep_the_index_in_step(
    tmp_path: Path, stub: EmbedStub
) -> None:
    async with running(tmp_path / "store.db", config(stub)) as lib:
        m1, m2, m3 = await fixture(lib)
        stub.mode = "hang"
        lib.call("memory.delete", {"id": m3, "revision": 1})
        assert int(m3[1:]) not in lib.service.index
        assert ids(await lib.search(mode="fts")) == [m2, m1]
        lib.call("memory.restore", {"id": m3})
        assert await lib.embedding(m3) == "pending"
        stub.mode = "ok"
        stub.release()
        await lib.settle()
        assert await lib.embedding(m3) == "ready"
        assert ranks(await lib.search())[1] == (m3, None, 1)
        lib.call("memory.purge", {"id": m3})
        assert int(m3[1:]) not in lib.service.index
        assert ids(await lib.search(mode="vector")) == [m2]


@pytest.mark.anyio
async def test_unreadable_memories_take_no_vector_rank(tmp_path: Path, stub: EmbedStub) -> None:
    reader = Principal(id="g1", grants=(Grant(right="read", scope="space:user"),))
    async with running(tmp_path / "store.db", config(stub)) as lib:
        await fixture(lib)  # all three in project/venom-std, which g1 can't read
        stub.set(text({"content": "a user note about zig"}), [0.1, 0.9, 0.0, 0.0])
        mine = lib.add(space="user", content="a user note about zig")
        await lib.settle()
        result = await lib.search(reader)
    assert ranks(result) == [(mine, 1, 1)]


# -- the request log ---------------------------------------------------------------------------


@pytest.mark.parametrize("api_key", ["", KEY])
@pytest.mark.anyio
async def test_batches_of_at_most_32_and_only_the_configured_key(
    tmp_path: Path, stub: EmbedStub, api_key: str
) -> None:
    path = tmp_path / "store.db"
    with SqliteStore.open(path) as store:  # a backlog written with embeddings off
        app = App(store=store, clock=SystemClock())
        for n in range(70):
            LocalClient(app, OWNER).call(
                "memory.add", {"space": "user", "content": f"backlog note {n}"}
            )
    async with running(path, config(stub, api_key=api_key)) as lib:
        await lib.settle()
        assert len(lib.stored()) == 70
        await lib.search()
    sizes = [len(batch) for batch in stub.inputs()]
    assert sizes == [32, 32, 6, 1]  # three batches, then the query
    for request in stub.recorded():
        names = {k.lower() for k, _ in request.headers}
        assert "cookie" not in names
        assert "proxy-authorization" not in names
        if api_key:
            assert request.header("Authorization") == [f"Bearer {api_key}"]
        else:
            assert "authorization" not in names


# -- doctor and config -------------------------------------------------------------------------


@pytest.mark.anyio
async def test_doctor_warns_of_memories_pending_since_before_the_daemon(
    tmp_path: Path, stub: EmbedStub
) -> None:
    """RFC-0020 section 11: embeddings.pending warns when memories have stayed pending for
    over an hour; a daemon minutes old counts those from before it when the provider fails."""
    path = tmp_path / "store.db"
    store = SqliteStore.open(path)
    old = App(store=store, clock=FixedClock(datetime(2020, 1, 1, tzinfo=UTC)))
    LocalClient(old, OWNER).call("memory.add", {"space": "user", "content": "waiting since 2020"})
    store.close()
    stub.mode = "fail"
    async with running(path, config(stub)) as lib:
        with anyio.fail_after(10):
            while (await doctor(lib))["embeddings.health"]["status"] != "warn":
                await anyio.sleep(0.05)  # the worker's first call has failed
        checks = await doctor(lib)
    assert checks["embeddings.pending"]["status"] == "warn"
    assert checks["embeddings.pending"]["message"].startswith("1 memories")


@pytest.mark.anyio
async def test_doctor_with_the_services_facts(tmp_path: Path, stub: EmbedStub) -> None:
    async with running(tmp_path / "store.db", config(stub)) as lib:
        assert (await doctor(lib))["embeddings.health"]["message"] == (
            "No embeddings call has been made yet"
        )
        await fixture(lib)
        facts = lib.service.embedding_facts()
        checks = await doctor(lib)
        remote = await doctor(lib, config(stub, base_url="https://embeddings.example.com/v1"))
        many = await doctor(lib, config(stub, warn_vectors=2))
    assert facts == {
        "vectors": 3,
        "last_error": None,
        "last_ok": facts.get("last_ok"),
        "pending_over_hour": 0,
    }
    assert facts.get("last_ok")
    assert {c["status"] for c in checks.values()} == {"ok"}
    assert checks["embeddings.vectors"]["message"].startswith("3 vectors")
    assert remote["embeddings.remote"]["status"] == "warn"
    assert "embeddings.example.com" in remote["embeddings.remote"]["message"]
    assert many["embeddings.vectors"]["status"] == "warn"


def test_a_plain_http_remote_url_is_refused() -> None:
    with pytest.raises(VenomError) as err:
        EmbeddingsConfig(provider="http", base_url="http://10.0.0.1/v1", model="m", dimensions=3)
    assert err.value.code == "invalid_params.embeddings_url"


@pytest.mark.anyio
async def test_status_counts_vectors_and_pending(tmp_path: Path, stub: EmbedStub) -> None:
    async with running(tmp_path / "store.db", config(stub)) as lib:
        await fixture(lib)
        status = await anyio.to_thread.run_sync(lib.service.status)
    assert status["vectors"] == 3
    assert status["indexed"] == 3
    assert status["pending"] == 0
    assert status["remote"] is False
    assert status["worker"]["embedded"] == 3


# -- in process: LocalClient --------------------------------------------------------------------


@pytest.mark.anyio
async def test_local_client_searches_hybrid_in_process(tmp_path: Path, stub: EmbedStub) -> None:
    """An in-process App with the HTTP embedder and the service's index: LocalClient's
    memory.search embeds the query through the app's embedder (one request to the loopback
    stub, the query as its input) and is hybrid; memory.get's embedding is the index's."""
    async with running(tmp_path / "store.db", config(stub)) as lib:
        m1, m2, m3 = await fixture(lib)
        me = LocalClient(lib.app, OWNER)
        before = len(stub.inputs())

        def call(verb: str, params: dict[str, Any]) -> dict[str, Any]:
            return me.call(verb, params)

        result = await anyio.to_thread.run_sync(call, "memory.search", {"query": QUERY})
        asked = stub.inputs()[before:]
        fts = await anyio.to_thread.run_sync(call, "memory.search", {"query": QUERY, "mode": "fts"})
        got = await anyio.to_thread.run_sync(call, "memory.get", {"id": m3})
        stub.mode = "hang"
        lib.call("memory.update", {"id": m3, "revision": 1, "content": "changed"})
        pending = await anyio.to_thread.run_sync(call, "memory.get", {"id": m3})
        stub.release()
    assert asked == [[QUERY]]
    assert result["mode"] == "hybrid"
    assert ranks(result) == [(m2, 1, 2), (m3, None, 1), (m1, 2, None)]
    assert fts["mode"] == "fts"
    assert ids(fts) == [m2, m1]
    assert got["embedding"] == "ready"
    assert pending["embedding"] == "pending"
