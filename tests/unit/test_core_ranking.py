"""Query tokens, RRF fusion and UTF-8 cuts (RFC-0020 section 5)."""

from __future__ import annotations

import pytest

from venom_mem_core.errors import VenomError
from venom_mem_core.ranking import (
    RRF_K,
    SNIPPET_BYTES,
    Fused,
    cut_utf8,
    fuse,
    query_tokens,
)


def test_section_5_fixture_hybrid() -> None:
    """fts ranks m2 then m1; vectors rank m3 then m2."""
    fused = fuse([2, 1], [3, 2], {3: 0.9, 2: 0.8}, limit=10)
    assert fused == [
        Fused(id=2, score=1 / 61 + 1 / 62, fts_rank=1, vector_rank=2, similarity=0.8),
        Fused(id=3, score=1 / 61, vector_rank=1, similarity=0.9),
        Fused(id=1, score=1 / 62, fts_rank=2),
    ]
    assert fused[0].score == pytest.approx(0.03252247, abs=5e-9)
    assert fused[1].score == pytest.approx(0.01639344, abs=5e-9)
    assert fused[2].score == pytest.approx(0.01612903, abs=5e-9)


def test_section_5_fixture_with_embeddings_off() -> None:
    fused = fuse([2, 1], limit=10)
    assert [(f.id, f.score, f.fts_rank, f.vector_rank) for f in fused] == [
        (2, 1 / 61, 1, None),
        (1, 1 / 62, 2, None),
    ]
    assert 1 / (RRF_K + 1) == 0.01639344262295082


def test_ties_go_to_the_highest_id() -> None:
    assert [f.id for f in fuse([1, 2], [2, 1], limit=10)] == [2, 1]
    assert [f.id for f in fuse([], [5], limit=10)] == [5]
    assert [f.id for f in fuse([7], [8], limit=10)] == [8, 7]


def test_limit() -> None:
    assert [f.id for f in fuse([5, 4, 3, 2, 1], limit=2)] == [5, 4]
    assert fuse([], limit=3) == []


def test_similarity_only_for_vector_hits() -> None:
    (only,) = fuse([4], [], {4: 0.5}, limit=1)
    assert only.similarity is None


def test_query_tokens() -> None:
    assert query_tokens("  which zig\tversion\n") == ["which", "zig", "version"]
    assert query_tokens('NEAR( "x') == ["NEAR(", '"x']
    for empty in ("", " ", "\t\n"):
        with pytest.raises(VenomError) as caught:
            query_tokens(empty)
        assert (caught.value.code, caught.value.data) == (
            "invalid_params.query",
            {"param": "query"},
        )


def test_cut_utf8() -> None:
    assert cut_utf8("short", SNIPPET_BYTES) == "short"
    assert cut_utf8("x" * 240, 240) == "x" * 240
    assert cut_utf8("x" * 241, 240) == "x" * 240
    assert cut_utf8("é" * 200, 241) == "é" * 120
    assert cut_utf8("aé", 2) == "a"
    assert cut_utf8("a😀", 4) == "a"
    assert cut_utf8("a😀", 5) == "a😀"
    assert cut_utf8("", 10) == ""
