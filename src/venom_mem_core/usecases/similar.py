"""``similar`` in memory.add's and memory.update's result: near-duplicates pointed out, never
merged (ADR 0043). Absent when there are none, so RFC-0020's results stay byte for byte, and
when ``memory.similar_threshold`` is 0 (switched off: nothing is ranked)."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from ..errors import VenomError
from ..grants import readable_memories
from ..ports import ReadTx
from ..ranking import SNIPPET_BYTES, cut_utf8
from ..records import Memory, Principal
from ..shapes import memory_id
from ..similarity import Similar, similar_memories
from .app import App

__all__ = ["similar_after_commit", "similar_field", "similar_json"]

# Enough to tell one score from another; more digits would only vary with the corpus.
_SCORE_DIGITS = 3


def similar_json(found: Similar) -> dict[str, Any]:
    """What an agent needs to update the other memory instead: its ID and revision, how
    close it is, and the start of its text."""
    return {
        "id": memory_id(found.memory.id),
        "revision": found.memory.revision,
        "score": round(found.score, _SCORE_DIGITS),
        "snippet": cut_utf8(found.memory.content, SNIPPET_BYTES),
    }


def similar_field(
    tx: ReadTx,
    who: Principal,
    memory: Memory,
    threshold: float,
    *,
    superseded: Collection[int] = (),
) -> dict[str, Any]:
    """``{"similar": [...]}`` for ``memory`` (already written in ``tx``), or ``{}``;
    ``threshold`` 0: ``{}`` without a ranking. The memories it supersedes in the same write
    are no near-duplicates to point out: the caller has just said the new one replaces them
    (ADR 0042)."""
    if threshold <= 0:
        return {}
    found = [
        item
        for item in similar_memories(tx, memory, readable_memories(who), threshold=threshold)
        if item.memory.id not in superseded
    ]
    return {"similar": [similar_json(item) for item in found]} if found else {}


def similar_after_commit(
    app: App, who: Principal, memory: Memory, *, superseded: Collection[int] = ()
) -> dict[str, Any]:
    """:func:`similar_field` for ``memory`` just committed, in a read transaction of its own:
    the single writer is not held while the store ranks (ADR 0043, cost). A write that
    slipped in between is seen, as any later read sees it; ``memory`` gone by then ranks no
    longer and ``similar`` is absent."""
    threshold = app.settings.similar_threshold
    if threshold <= 0:
        return {}
    try:
        with app.store.read() as tx:
            return similar_field(tx, who, memory, threshold, superseded=superseded)
    except VenomError:
        # The add has committed: it is acknowledged whatever the ranking meets (a store gone
        # down just now, tests/reliability/test_postgres_faults.py); similar is only a hint.
        return {}
