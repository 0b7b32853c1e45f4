"""Full-text search on PostgreSQL with SQLite's answers: the core's FTS5 tokenizer, FTS5's bm25.

PostgreSQL's own text search stems and weighs differently (its ``ts_rank`` is not BM25), so
this store does not use it. Each live memory's title, content and tags are tokenized here
with the core's tokenizer (FTS5's ``porter unicode61 remove_diacritics 2``, reproduced in
pure Python) and written as postings, one row per (term, memory) with the term's positions in
each column, plus the row's length in tokens (schema.py: ``memory_fts`` and
``memory_fts_terms``). Ranking reads those statistics back in SQL, over the rows the caller
may read, and scores them with fts5_aux.c's formula operation for operation (:func:`score`),
so a score here is the one SQLite's store computes for the same rows.

The tokenizer, the Porter stemmer, BM25's constants and formula and the snippet rule are the
core's (:mod:`venom_mem_core.fts`), the same ones the in-memory store uses.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence

import attrs

from venom_mem_core.fts import (
    K1,
    WEIGHTS,
    B,
    CorpusStats,
    Document,
    Phrase,
    bm25,
    phrase_starts,
    weighted_hits,
)
from venom_mem_core.fts import snippet as fts_snippet
from venom_mem_core.records import Memory
from venom_mem_core.search_options import Weights

__all__ = [
    "K1",
    "WEIGHTS",
    "B",
    "Phrase",
    "Posting",
    "RowHits",
    "matches",
    "postings",
    "score",
    "snippet",
    "weighted_freq",
]


@attrs.frozen
class Posting:
    """One term of one memory: its positions in the title, the content and the tags."""

    term: str
    title: tuple[int, ...]
    content: tuple[int, ...]
    tags: tuple[int, ...]


# Documents kept by their text: a search tokenizes each hit it shows for the snippet, and
# the same memories come up search after search (and right after their add, which
# tokenized them for the postings). The pure-Python tokenizer was a third of a search's CPU
# in the daemon (docs/adr/0031's amendment). A Document is immutable, so sharing is safe;
# long texts are not kept, so the cache holds at most about CACHED * CACHED_CHARS of text.
CACHED = 1024
CACHED_CHARS = 4096


@functools.lru_cache(maxsize=CACHED)
def _document(title: str | None, content: str, tags: tuple[str, ...]) -> Document:
    return Document.of(title, content, tags)


def _doc(memory: Memory) -> Document:
    if len(memory.content) > CACHED_CHARS:
        return Document.of(memory.title, memory.content, memory.tags)
    return _document(memory.title, memory.content, memory.tags)


def postings(memory: Memory) -> tuple[int, list[Posting]]:
    """The row's length in tokens (all three columns) and its postings, terms sorted."""
    doc = _doc(memory)
    title, content, tags = doc.positions
    rows = [
        Posting(
            term=term,
            title=tuple(title.get(term, ())),
            content=tuple(content.get(term, ())),
            tags=tuple(tags.get(term, ())),
        )
        for term in sorted({*title, *content, *tags})
    ]
    return doc.length, rows


@attrs.frozen
class RowHits:
    """A candidate row: its length and, per phrase, its hits weighted by column."""

    id: int
    length: int
    freqs: tuple[float, ...]


def weighted_freq(
    phrase: Phrase, terms: dict[str, Sequence[Sequence[int]]], weights: Weights = WEIGHTS
) -> float:
    """The phrase's hits in one row, weighted by column; ``terms`` maps each term of the row
    that the query names to its (title, content, tags) positions."""
    if not phrase or any(term not in terms for term in phrase):
        return 0.0
    counts = [
        len(phrase_starts([terms[term][column] for term in phrase]))
        for column in range(len(weights))
    ]
    return weighted_hits(counts, weights)


def score(
    rows: Iterable[RowHits], corpus_rows: int, corpus_tokens: int, hits: Sequence[int]
) -> list[tuple[int, float]]:
    """bm25 of each row (higher is better, FTS5's ``bm25()`` negated), with the core's
    formula and IDF floor over the statistics the caller measured on its readable rows."""
    stats = CorpusStats(rows=corpus_rows, tokens=corpus_tokens, hits=tuple(hits))
    idfs, avgdl = stats.idf(), stats.avgdl
    return [(row.id, bm25(idfs, row.freqs, row.length, avgdl)) for row in rows]


def matches(memory: Memory, wanted: Sequence[Phrase]) -> bool:
    """Whether any phrase occurs in the memory's title, content or tags."""
    return _doc(memory).matches(wanted)


def snippet(memory: Memory, wanted: Sequence[Phrase]) -> str:
    """The core's snippet rule (``snippet(memory_fts, 1, '', '', '…', 64)``'s window)."""
    return fts_snippet(memory.content, _doc(memory), wanted)
