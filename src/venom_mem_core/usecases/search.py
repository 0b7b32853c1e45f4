"""memory.search and memory.list: filters applied before ranking, then RRF (section 5).

The readable set goes into the store's query, so a row the caller can't read never takes a
rank, and ``fts_rank`` is the same as in a store holding only the readable rows.

With ``app.embedder`` and ``app.vectors``, memory.search embeds the query through the
embedder before it reads the store (:func:`query_text`, then :func:`embed_text`); a failed
or late embedding is the fallback of section 5.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import VenomError
from ..fusion import FUSIONS, fuse_lists
from ..grants import Access, Resource, check, readable_memories
from ..ids import id_number
from ..ports import MemoryFilter, ReadTx
from ..ranking import (
    LIST_DEPTH,
    QUERY_MODES,
    SNIPPET_BYTES,
    bounded_snippet,
    cut_utf8,
    preview,
    query_tokens,
    search_terms,
)
from ..records import Hit, Memory, Principal
from ..search_options import COLUMN_WEIGHTS
from ..shapes import hit_json, memory_id
from .app import App
from .link_rows import superseded_by
from .sessions import check_session_readable, lineage
from .space_states import inactive_left_out

if TYPE_CHECKING:
    from ..commands import Filters, ListMemories, SearchMemories

__all__ = ["embed_text", "list_memories", "query_text", "search_memories"]


def _filter(tx: ReadTx, who: Principal, cmd: Filters, *, include_deleted: bool) -> MemoryFilter:
    """Check each explicit space and the session in full, then build the filter."""
    if cmd.spaces is not None:
        for space in cmd.spaces:
            check(who, "read", Resource.of_space(space))
    session_ids: frozenset[int] | None = None
    if cmd.session is not None:
        row = check_session_readable(tx, who, cmd.session)
        if cmd.lineage:
            chain, _ = lineage(tx, who, row)
            session_ids = frozenset(s.id for s in chain)
        else:
            session_ids = frozenset({row.id})
    return MemoryFilter(
        access=readable_memories(who),
        spaces=_set(cmd.spaces),
        kinds=_set(cmd.kinds),
        tags=frozenset(cmd.tags or ()),
        sessions=session_ids,
        importances=_set(cmd.importances),
        branch=cmd.branch,
        include_deleted=include_deleted,
        exclude_ids=frozenset() if cmd.include_superseded else tx.superseded_ids(),
        exclude_spaces=inactive_left_out(tx, cmd.spaces),
    )


def _marked(
    tx: ReadTx, who: Principal, cmd: Filters, hits: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """With ``include_superseded``, each superseded hit says by what (docs/adr/0042)."""
    if not cmd.include_superseded or not hits:
        return hits
    superseded = tx.superseded_ids()
    for hit in hits:
        number = id_number(hit["id"], "m")
        if number is not None and number in superseded:
            hit["superseded_by"] = superseded_by(tx, who, number)
    return hits


def _set(items: tuple[str, ...] | None) -> frozenset[str] | None:
    return frozenset(items) if items is not None else None


def _vector_filter(tx: ReadTx, where: MemoryFilter) -> MemoryFilter:
    """The filter to give the vector index. It keeps no importance or branches (ADR 0017), so
    with either filter the rows that pass are picked here and handed over by ID."""
    if where.importances is None and where.branch is None:
        return where
    count = tx.count_memories(where)
    ids = frozenset(m.id for m in tx.list_memories(where, None, count)) if count else frozenset()
    return MemoryFilter(access=Access(ids=ids))


def _preview(memory: Memory) -> str:
    return cut_utf8(memory.content, SNIPPET_BYTES)


def query_text(app: App, cmd: SearchMemories) -> str | None:
    """The text memory.search will embed for this command, or ``None`` when it embeds
    nothing (mode ``fts``, no embedder or no vector index). A query with no words is
    ``invalid_params.query`` here, before any provider is called."""
    query_tokens(cmd.query)
    if cmd.mode == "fts" or app.embedder is None or app.vectors is None:
        return None
    return cut_utf8(cmd.query, app.settings.embed_input_bytes)


def embed_text(app: App, text: str) -> list[float] | None:
    """``text``'s vector from ``app.embedder`` within ``search.query_timeout_ms``, or
    ``None`` when the provider failed or took too long."""
    assert app.embedder is not None  # query_text gave a text, so there is one
    try:
        found = app.embedder.embed([text], timeout_s=app.settings.query_timeout_ms / 1000)
    except VenomError:
        return None
    return list(found[0])


def search_memories(app: App, who: Principal, cmd: SearchMemories) -> dict[str, Any]:
    """Search; hybrid when the app has an embedder and a vector index (see the module).

    ``query_mode`` and ``fusion`` default to the store's ``search.query_mode`` and
    ``search.fusion`` (docs/adr/0015, 0016)."""
    query, mode, limit = cmd.query, cmd.mode, cmd.limit
    query_mode = cmd.query_mode or app.settings.query_mode
    fusion = cmd.fusion or app.settings.fusion
    if query_mode not in QUERY_MODES:
        raise VenomError.param("type", "query_mode", f"query_mode {query_mode!r} is unknown")
    if fusion not in FUSIONS:
        raise VenomError.param("type", "fusion", f"fusion {fusion!r} is unknown")
    tokens = search_terms(query, query_mode)
    if mode == "vector" and app.embedder is None:
        raise VenomError("unsupported.embeddings_off", "mode vector needs embeddings on")
    text = query_text(app, cmd)
    query_vector = embed_text(app, text) if text is not None else None
    vectors = app.vectors
    if mode == "vector" and query_vector is None:
        raise VenomError("unavailable.embeddings", "the query could not be embedded")
    with app.store.read() as tx:
        where = _filter(tx, who, cmd, include_deleted=False)
        use_vectors = mode != "fts" and query_vector is not None and vectors is not None
        # Without a vector list, the first `limit` of the full-text list are the results.
        depth = LIST_DEPTH if use_vectors else limit
        weights = COLUMN_WEIGHTS[query_mode]
        fts_hits = [] if mode == "vector" else tx.rank_text_scored(tokens, where, depth, weights)
        fts_ids, fts_scores = [i for i, _ in fts_hits], dict(fts_hits)
        # Fusion is for two lists: one list alone is RRF over it, as section 5 scores it.
        how = fusion if use_vectors and mode != "vector" else "rrf"
        vector_hits: list[tuple[int, float]] = []
        if use_vectors and vectors is not None and query_vector is not None:
            vector_hits = vectors.nearest(
                query_vector, _vector_filter(tx, where), LIST_DEPTH, app.settings.min_similarity
            )
        while True:
            fused = fuse_lists(how, fts_ids, vector_hits, limit=limit, fts_scores=fts_scores)
            memories = {f.id: tx.get_memory(f.id) for f in fused}
            # The vector index can be a step behind this snapshot: drop what it still holds
            # for a memory that is gone or no longer passes the filter, and fuse again.
            stale = {i for i, m in memories.items() if m is None or not where.matches(m)}
            if not stale:
                break
            fts_ids = [i for i in fts_ids if i not in stale]
            vector_hits = [(i, sim) for i, sim in vector_hits if i not in stale]
        ranked = [f.id for f in fused if f.fts_rank is not None]
        snippets = {i: bounded_snippet(s) for i, s in tx.text_snippets(tokens, ranked).items()}
        results = []
        for f in fused:
            memory = memories[f.id]
            assert memory is not None  # stale ones were dropped above
            results.append(
                hit_json(
                    Hit(
                        memory=memory,
                        snippet=snippets.get(f.id) or preview(memory.content),
                        score=f.score,
                        fts_rank=f.fts_rank,
                        vector_rank=f.vector_rank,
                        similarity=f.similarity,
                    )
                )
            )
        results = _marked(tx, who, cmd, results)
    out: dict[str, Any] = {"mode": "vector" if mode == "vector" else "fts"}
    if use_vectors and mode == "auto":
        out["mode"] = "hybrid"
    elif mode == "auto" and app.embedder is not None:
        out["fallback"] = "embedding_unavailable"
    out["results"] = results
    return out


def list_memories(app: App, who: Principal, cmd: ListMemories) -> dict[str, Any]:
    limit = cmd.limit
    with app.store.read() as tx:
        where = _filter(tx, who, cmd, include_deleted=cmd.include_deleted)
        rows = tx.list_memories(where, cmd.after, limit + 1)
        page = rows[:limit]
        hits = [hit_json(Hit(memory=m, snippet=_preview(m)), search=False) for m in page]
        hits = _marked(tx, who, cmd, hits)
    return {"memories": hits, "next": memory_id(page[-1].id) if len(rows) > limit else None}
