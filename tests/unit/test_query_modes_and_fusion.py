"""query_mode and fusion on small exact fixtures (docs/adr/0015, 0016), and vector-only
snippets. The store-level behaviour is in the contract suite; the daemon's in
tests/integration/test_hybrid_search.py."""

from __future__ import annotations

import pytest

from venom_mem_core.errors import VenomError
from venom_mem_core.fusion import (
    BM25_WEIGHT,
    FUSIONS,
    SIMILARITY_MARGIN,
    VECTOR_WEIGHT,
    Fusion,
    fuse_lists,
)
from venom_mem_core.ranking import (
    SNIPPET_BYTES,
    Fused,
    natural_terms,
    preview,
    search_terms,
)
from venom_mem_core.search_options import FUSION_NAMES
from venom_mem_core.stopwords import ENGLISH_STOPWORDS

# RFC-0020 section 5's fixture: fts ranks m2 then m1; vectors rank m3 then m2.
FTS = [2, 1]
VECTOR = [(3, 0.9), (2, 0.8)]


def test_rfc_mode_is_section_5_step_2() -> None:
    assert search_terms("When did Caroline's talk?", "rfc") == [
        "When",
        "did",
        "Caroline's",
        "talk?",
    ]


@pytest.mark.parametrize(
    ("query", "terms"),
    [
        (
            "When did Caroline give a speech at a school?",
            ["Caroline", "give", "gave", "given", "speech", "school"],
        ),
        ("Where would Mel's children go?", ["Mel", "children", "child", "go", "went", "gone"]),
        ("giving GAVE", ["give", "gave", "given"]),  # a regular form gives way to its base
        ("Caroline's transgender-specific plans", ["Caroline", "transgender", "specific", "plans"]),
        ("what is it", ["what", "is", "it"]),  # only stopwords: all of them stay
        ("The the THE cat Cat", ["cat"]),  # repeats go, case-insensitively
        ("x:z a_b", ["x", "z", "b"]),  # "_" separates as in unicode61; "a" is a stopword
        ("café's naïve über", ["café", "naïve", "über"]),
        ("缓存 失效", ["缓存", "失效"]),
        ('NEAR( "x AND -z*', ["NEAR", "x", "z"]),
    ],
)
def test_natural_terms(query: str, terms: list[str]) -> None:
    assert natural_terms(query) == terms
    assert search_terms(query, "natural") == terms


@pytest.mark.parametrize("query", ["*", '"', "( -", "^ +"])
def test_natural_query_of_only_punctuation_keeps_its_tokens(query: str) -> None:
    assert natural_terms(query) == query.split()


@pytest.mark.parametrize("query", ["", " \t\n"])
def test_natural_query_with_no_tokens_is_invalid(query: str) -> None:
    with pytest.raises(VenomError) as caught:
        natural_terms(query)
    assert (caught.value.code, caught.value.data) == ("invalid_params.query", {"param": "query"})


def test_stopword_list_is_nltks_english_and_the_question_words_it_lacks() -> None:
    assert len(ENGLISH_STOPWORDS) == 179 + 6
    assert {"when", "did", "what", "how", "s", "t", "don"} <= ENGLISH_STOPWORDS
    assert {"would", "could", "might", "must", "shall", "whose"} <= ENGLISH_STOPWORDS
    assert not {"speech", "school", "name", "zig", "may"} & ENGLISH_STOPWORDS


def test_preview_ends_at_a_word_boundary_with_an_ellipsis() -> None:
    assert preview("short text") == "short text"
    exact = "x" * SNIPPET_BYTES
    assert preview(exact) == exact
    words = " ".join(f"word{n:03d}" for n in range(100))
    cut = preview(words)
    assert cut.endswith("…")
    assert len(cut.encode()) <= SNIPPET_BYTES
    assert words.startswith(cut[:-1])
    assert words[len(cut) - 1] == " "
    # One word longer than the snippet is cut where it must be, still within the bound.
    long = preview("y" * 1000)
    assert long == "y" * (SNIPPET_BYTES - 3) + "…"
    multibyte = preview("é" * 300)
    assert len(multibyte.encode()) <= SNIPPET_BYTES
    assert multibyte.endswith("…")


def test_rrf_is_the_section_5_fixture_exactly() -> None:
    assert fuse_lists("rrf", FTS, VECTOR, limit=10) == [
        Fused(id=2, score=1 / 61 + 1 / 62, fts_rank=1, vector_rank=2, similarity=0.8),
        Fused(id=3, score=1 / 61, vector_rank=1, similarity=0.9),
        Fused(id=1, score=1 / 62, fts_rank=2),
    ]
    assert fuse_lists("rrf", FTS, [], limit=10) == [
        Fused(id=2, score=1 / 61, fts_rank=1),
        Fused(id=1, score=1 / 62, fts_rank=2),
    ]


def test_weighted_halves_the_vector_votes() -> None:
    assert VECTOR_WEIGHT == 0.5
    assert fuse_lists("weighted", FTS, VECTOR, limit=10) == [
        Fused(id=2, score=1 / 61 + 0.5 / 62, fts_rank=1, vector_rank=2, similarity=0.8),
        Fused(id=1, score=1 / 62, fts_rank=2),
        Fused(id=3, score=0.5 / 61, vector_rank=1, similarity=0.9),
    ]


