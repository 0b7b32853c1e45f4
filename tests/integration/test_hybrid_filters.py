"""The importances and branch filters in hybrid search (ADR 0017): the vector index keeps no
importance or branch facets, so the rows that pass are handed to it by ID, and the fused
ranks are those of a store holding only those rows. Importance itself never moves a rank."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.test_hybrid_search import (
    config,
    fixture,
    ranks,
    running,
    section_5_stub,
)
from tests.support.embed_stub import EmbedStub


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def stub() -> Iterator[EmbedStub]:
    with section_5_stub() as s:
        yield s


@pytest.mark.anyio
async def test_importance_changes_no_hybrid_rank(tmp_path: Path, stub: EmbedStub) -> None:
    async with running(tmp_path / "store.db", config(stub)) as lib:
        m1, m2, m3 = await fixture(lib)
        lib.call("memory.update", {"id": m1, "revision": 1, "importance": "critical"})
        lib.call("memory.update", {"id": m2, "revision": 1, "importance": "low"})
        await lib.settle()
        result = await lib.search()
        assert result["mode"] == "hybrid"
        assert ranks(result) == [(m2, 1, 2), (m3, None, 1), (m1, 2, None)]
        assert [h["score"] for h in result["results"]] == [1 / 61 + 1 / 62, 1 / 61, 1 / 62]


@pytest.mark.anyio
async def test_hybrid_filters_rank_as_if_only_passing_rows_existed(
    tmp_path: Path, stub: EmbedStub
) -> None:
    async with running(tmp_path / "store.db", config(stub)) as lib:
        m1, m2, m3 = await fixture(lib)
        lib.call("memory.update", {"id": m3, "revision": 1, "importance": "critical"})
        lib.call("memory.update", {"id": m2, "revision": 1, "branches": ["feature/x"]})
        await lib.settle()
        critical = await lib.search(importances=["critical"])
        assert critical["mode"] == "hybrid"
        assert ranks(critical) == [(m3, None, 1)]
        normal = await lib.search(importances=["normal"])
        assert ranks(normal) == [(m2, 1, 1), (m1, 2, None)]
        on_main = await lib.search(branch="main")
        assert ranks(on_main) == [(m3, None, 1), (m1, 1, None)]
        on_feature = await lib.search(branch="feature/x")
        assert ranks(on_feature) == [(m2, 1, 2), (m3, None, 1), (m1, 2, None)]
        none = await lib.search(importances=["low"])
        assert none["results"] == []
