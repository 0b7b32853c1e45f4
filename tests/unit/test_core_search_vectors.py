"""memory.search with a vector index a step behind the store: stale hits are dropped."""

from __future__ import annotations

from collections.abc import Sequence

from venom_mem_core.clock import FixedClock
from venom_mem_core.inmemory import InMemoryStore
from venom_mem_core.local import LocalClient
from venom_mem_core.ports import MemoryFilter
from venom_mem_core.usecases.app import App
from venom_mem_core.usecases.principals import OWNER


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
    me = LocalClient(app, OWNER)
    kept = me.call("memory.add", {"space": "user", "content": "kept apple"})["id"]
    deleted = me.call("memory.add", {"space": "user", "content": "deleted pear"})["id"]
    purged = me.call("memory.add", {"space": "user", "content": "purged plum"})["id"]
    other = me.call("memory.add", {"space": "other", "content": "other fig"})["id"]
    me.call("memory.delete", {"id": deleted, "revision": 1})
    me.call("memory.purge", {"id": purged})
    stale = [(int(purged[1:]), 0.99), (int(deleted[1:]), 0.98)]
    app.vectors = LaggingIndex([*stale, (int(kept[1:]), 0.5), (int(other[1:]), 0.4)])
    result = me.call(
        "memory.search", {"query": "nothing matches this", "spaces": ["user"], "fusion": "rrf"}
    )
    assert result["mode"] == "hybrid"
    assert [(h["id"], h["vector_rank"]) for h in result["results"]] == [(kept, 1)]
    assert result["results"][0]["score"] == 1 / 61
