"""memory.search on the store: matches, filters, ties, snippets, MEM-05 (user text is never FTS5
syntax), MEM-06 (only readable rows, ranked as if alone) and query modes (docs/adr/0015)."""

from __future__ import annotations

import json

import pytest

from .. import fts
from ..grants import Access
from ..ports import MemoryFilter
from ..ranking import search_terms
from ..records import Grant, Principal
from ..search_options import NATURAL_WEIGHTS, RFC_WEIGHTS
from ..usecases.settings import MemorySettings
from .support import (
    Env,
    StoreFactory,
    StoreFixtures,
    fails,
    ids,
    list_ids,
    ranks_like_fts5,
    requires_fts5_ranking,
    search_ids,
)

__all__ = ["SearchContract"]

# User text is never FTS5 syntax: (query, whether it finds the memory below).
FTS_SYNTAX_TEXT = (
    'Plain words: NOT this AND that OR near x:y, a -b, "unbalanced quotes" and (parens).'
)
FTS_SYNTAX_QUERIES: list[tuple[str, bool]] = [
    ('"', False),
    ("*", False),
    ("NEAR(", True),
    ("a -b", True),
    ("AND", True),
    ("OR", True),
    ("(", False),
    ("x:y", True),
    ('"unbalanced', True),
    ("NOT", True),
    ("^", False),
    ("+", False),
    ("-", False),
    ("NEAR(a b)", True),
    ("title:plain", False),  # a column filter would match the title; a phrase does not
]


