"""memory.search with a vector index a step behind the store: stale hits are dropped."""

from __future__ import annotations

from collections.abc import Sequence

from venom_mem_core.clock import FixedClock
from venom_mem_core.inmemory import InMemoryStore
from venom_mem_core.ports import MemoryFilter
from venom_mem_core.usecases.app import App
from venom_mem_core.usecases.memories import add_memory, delete_memory, purge_memory
from venom_mem_core.usecases.principals import OWNER
from venom_mem_core.usecases.search import search_memories


class FixedEmbedder:
    model = "fixed"
    dimensions = 2

    def embed(self, texts: Sequence[str], *, timeout_s: float) -> list[list[float]]:
        return [[1.0, 0.0] for _ in texts]


class LaggingIndex:
    """Answers from what it was told, whatever the store holds now."""

    def __init__(self, hits: list[tuple[int, float]]) -> None:
        self.hits = hits

    def nearest(
        self, query: Sequence[float], where: MemoryFilter, limit: int, min_similarity: float
    ) -> list[tuple[int, float]]:
        return self.hits[:limit]

    def __contains__(self, id: object) -> bool:
        return any(id == number for number, _ in self.hits)


def test_hits_for_gone_or_deleted_memories_are_dropped_and_ranks_close_up() -> None:
    app = App(store=InMemoryStore(), clock=FixedClock(), embedder=FixedEmbedder())
    kept = add_memory(app, OWNER, space="user", content="kept apple")["id"]
    deleted = add_memory(app, OWNER, space="user", content="deleted pear")["id"]
    purged = add_memory(app, OWNER, space="user", content="purged plum")["id"]
    other = add_memory(app, OWNER, space="other", content="other fig")["id"]
    delete_memory(app, OWNER, id=deleted, revision=1)
    purge_memory(app, OWNER, id=purged)
    stale = [(int(purged[1:]), 0.99), (int(deleted[1:]), 0.98)]
    app.vectors = LaggingIndex([*stale, (int(kept[1:]), 0.5), (int(other[1:]), 0.4)])
    result = search_memories(
        app, OWNER, query="nothing matches this", spaces=["user"], fusion="rrf"
    )
    assert result["mode"] == "hybrid"
    assert [(h["id"], h["vector_rank"]) for h in result["results"]] == [(kept, 1)]
    assert result["results"][0]["score"] == 1 / 61
