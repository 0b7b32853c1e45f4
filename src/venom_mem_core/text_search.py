"""Full-text matches with their rows and snippets, composed from the store's ranking."""

from __future__ import annotations

from collections.abc import Sequence

from .ports import FtsMatch, MemoryFilter, ReadTx
from .ranking import SNIPPET_BYTES, bounded_snippet, cut_utf8

__all__ = ["search_text"]


def search_text(
    tx: ReadTx, tokens: Sequence[str], where: MemoryFilter, limit: int
) -> list[FtsMatch]:
    """The first ``limit`` matches, best first, each with its memory and snippet."""
    ids = tx.rank_text(tokens, where, limit)
    snippets = tx.text_snippets(tokens, ids)
    matches = []
    for id_ in ids:
        memory = tx.get_memory(id_)
        if memory is not None:
            snippet = snippets.get(id_)
            snippet = (
                bounded_snippet(snippet) if snippet else cut_utf8(memory.content, SNIPPET_BYTES)
            )
            matches.append(FtsMatch(memory=memory, snippet=snippet))
    return matches
