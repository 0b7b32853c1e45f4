"""search_text: user text is never FTS5 syntax, and unreadable rows never move readable ones.

MEM-06 asks that a search over mixed readable and unreadable rows return the same hits, in the
same order, as a store holding only the readable rows. FTS5's built-in bm25 takes IDF and
average length from the whole index, so hidden rows would change the order; the adapter ranks
restricted callers with statistics over their readable rows (docs/adr/0003). The tests below
first show the trap is real on their corpus, then that the store does not fall into it.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from pathlib import Path

import attrs
import pytest

from tests.support.records import draft_memory
from venom_mem_adapters.sqlite import SqliteStore, bm25
from venom_mem_adapters.sqlite.filters import Predicate
from venom_mem_core.grants import Access
from venom_mem_core.ports import MemoryFilter
from venom_mem_core.ranking import fts_match_expression
from venom_mem_core.records import Memory, Provenance
from venom_mem_core.search_options import NATURAL_WEIGHTS, RFC_WEIGHTS, Weights
from venom_mem_core.text_search import search_text

OWNER = Provenance(principal="owner", label="owner")
TS = "2026-11-09T10:00:00.000Z"
EVERYTHING = MemoryFilter(access=Access(everything=True))
MINE = MemoryFilter(access=Access(spaces=frozenset({"mine"})))


def memory(content: str, *, space: str = "mine", title: str = "", tags: str = "") -> Memory:
    return draft_memory(content, space=space, title=title, tags=tuple(tags.split()))


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    s = SqliteStore.open(tmp_path / "store" / "store.db")
    yield s
    s.close()


def fill(store: SqliteStore, memories: Sequence[Memory]) -> dict[int, str]:
    with store.write() as tx:
        return {tx.insert_memory(m): m.content for m in memories}


def search(store: SqliteStore, tokens: Sequence[str], where: MemoryFilter) -> list[str]:
    with store.read() as tx:
        return [m.memory.content for m in search_text(tx, tokens, where, 100)]


# -- FTS5 syntax is plain text -----------------------------------------------------------------

HOSTILE = [
    ['"'],
    ['""'],
    ['"unbalanced'],
    ['a"b"c'],
    ["*"],
    ["zig*"],
    ["NEAR("],
    ["NEAR(zig", "build)"],
    ["-"],
    ["-zig"],
    ["AND"],
    ["OR"],
    ["NOT"],
    ["zig", "AND", "build"],
    ["("],
    [")"],
    [":"],
    ["title:zig"],
    ["{title", "content}:", "zig"],
    ["^zig"],
    ["+"],
    ["'"],
    ["\\"],
    ["\x00"],
    ["ﬁ", "é", "😀"],
]


@pytest.mark.parametrize("tokens", HOSTILE, ids=repr)
@pytest.mark.parametrize("where", [EVERYTHING, MINE], ids=["owner", "restricted"])
def test_fts_syntax_in_tokens_never_errors(
    store: SqliteStore, tokens: list[str], where: MemoryFilter
) -> None:
    fill(
        store,
        [
            memory("zig and build, not near anything", title="title zig"),
            memory("NEAR(zig build) AND -zig OR title:zig *", tags="zig"),
            memory("unrelated"),
        ],
    )
    with store.read() as tx:
        search_text(tx, tokens, where, 10)


def test_operators_are_searched_as_words(store: SqliteStore) -> None:
    fill(store, [memory("cats and dogs"), memory("cats or dogs"), memory("neither")])
    assert search(store, ["AND"], EVERYTHING) == ["cats and dogs"]
    assert search(store, ["OR"], MINE) == ["cats or dogs"]
    assert search(store, ["NOT"], EVERYTHING) == []


# -- ranking basics ----------------------------------------------------------------------------


def test_weights_title_over_tags_over_content(store: SqliteStore) -> None:
    fill(
        store,
        [
            memory("word in the content here", title="other"),
            memory("nothing here either", title="word"),
            memory("plain text again", tags="word"),
        ],
    )
    expected = ["nothing here either", "plain text again", "word in the content here"]
    assert search(store, ["word"], EVERYTHING) == expected
    assert search(store, ["word"], MINE) == expected


def test_ties_go_to_the_highest_id(store: SqliteStore) -> None:
    ids = fill(store, [memory("same words", space=s) for s in ("mine", "b", "c")])
    with store.read() as tx:
        got = [m.memory.id for m in search_text(tx, ["same"], EVERYTHING, 10)]
    assert got == sorted(ids, reverse=True)


def test_only_live_rows_are_searched(store: SqliteStore) -> None:
    ids = fill(store, [memory("findable text"), memory("findable too")])
    first = min(ids)
    with store.write() as tx:
        gone = tx.get_memory(first)
        assert gone is not None
        tx.replace_memory(attrs.evolve(gone, deleted=TS))
    including = attrs.evolve(EVERYTHING, include_deleted=True)
    assert search(store, ["findable"], including) == ["findable too"]
    assert search(store, ["findable"], attrs.evolve(MINE, include_deleted=True)) == ["findable too"]


def test_limit_and_nothing_readable(store: SqliteStore) -> None:
    fill(store, [memory(f"common word {n}") for n in range(20)])
    with store.read() as tx:
        assert len(search_text(tx, ["common"], EVERYTHING, 5)) == 5
        assert len(search_text(tx, ["common"], MINE, 5)) == 5
        assert search_text(tx, ["common"], MemoryFilter(access=Access()), 5) == []
        assert search_text(tx, ["common"], EVERYTHING, 0) == []


def test_snippets(store: SqliteStore) -> None:
    long = " ".join(f"w{n}" for n in range(200)) + " needle " + " ".join("x" * 5 for _ in range(50))
    fill(
        store,
        [memory(long), memory("body text without the word", title="needle"), memory("needle")],
    )
    with store.read() as tx:
        hits = {m.memory.content: m.snippet for m in search_text(tx, ["needle"], EVERYTHING, 10)}
    assert "needle" in hits[long]
    assert hits[long].startswith("…")
    assert hits[long].endswith("…")
    assert len(hits[long].split()) <= 64
    assert hits["body text without the word"] == "body text without the word"
    assert hits["needle"] == "needle"


# -- filter before rank (MEM-06) ---------------------------------------------------------------

READABLE = [
    memory("alpha alpha alpha"),
    memory("beta"),
    memory("alpha beta gamma delta epsilon zeta eta theta"),
    memory("gamma beta"),
    memory("alpha"),
    memory("delta epsilon", title="beta"),
    memory("long text about nothing much at all, with alpha once and more words after it"),
]
# Hidden rows that make "alpha" common and rows long, index-wide.
HIDDEN = [memory(f"alpha filler {n} " + "pad " * (n % 9), space="secret") for n in range(40)]


def build(directory: Path, memories: Sequence[Memory]) -> SqliteStore:
    s = SqliteStore.open(directory / "store.db")
    fill(s, memories)
    return s


def interleave(readable: Sequence[Memory], hidden: Sequence[Memory]) -> list[Memory]:
    """Hidden rows spread between readable ones; readable rows keep their relative order."""
    rng = random.Random(7)
    out = list(readable)
    for m in hidden:
        out.insert(rng.randrange(len(out) + 1), m)
    return out


def builtin_order(s: SqliteStore, tokens: Sequence[str], space: str) -> list[str]:
    """What the built-in bm25 over the whole index would give, filtered afterwards."""
    with s.read() as tx:
        rows = tx._rows(
            "SELECT m.content FROM memory_fts JOIN memories m ON m.id = memory_fts.rowid"
            " WHERE memory_fts MATCH ? AND m.space = ?"
            " ORDER BY bm25(memory_fts, 5.0, 1.0, 3.0), m.id DESC",
            (fts_match_expression(tokens), space),
        )
    return [r[0] for r in rows]


@pytest.mark.parametrize("tokens", [["alpha", "beta"], ["alpha"], ["beta", "gamma", "alpha"]])
def test_hidden_rows_do_not_move_readable_ones(tmp_path: Path, tokens: list[str]) -> None:
    mixed = build(tmp_path / "mixed", interleave(READABLE, HIDDEN))
    alone = build(tmp_path / "alone", READABLE)
    try:
        expected = search(alone, tokens, EVERYTHING)
        assert search(alone, tokens, MINE) == expected
        assert search(mixed, tokens, MINE) == expected
        # The corpus is a real trap: whole-index statistics would have reordered the hits.
        if tokens != ["alpha"]:
            assert builtin_order(mixed, tokens, "mine") != expected
    finally:
        mixed.close()
        alone.close()


def test_other_filters_narrow_hits_without_changing_statistics(tmp_path: Path) -> None:
    readable = [attrs.evolve(m, kind="fact" if n % 2 else "note") for n, m in enumerate(READABLE)]
    mixed = build(tmp_path / "mixed", interleave(readable, HIDDEN))
    alone = build(tmp_path / "alone", readable)
    try:
        facts = attrs.evolve(MINE, kinds=frozenset({"fact"}))
        expected = search(alone, ["alpha", "beta"], attrs.evolve(EVERYTHING, kinds=facts.kinds))
        assert search(mixed, ["alpha", "beta"], facts) == expected
        # ...and that is the unfiltered readable order with the notes taken out.
        kinds = {m.content: m.kind for m in readable}
        full = search(alone, ["alpha", "beta"], EVERYTHING)
        assert expected == [c for c in full if kinds[c] == "fact"]
    finally:
        mixed.close()
        alone.close()


def test_filter_before_rank_on_random_corpora(tmp_path: Path) -> None:
    rng = random.Random(20261109)
    vocabulary = ["zig", "build", "pin", "cache", "tool", "test", "lint", "fmt", "note", "doc"]
    for case in range(15):
        size = rng.randint(5, 40)
        corpus = []
        for n in range(size):
            text = " ".join(rng.choices(vocabulary, k=rng.randint(1, 12))) + f" doc{n}"
            title = " ".join(rng.choices(vocabulary, k=rng.randint(0, 3)))
            tags = " ".join(sorted(set(rng.choices(vocabulary, k=rng.randint(0, 2)))))
            space = rng.choice(["mine", "secret", "other"])
            corpus.append(memory(text, space=space, title=title, tags=tags))
        access = Access(spaces=frozenset({"mine"}), ids=frozenset(rng.sample(range(1, size), 2)))
        with_access = MemoryFilter(access=access)
        mixed = build(tmp_path / f"mixed{case}", corpus)
        try:
            with mixed.read() as tx:
                readable_ids = {m.id for m in tx.list_memories(with_access, None, 1000)}
            readable = [m for n, m in enumerate(corpus, start=1) if n in readable_ids]
            alone = build(tmp_path / f"alone{case}", readable)
            try:
                for _ in range(5):
                    tokens = rng.sample(vocabulary, rng.randint(1, 3))
                    assert search(mixed, tokens, with_access) == search(alone, tokens, EVERYTHING)
            finally:
                alone.close()
        finally:
            mixed.close()


@pytest.mark.parametrize("weights", [RFC_WEIGHTS, NATURAL_WEIGHTS])
def test_rank_function_is_the_builtin_bm25_given_the_same_statistics(
    store: SqliteStore, weights: Weights
) -> None:
    """With whole-index statistics the Python ranking must equal FTS5's bm25 exactly, with
    the RFC's column weights (the default) and with natural mode's (docs/adr/0023)."""
    rng = random.Random(3)
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota"]
    fill(
        store,
        [
            memory(
                " ".join(rng.choices(words, k=rng.randint(1, 30))) + f" n{n}",
                title=" ".join(rng.choices(words, k=rng.randint(0, 4))),
                tags=" ".join(sorted(set(rng.choices(words, k=rng.randint(0, 3))))),
            )
            for n in range(300)
        ],
    )
    with store.read() as tx:
        connection = tx._connection
        compared = 0
        for _ in range(40):
            tokens = rng.sample(words, rng.randint(1, 4)) + rng.choice([[], ["beta-gamma"]])
            stats = bm25.corpus_stats(connection, tokens, Predicate("1"))
            rows = connection.execute(
                "SELECT bm25(memory_fts, ?, ?, ?), venom_bm25(memory_fts, ?, ?, ?, ?)"
                " FROM memory_fts WHERE memory_fts MATCH ?",
                (*weights, stats.encode(), *weights, fts_match_expression(tokens)),
            ).fetchall()
            for builtin, ours in rows:
                assert ours == builtin
                compared += 1
    assert compared > 1000


@pytest.mark.parametrize("weights", [RFC_WEIGHTS, NATURAL_WEIGHTS])
def test_one_pass_readable_ranking_is_the_builtin_bm25(
    store: SqliteStore, weights: Weights
) -> None:
    """bm25.rank_readable (a restricted caller's plain search, docs/adr/0016) counts each
    phrase's rows from its own scan and scores in numpy: over a corpus it can read whole it
    must give the built-in's rows, order and scores exactly, repeated tokens and phrases
    included."""
    rng = random.Random(5)
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota"]
    fill(
        store,
        [
            memory(
                " ".join(rng.choices(words, k=rng.randint(1, 30))) + f" n{n}",
                title=" ".join(rng.choices(words, k=rng.randint(0, 4))),
                tags=" ".join(sorted(set(rng.choices(words, k=rng.randint(0, 3))))),
            )
            for n in range(300)
        ],
    )
    with store.read() as tx:
        connection = tx._connection
        for _ in range(40):
            tokens = rng.sample(words, rng.randint(1, 4)) + rng.choice([[], ["beta-gamma"]])
            tokens += rng.choice([[], tokens[:1]])
            match = fts_match_expression(tokens)
            builtin = connection.execute(
                "SELECT rowid, -bm25(memory_fts, ?, ?, ?) AS s FROM memory_fts"
                " WHERE memory_fts MATCH ? ORDER BY -s, rowid DESC LIMIT 50",
                (*weights, match),
            ).fetchall()
            ours = bm25.rank_readable(connection, match, Predicate("1"), 50, weights)
            assert ours == [(int(str(r)), float(str(s))) for r, s in builtin]


def test_cached_corpus_size_follows_every_commit(tmp_path: Path) -> None:
    """A restricted caller's statistics are cached per read connection until a commit; each
    write must show in the next search exactly as in a store built with it from the start."""
    first = [memory("alpha beta"), memory("alpha gamma gamma gamma"), memory("beta", space="x")]
    later = [memory("alpha alpha delta"), memory("alpha " + "filler " * 40)]
    grown = SqliteStore.open(tmp_path / "a" / "store.db", readers=1)
    fresh = SqliteStore.open(tmp_path / "b" / "store.db", readers=1)
    try:
        fill(grown, first)
        assert sorted(search(grown, ["alpha"], MINE)) == ["alpha beta", "alpha gamma gamma gamma"]
        for extra in later:  # one commit each, after the cache was filled
            fill(grown, [extra])
        fill(fresh, first + later)
        with grown.read() as tx:
            got = [m.memory.content for m in search_text(tx, ["alpha", "gamma"], MINE, 100)]
        with fresh.read() as tx:
            want = [m.memory.content for m in search_text(tx, ["alpha", "gamma"], MINE, 100)]
        assert got == want
        assert len(got) == 4
    finally:
        grown.close()
        fresh.close()
