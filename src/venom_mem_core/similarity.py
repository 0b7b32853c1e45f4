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

from .fts import tokens
from .grants import Access
from .ports import MemoryFilter, ReadTx
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
    scores = normalized_scores(tx, memory, access)
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
