"""Near-duplicates: the live memories of a space whose content is close to one memory's.

memory.add and memory.update point them out (``similar``) and never merge them (ADR 0043).
Closeness is the store's own BM25 (:meth:`~venom_mem_core.ports.ReadTx.rank_text_scored`,
whose rules are :mod:`venom_mem_core.fts`), asked with the memory's own content words and
the content column only, then normalized by the memory's score for its own words: that
self-score is the best a text can do against a query made of itself, so ``score`` is about
1 for a restatement and falls towards 0 as the words part. Normalizing makes the threshold
independent of the corpus's size and of the text's length, which raw BM25 is not.

The memory must already be in the store (after the write's commit): its self-score comes
from the same ranking, over the same statistics, as the others'. A memory the caller can't
read never shows up, since the ranking runs over the caller's readable rows only.
"""

from __future__ import annotations

import attrs

from .fts import K1, Document, bm25, query_phrases, tokens
from .grants import Access
from .ports import MemoryFilter, RanksAmong, ReadTx
from .records import Memory
from .search_options import SIMILAR_THRESHOLD, Weights
from .stopwords import ENGLISH_STOPWORDS

__all__ = [
    "CONTENT_ONLY",
    "QUERY_WORDS",
    "SIMILAR_LIMIT",
    "SIMILAR_THRESHOLD",
    "Similar",
    "content_words",
    "normalized_scores",
    "similar_memories",
]

SIMILAR_LIMIT = 3
# A content of 8 KiB can hold a thousand distinct words; its first 64 say what it is about
# and keep the query to a few index lookups (ADR 0043).
QUERY_WORDS = 64
# Titles and tags are not the fact: a memory titled like another is not its duplicate.
CONTENT_ONLY: Weights = (0.0, 1.0, 0.0)
# Candidates asked of the store: the memory itself, the few shown, and room for the ones
# the caller can read but that fall under the threshold.
_CANDIDATES = 16
# Room for rounding in a bound: a term's part of a score and the memory's own score computed
# here may differ from the store's in the last bits; the bound only has to stay on the safe side.
_SLACK = 1e-9


@attrs.frozen(kw_only=True)
class Similar:
    memory: Memory
    score: float


def content_words(content: str) -> list[str]:
    """The content's distinct words as written (one per indexed term), in order, at most
    :data:`QUERY_WORDS`, without English stopwords unless only stopwords are there: a query
    of these finds every text sharing a meaningful term with it. A stopword is in most rows,
    so its IDF is at the floor and it moves no score, but it would make the store score
    nearly every row (ADR 0043: memory.add's CPU)."""
    seen: set[str] = set()
    words: list[str] = []
    stop: list[str] = []
    for token in tokens(content):
        if token.term in seen:
            continue
        seen.add(token.term)
        word = content[token.start : token.end]
        (stop if word.casefold() in ENGLISH_STOPWORDS else words).append(word)
        if len(words) == QUERY_WORDS:
            break
    return words or stop[:QUERY_WORDS]


def normalized_scores(
    tx: ReadTx, memory: Memory, access: Access, *, candidates: int = _CANDIDATES
) -> dict[int, float]:
    """Every other live memory of ``memory``'s space among the best ``candidates`` for its
    words, with its score over ``memory``'s own, at most 1; empty when ``memory`` itself is
    not among them (it has no words, or the caller can't read it)."""
    words = content_words(memory.content)
    if not words:
        return {}
    where = MemoryFilter(access=access, spaces=frozenset({memory.space}))
    ranked = dict(tx.rank_text_scored(words, where, candidates, CONTENT_ONLY))
    own = ranked.pop(memory.id, None)
    if not own:
        return {}
    return {id_: min(1.0, score / own) for id_, score in ranked.items()}


def similar_memories(
    tx: ReadTx,
    memory: Memory,
    access: Access,
    *,
    threshold: float = SIMILAR_THRESHOLD,
    limit: int = SIMILAR_LIMIT,
) -> list[Similar]:
    """The live memories of ``memory``'s space at or over ``threshold``, closest first (ties
    by highest ID), at most ``limit``."""
    scores = _scores_that_may_pass(tx, memory, access, threshold)
    close = sorted(
        ((id_, score) for id_, score in scores.items() if score >= threshold),
        key=lambda hit: (-hit[1], -hit[0]),
    )
    found: list[Similar] = []
    for id_, score in close:
        other = tx.get_memory(id_)
        if other is not None and other.deleted is None:
            found.append(Similar(memory=other, score=score))
        if len(found) == limit:
            break
    return found


def _scores_that_may_pass(
    tx: ReadTx, memory: Memory, access: Access, threshold: float
) -> dict[int, float]:
    """:func:`normalized_scores`, exact for every row scoring ``threshold`` or more; rows that
    can't reach it may be left out, and are, by a store that ranks among a few rows.

    A row's BM25 is a sum of one part per query term, and a term's part is under its IDF
    times ``K1 + 1`` whatever the row. So a row holding none but the terms whose bounds add
    up to less than ``threshold`` times the memory's own score can't reach the threshold:
    those terms (the words in most rows, such as a note's recurring ``note``) need not find
    candidates, and the store scores only the rows holding one of the others, with the whole
    query's statistics, so each of them gets the score it gets among all hits. The best
    :data:`_CANDIDATES` of those are the best of all hits down to the threshold, since every
    row above a passing one passes too (ADR 0031, third round)."""
    if not isinstance(tx, RanksAmong) or not 0 < threshold <= 1:
        return normalized_scores(tx, memory, access)
    words = content_words(memory.content)
    if not words:
        return {}
    stats = tx.text_stats(words, access)
    phrases = query_phrases(words)
    if stats is None or stats.rows == 0 or len(stats.hits) != len(phrases):
        return normalized_scores(tx, memory, access)
    idfs = stats.idf()
    doc = Document.of(memory.title, memory.content, memory.tags)
    freqs = [doc.frequency(phrase, CONTENT_ONLY) for phrase in phrases]
    floor = threshold * bm25(idfs, freqs, doc.length, stats.avgdl) * (1 - _SLACK)
    among = _finding_terms(words, idfs, floor)
    where = MemoryFilter(access=access, spaces=frozenset({memory.space}))
    ranked = dict(
        tx.rank_text_among(words, where, _CANDIDATES, CONTENT_ONLY, stats=stats, among=among)
    )
    own = ranked.pop(memory.id, None)
    if not own or threshold * own < floor:
        # Not ranked (unreadable, or outranked), or its own score is below the estimate
        # the bound assumed: the whole ranking answers, as it always may.
        return normalized_scores(tx, memory, access)
    return {id_: min(1.0, score / own) for id_, score in ranked.items()}


def _finding_terms(words: list[str], idfs: tuple[float, ...], floor: float) -> list[str]:
    """The words a row must hold one of to score ``floor`` or more: all but the largest set
    of the lowest-bounded ones whose bounds add up to less than ``floor``."""
    bounds = sorted((idf * (K1 + 1.0) * (1 + _SLACK), index) for index, idf in enumerate(idfs))
    total = 0.0
    weak: set[int] = set()
    for bound, index in bounds:
        if total + bound >= floor:
            break
        total += bound
        weak.add(index)
    return [word for index, word in enumerate(words) if index not in weak]