def test_margin_keeps_hits_near_the_best_one() -> None:
    assert SIMILARITY_MARGIN == 0.1
    vector = [(3, 0.9), (4, 0.85), (2, 0.79)]  # m2 is more than 0.1 below the best
    assert fuse_lists("margin", FTS, vector, limit=10) == [
        Fused(id=3, score=1 / 61, vector_rank=1, similarity=0.9),
        Fused(id=2, score=1 / 61, fts_rank=1),
        Fused(id=4, score=1 / 62, vector_rank=2, similarity=0.85),
        Fused(id=1, score=1 / 62, fts_rank=2),
    ]
    # Within the margin, it is plain RRF.
    assert fuse_lists("margin", FTS, VECTOR, limit=10) == fuse_lists("rrf", FTS, VECTOR, limit=10)


def test_rerank_votes_only_for_full_text_hits() -> None:
    assert fuse_lists("rerank", FTS, VECTOR, limit=10) == [
        Fused(id=2, score=1 / 61 + 1 / 62, fts_rank=1, vector_rank=2, similarity=0.8),
        Fused(id=1, score=1 / 62, fts_rank=2),
        Fused(id=3, score=0.0, vector_rank=1, similarity=0.9),  # fills after every fts hit
    ]
    # A strong vector hit that full text missed never displaces a full-text hit.
    assert [f.id for f in fuse_lists("rerank", [5, 6], [(9, 0.99), (8, 0.98)], limit=2)] == [5, 6]
    assert [f.id for f in fuse_lists("rerank", [5], [(9, 0.99), (8, 0.98)], limit=2)] == [5, 9]
    # Vector ranks reorder within the full-text list.
    reordered = fuse_lists("rerank", [1, 2, 3], [(3, 0.9), (2, 0.8)], limit=3)
    assert [f.id for f in reordered] == [3, 2, 1]


@pytest.mark.parametrize("name", FUSION_NAMES)
def test_every_fusion_without_vectors_is_the_full_text_order(name: str) -> None:
    fused = fuse_lists(name, [4, 9, 1], [], limit=2, fts_scores={4: 3.0, 9: 2.0, 1: 1.0})
    assert [(f.id, f.fts_rank, f.vector_rank) for f in fused] == [(4, 1, None), (9, 2, None)]
    if name != "convex":
        assert [f.score for f in fused] == [1 / 61, 1 / 62]


def test_convex_blends_min_max_scaled_scores() -> None:
    assert BM25_WEIGHT == 0.8
    fts, scores = [2, 1, 6], {2: 4.0, 1: 3.0, 6: 2.0}  # min-max scaled: m2 1, m1 0.5, m6 0
    vector = [(3, 0.9), (2, 0.8), (5, 0.5)]  # min-max scaled: m3 1.0, m2 0.75, m5 0.0
    top = Fused(id=2, score=0.8 + 0.2 * 0.75, fts_rank=1, vector_rank=2, similarity=0.8)
    assert fuse_lists("convex", fts, vector, limit=10, fts_scores=scores) == [
        top,
        Fused(id=1, score=0.8 * 0.5, fts_rank=2),
        Fused(id=3, score=(1 - 0.8) * 1.0, vector_rank=1, similarity=0.9),
        Fused(id=6, score=0.0, fts_rank=3),  # the last of either list scores as if absent
        Fused(id=5, score=0.0, vector_rank=3, similarity=0.5),
    ]
    # ADR 0016's first form scaled BM25 over its best only: m1 0.75, m6 0.5.
    over_best = Fusion(blend=0.8, bm25_min_max=False)
    assert over_best.apply(fts, vector, limit=10, fts_scores=scores) == [
        top,
        Fused(id=1, score=0.8 * 0.75, fts_rank=2),
        Fused(id=6, score=0.8 * 0.5, fts_rank=3),
        Fused(id=3, score=(1 - 0.8) * 1.0, vector_rank=1, similarity=0.9),
        Fused(id=5, score=0.0, vector_rank=3, similarity=0.5),
    ]
    # Near-equal BM25 scores: the vector decides between them.
    vector = [(8, 0.9), (7, 0.1)]
    even = fuse_lists("convex", [7, 8, 9], vector, limit=2, fts_scores={7: 2.0, 8: 1.9, 9: 0.5})
    assert [f.id for f in even] == [8, 7]
    # A clear BM25 winner stays first whatever the vector says.
    clear = fuse_lists("convex", [7, 8, 9], vector, limit=2, fts_scores={7: 2.0, 8: 1.0, 9: 0.5})
    assert [f.id for f in clear] == [7, 8]
    # One similarity only (or all equal): each vector hit scales to 1.
    (only,) = fuse_lists("convex", [], [(4, 0.3)], limit=1)
    assert (only.id, only.score) == (4, 1 - 0.8)


def test_named_fusions() -> None:
    assert tuple(FUSIONS) == FUSION_NAMES
    assert FUSIONS["rrf"] == Fusion()
    # A margin of 0 keeps the best similarity and its ties only.
    assert Fusion(margin=0.0).apply([], [(1, 0.5), (2, 0.5), (3, 0.4)], limit=5) == [
        Fused(id=1, score=1 / 61, vector_rank=1, similarity=0.5),
        Fused(id=2, score=1 / 62, vector_rank=2, similarity=0.5),
    ]