class SearchContract(StoreFixtures):
    """memory.search on the store."""

    # -- memory.search ----------------------------------------------------------------------

    def test_search_finds_matches(self, env: Env) -> None:
        env.add("The proto tests need a writable XDG_RUNTIME_DIR.")
        env.add("Unrelated note about cooking.")
        env.add("More testing of the daemon.", title="Tests")
        result = env.g1.call("memory.search", {"query": "proto tests"})
        assert result["mode"] == "fts"
        assert "fallback" not in result
        assert sorted(ids(result["results"])) == ["m1", "m3"]  # the order is the store's
        assert [h["fts_rank"] for h in result["results"]] == [1, 2]
        assert [h["score"] for h in result["results"]] == [1 / 61, 1 / 62]
        assert search_ids(env.g1, "cooking") == ["m2"]
        assert search_ids(env.g1, "nothing-matches-this") == []

    def test_search_stems_and_folds(self, env: Env) -> None:
        requires_fts5_ranking(env.app.store)
        env.add("Running the Café migrations")
        assert search_ids(env.g1, "runs") == ["m1"]
        assert search_ids(env.g1, "CAFE") == ["m1"]
        assert search_ids(env.g1, "migration") == ["m1"]

    def test_search_title_weighs_more_than_content(self, env: Env) -> None:
        env.add("a note that mentions zig once among other words", title="Other")
        env.add("a note that mentions nothing special among other words", title="Zig")
        assert search_ids(env.g1, "zig") == ["m2", "m1"]

    def test_search_hit_shape(self, env: Env) -> None:
        env.add("venom-std pins Zig with .zigversion.", title="Zig pin", tags=["zig"])
        (hit,) = env.g1.call("memory.search", {"query": "zig"})["results"]
        assert hit["snippet"] == "venom-std pins Zig with .zigversion."
        assert (hit["score"], hit["fts_rank"]) == (1 / 61, 1)
        for absent in ("content", "vector_rank", "similarity", "embedding", "deleted"):
            assert absent not in hit

    def test_search_long_content_snippet_is_short(self, env: Env) -> None:
        words = " ".join(f"word{n}" for n in range(400))
        env.add(f"{words} needle {words}")
        (hit,) = env.g1.call("memory.search", {"query": "needle"})["results"]
        assert "needle" in hit["snippet"]
        assert len(hit["snippet"].split()) <= 64
        assert len(hit["snippet"].encode()) < 1000

    @pytest.mark.parametrize(
        "content",
        ["needle " + "z" * 65000, "needle " + "缓存" * 10000, "needle " + "\x01" * 60000],
        ids=["one-long-token", "cjk-run", "controls"],
    )
    def test_a_hundred_hits_of_long_tokens_fit_one_frame(self, env: Env, content: str) -> None:
        """64 tokens can be one token as long as the content: snippets are bounded in bytes
        so the largest search reply stays under a 1 MiB frame (RFC-0020 section 5)."""
        for n in range(100):
            env.add(f"{content} {n}")
        reply = env.g1.call("memory.search", {"query": "needle", "limit": 100})
        assert len(reply["results"]) == 100
        snippet = reply["results"][0]["snippet"]
        assert len(snippet.encode()) <= 1024
        assert snippet.startswith("needle") or "needle" in snippet
        frame = json.dumps({"id": 1, "ok": reply}, ensure_ascii=False, separators=(",", ":"))
        assert len(frame.encode()) + 1 <= 1024 * 1024

    def test_search_filters(self, env: Env) -> None:
        env.add("zig one", space="a", kind="fact", tags=["x", "y"])
        env.add("zig two", space="b", kind="fact", tags=["x"])
        env.add("zig three", space="a", kind="note", tags=["y"])
        assert search_ids(env.g1, "zig", spaces=["a"]) == ["m3", "m1"]
        assert search_ids(env.g1, "zig", kinds=["fact"]) == ["m2", "m1"]
        assert search_ids(env.g1, "zig", tags=["x", "y"]) == ["m1"]
        assert search_ids(env.g1, "zig", spaces=["b"], tags=["y"]) == []
        assert search_ids(env.g1, "zig", limit=1) == ["m3"]

    def test_search_ties_by_highest_id(self, env: Env) -> None:
        for n in ("one", "two", "three"):
            env.add(f"same words {n}")
        result = env.g1.call("memory.search", {"query": "same"})["results"]
        assert ids(result) == ["m3", "m2", "m1"]
        assert [h["fts_rank"] for h in result] == [1, 2, 3]

    def test_search_leaves_out_deleted(self, env: Env) -> None:
        env.add("gone soon")
        env.g1.call("memory.delete", {"id": "m1", "revision": 1})
        assert search_ids(env.g1, "gone") == []

    def test_search_filters_narrow_without_reordering(self, env: Env) -> None:
        # Under everything-readable statistics (the built-in bm25's), "beta" is rare and
        # "alpha" common, so m2 outranks m1; statistics over space a alone would swap them.
        env.add("alpha alpha alpha gamma", space="a")
        env.add("beta beta gamma delta", space="a")
        for n in range(4):
            env.add(f"filler words number {n}", space="a")
        for n in range(10):
            env.add(f"alpha elsewhere {n}", space="b")
        everywhere = search_ids(env.owner, "alpha beta")
        in_a = search_ids(env.owner, "alpha beta", spaces=["a"])
        assert in_a == [id_ for id_ in everywhere if id_ in ("m1", "m2")]
        assert sorted(in_a) == ["m1", "m2"]
        if ranks_like_fts5(env.app.store):
            assert in_a == ["m2", "m1"]  # the order of the built-in bm25's statistics

    def test_search_only_returns_readable_rows(self, env: Env) -> None:
        env.owner.call("memory.add", {"space": "pub", "content": "shared plan"})
        env.owner.call("memory.add", {"space": "priv", "content": "secret shared plan"})
        reader = env.as_(Principal(id="g7", grants=(Grant(right="read", scope="space:pub"),)))
        result = reader.call("memory.search", {"query": "shared plan secret"})["results"]
        assert [(h["id"], h["fts_rank"], h["score"]) for h in result] == [("m1", 1, 1 / 61)]
        assert list_ids(reader) == ["m1"]
        assert sorted(search_ids(env.owner, "shared")) == ["m1", "m2"]
        error = fails(reader, "memory.search", {"query": "plan", "spaces": ["priv"]}, "denied.read")
        assert error.data["resource"] == "space:priv"
        fails(reader, "memory.get", {"id": "m2"}, "denied.read")
        assert reader.call("space.list") == {
            "spaces": [
                {
                    "space": "pub",
                    "memories": 1,
                    "updated": env.owner.call("memory.get", {"id": "m1"})["updated"],
                }
            ]
        }

    def test_search_ranks_as_if_only_readable_rows_existed(
        self, store_factory: StoreFactory
    ) -> None:
        """MEM-06: a hidden row changes neither the order nor fts_rank of visible ones."""
        mixed, alone = Env.on(store_factory()), Env.on(store_factory())
        public = [
            "alpha alpha alpha gamma",
            "beta beta gamma delta",
            "gamma filler words",
            "filler words only",
            "more filler here",
            "delta and epsilon",
        ]
        for env in (mixed, alone):
            for content in public:
                env.owner.call("memory.add", {"space": "pub", "content": content})
        for n in range(10):
            mixed.owner.call("memory.add", {"space": "priv", "content": f"alpha hidden {n}"})
        reader = Principal(id="g7", grants=(Grant(right="read", scope="space:pub"),))
        for query in ("alpha beta", "gamma", "alpha", "delta alpha", "filler beta alpha"):
            seen = mixed.as_(reader).call("memory.search", {"query": query})
            expected = alone.as_(reader).call("memory.search", {"query": query})
            assert seen == expected, query
        if ranks_like_fts5(mixed.app.store):
            # The hidden rows do move the visible ones for a caller who can read them: the
            # test above could not pass by ranking with no statistics at all.
            assert search_ids(alone.owner, "alpha beta") == ["m1", "m2"]
            owner = search_ids(mixed.owner, "alpha beta")
            assert [id_ for id_ in owner if id_ in ("m1", "m2")] == ["m2", "m1"]

    @pytest.mark.parametrize(("query", "finds"), FTS_SYNTAX_QUERIES)
    def test_search_fts5_syntax_is_plain_text(self, env: Env, query: str, finds: bool) -> None:
        env.add(FTS_SYNTAX_TEXT, title="Plain")
        env.add("something else entirely")
        result = env.g1.call("memory.search", {"query": query})
        assert result["mode"] == "fts"
        assert ids(result["results"]) == (["m1"] if finds else [])

    # -- query_mode (docs/adr/0015) ---------------------------------------------------------

    def test_natural_queries_drop_stopwords(self, env: Env) -> None:
        env.add("Caroline: Wow! Did you see that band?")
        env.add("Caroline gave a speech at the school about her journey.")
        env.add("When did you do that? What was it like?")
        query = "When did Caroline give a speech at a school?"
        # RFC mode: "when" and "did" count as much as a name, and find the short question.
        assert sorted(search_ids(env.g1, query, query_mode="rfc")) == ["m1", "m2", "m3"]
        natural = env.g1.call("memory.search", {"query": query, "query_mode": "natural"})
        assert ids(natural["results"]) == ["m2", "m1"]
        assert natural["results"][0]["fts_rank"] == 1
        assert "speech" in natural["results"][0]["snippet"]

    def test_natural_queries_rank_presence_over_shortness(self, env: Env) -> None:
        """``natural`` ranks with NATURAL_WEIGHTS, bm25's weights x4, which is k1 0.3 for
        1.2 (docs/adr/0023): the long turn with all three words beats the short one with
        two, which the RFC's weights put first for being short."""
        requires_fts5_ranking(env.app.store)
        env.add("Caroline: speech?", space="a")
        env.add("Caroline gave a speech at the school about her journey last week", space="a")
        env.add("The school is closed today", space="a")
        for n in range(6):
            env.add(f"filler {n}", space="b")
        query = "When did Caroline give a speech at a school?"
        terms = search_terms(query, "natural")
        readable = Access(spaces=frozenset({"a", "b"}))
        with env.app.store.read() as tx:
            for access in (Access(everything=True), readable):
                for spaces in (None, frozenset({"a"})):
                    where = MemoryFilter(access=access, spaces=spaces)
                    rfc = tx.rank_text_scored(terms, where, 10, RFC_WEIGHTS)
                    natural = tx.rank_text_scored(terms, where, 10, NATURAL_WEIGHTS)
                    assert [i for i, _ in rfc] == [1, 2, 3]
                    assert [i for i, _ in natural] == [2, 1, 3]
                    assert tx.rank_text_scored(terms, where, 10) == rfc
        assert search_ids(env.g1, query, query_mode="natural") == ["m2", "m1", "m3"]

    def test_natural_queries_split_words_at_punctuation(self, env: Env) -> None:
        env.add("Caroline went to a support group for transgender people.")
        env.add("A specific plan for the week.")
        env.add("Nothing related here.")
        assert search_ids(env.g1, "Caroline's", query_mode="rfc") == []  # the phrase "caroline s"
        assert search_ids(env.g1, "Caroline's", query_mode="natural") == ["m1"]
        assert search_ids(env.g1, "transgender-specific", query_mode="rfc") == []
        assert sorted(search_ids(env.g1, "transgender-specific", query_mode="natural")) == [
            "m1",
            "m2",
        ]

    def test_a_natural_query_of_only_stopwords_searches_them(self, env: Env) -> None:
        env.add("It is what it is.")
        env.add("Zig pins the version.")
        assert search_ids(env.g1, "what is it", query_mode="natural") == ["m1"]
        assert search_ids(env.g1, "what is it", query_mode="natural") == search_ids(
            env.g1, "what is it", query_mode="rfc"
        )

    @pytest.mark.parametrize(("query", "finds"), FTS_SYNTAX_QUERIES)
    def test_natural_fts5_syntax_is_plain_text(self, env: Env, query: str, finds: bool) -> None:
        """MEM-05 in natural mode: punctuation separates words, so only ``title:plain`` finds
        more than in the RFC mode (its words, not a column filter)."""
        env.add(FTS_SYNTAX_TEXT, title="Plain")
        env.add("something else entirely")
        result = env.g1.call("memory.search", {"query": query, "query_mode": "natural"})
        assert result["mode"] == "fts"
        assert ids(result["results"]) == (["m1"] if finds or query == "title:plain" else [])

    def test_the_store_default_query_mode_comes_from_settings(self, env: Env) -> None:
        env.add("Caroline went to a support group.")
        assert search_ids(env.g1, "Caroline's") == []  # the RFC's mode by default
        env.app.settings = MemorySettings(query_mode="natural")  # as a config reload does
        assert search_ids(env.g1, "Caroline's") == ["m1"]
        assert search_ids(env.g1, "Caroline's", query_mode="rfc") == []

    # -- exactly FTS5's ranking (RanksLikeFts5) ------------------------------------------------

    def test_search_orders_as_fts5_bm25(self, env: Env) -> None:
        """The rare word outweighs a title hit of a common one: IDF, as FTS5's bm25 has it."""
        requires_fts5_ranking(env.app.store)
        env.add("The proto tests need a writable XDG_RUNTIME_DIR.")
        env.add("Unrelated note about cooking.")
        env.add("More testing of the daemon.", title="Tests")
        assert search_ids(env.g1, "proto tests") == ["m1", "m3"]
        env.add("alpha alpha alpha gamma", space="a")
        env.add("beta beta gamma delta", space="a")
        for n in range(10):
            env.add(f"alpha elsewhere {n}", space="b")
        assert search_ids(env.owner, "alpha beta", spaces=["a"]) == ["m5", "m4"]

    def test_scores_are_fts5_bm25_to_the_last_bit(self, env: Env) -> None:
        """rank_text_scored equals :mod:`venom_mem_core.fts` over the caller's readable rows,
        which equals SQLite's ``bm25(memory_fts, 5.0, 1.0, 3.0)`` negated (tests/unit)."""
        requires_fts5_ranking(env.app.store)
        rows = [
            ("Zig pin", "venom-std pins Zig with .zigversion; running zig build", ["zig"], "a"),
            ("", "Running the Café migrations, then the zig tests", [], "a"),
            ("Tests", "More testing of the daemon, café crème", ["build", "zig"], "b"),
            ("", "Nothing related at all", [], "b"),
        ]
        for title, content, tags, space in rows:
            env.add(content, space=space, title=title, tags=tags)
        query = ["zig", "runs", "CAFE", "tests", "x:y"]
        phrases = fts.query_phrases(query)
        with env.app.store.read() as tx:
            for access in (Access(everything=True), Access(spaces=frozenset({"a"}))):
                corpus = {}
                for id_ in range(1, len(rows) + 1):
                    memory = tx.get_memory(id_)
                    assert memory is not None
                    if access.allows(id=id_, owner=memory.author.principal, space=memory.space):
                        corpus[id_] = fts.Document.of(memory.title, memory.content, memory.tags)
                scores = fts.bm25_scores(corpus, phrases)
                expected = sorted(scores.items(), key=lambda item: (-item[1], -item[0]))
                got = tx.rank_text_scored(query, MemoryFilter(access=access), 10)
                assert got == expected, access
