"""The near-duplicate threshold on the written pairs (tests/fixtures/similar_pairs.json): each
``same`` pair's second text, added after its first, is shown the first in ``similar``; a
``distinct`` pair's mostly is not. bench/bench_similar.py prints the whole table (ADR 0043)."""

from __future__ import annotations

import json
from pathlib import Path

from venom_mem_core.inmemory import InMemoryStore
from venom_mem_core.testing import Env

PAIRS = json.loads((Path(__file__).parents[1] / "fixtures" / "similar_pairs.json").read_text())


def _flagged(first: str, second: str) -> bool:
    env = Env.on(InMemoryStore())
    env.add(first)
    result = env.g1.call("memory.add", {"space": "user", "content": second})
    return [hit["id"] for hit in result.get("similar", [])] == ["m1"]


def test_the_written_pairs_at_the_shipped_threshold() -> None:
    same = [_flagged(a, b) for a, b in PAIRS["same"]]
    distinct = [_flagged(a, b) for a, b in PAIRS["distinct"]]
    assert len(same) + len(distinct) >= 60
    flagged = sum(same) + sum(distinct)
    precision, recall = sum(same) / flagged, sum(same) / len(same)
    # 0.95 and 1.00 when measured (ADR 0043); a change of the scoring that loses either shows.
    assert precision >= 0.9, (precision, recall)
    assert recall >= 0.95, (precision, recall)
