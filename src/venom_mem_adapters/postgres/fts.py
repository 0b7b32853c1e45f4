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

from collections.abc import Iterable, Sequence

import attrs

from venom_mem_core.fts import K1, WEIGHTS, B, CorpusStats, Document, bm25, tokenize
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
    "counted_freq",
    "matches",
    "phrases",
    "postings",
    "score",
    "snippet",
    "weighted_freq",
]

Phrase = tuple[str, ...]


@attrs.frozen
class Posting:
    """One term of one memory: its positions in the title, the content and the tags."""

    term: str
    title: tuple[int, ...]
    content: tuple[int, ...]
    tags: tuple[int, ...]


def _doc(memory: Memory) -> Document:
    return Document.of(memory.title, memory.content, memory.tags)


def postings(memory: Memory) -> tuple[int, list[Posting]]:
    """The row's length in tokens (all three columns) and its postings, terms sorted."""
    doc = _doc(memory)
    found: dict[str, tuple[list[int], list[int], list[int]]] = {}
    for column, terms in enumerate(doc.columns):
        for position, term in enumerate(terms):
            found.setdefault(term, ([], [], []))[column].append(position)
    rows = [
        Posting(term=term, title=tuple(t), content=tuple(c), tags=tuple(g))
        for term, (t, c, g) in sorted(found.items())
    ]
    return doc.length, rows


def phrases(tokens: Sequence[str]) -> list[Phrase]:
    """Each query token as FTS5 reads a quoted string: its terms, consecutive (a token that
    yields no term matches nothing)."""
    return [tuple(tokenize(token)) for token in tokens]


@attrs.frozen
class RowHits:
    """A candidate row: its length and, per phrase, its hits weighted by column."""

    id: int
    length: int
    freqs: tuple[float, ...]


def _count(positions: Sequence[Sequence[int]]) -> int:
    """Occurrences of a phrase whose terms have these positions (in one column)."""
    if len(positions) == 1:
        return len(positions[0])
    later = [set(p) for p in positions[1:]]
    return sum(
        1
        for start in positions[0]
        if all(start + offset + 1 in terms for offset, terms in enumerate(later))
    )


def weighted_freq(
    phrase: Phrase, terms: dict[str, Sequence[Sequence[int]]], weights: Weights = WEIGHTS
) -> float:
    """The phrase's hits in one row, weighted by column; ``terms`` maps each term of the row
    that the query names to its (title, content, tags) positions."""
    if not phrase or any(term not in terms for term in phrase):
        return 0.0
    freq = 0.0
    for column, weight in enumerate(weights):
        hits = _count([terms[term][column] for term in phrase])
        freq += weight * hits
    return freq


def counted_freq(counts: Sequence[int] | None, weights: Weights = WEIGHTS) -> float:
    """A one-term phrase's weighted hits from its (title, content, tags) counts."""
    if counts is None:
        return 0.0
    freq = 0.0
    for weight, hits in zip(weights, counts, strict=True):
        freq += weight * hits
    return freq


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
