"""The store contract on InMemoryStore, plus what only this store has to show: that its
tokenizer and BM25 agree with SQLite's FTS5, and that its transactions hold under threads."""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator

import apsw
import attrs
import pytest

from venom_mem_core.errors import VenomError
from venom_mem_core.grants import Access
from venom_mem_core.inmemory import InMemoryStore, porter_stem, tokenize
from venom_mem_core.ports import MemoryFilter
from venom_mem_core.ranking import fts_match_expression
from venom_mem_core.testing import Env, StoreContract, StoreFactory, opened_stores
from venom_mem_core.testing.store_contract import draft
from venom_mem_core.text_search import search_text

FTS_TABLE = (
    "CREATE VIRTUAL TABLE t USING fts5(title, content, tags,"
    " tokenize = 'porter unicode61 remove_diacritics 2')"
)


class TestInMemoryStore(StoreContract):
    @pytest.fixture
    def store_factory(self) -> Iterator[StoreFactory]:
        with opened_stores(InMemoryStore) as factory:
            yield factory

    def test_describe(self, store: InMemoryStore) -> None:
        assert store.describe() == {
            "path": ":memory:",
            "schema_version": 2,
            "sqlite_version": "none",
            "bytes": 0,
        }
        store.erase_traces()

    def test_closed_store_refuses(self) -> None:
        store = InMemoryStore()
        store.close()
        with pytest.raises(VenomError) as caught, store.read():
            pass
        assert caught.value.code == "failed.internal"

    def test_transaction_is_dead_after_its_block(self, store: InMemoryStore) -> None:
        with store.write() as tx:
            tx.insert_memory(draft("text"))
        with pytest.raises(VenomError):
            tx.insert_memory(draft("after the block"))
        with store.read() as reader:
            assert reader.counts().memories == 1

    def test_write_is_not_reentrant(self, store: InMemoryStore) -> None:
        with store.write(), pytest.raises(VenomError) as caught, store.write():
            pass
        assert caught.value.code == "failed.internal"

    def test_reads_do_not_wait_for_a_write(self, store: InMemoryStore) -> None:
        inside, release = threading.Event(), threading.Event()

        def writer() -> None:
            with store.write() as tx:
                tx.insert_memory(draft("slow write"))
                inside.set()
                release.wait(5)

        thread = threading.Thread(target=writer)
        thread.start()
        try:
            assert inside.wait(5)
            with store.read() as reader:
                assert reader.counts().memories == 0
        finally:
            release.set()
            thread.join(5)
        with store.read() as reader:
            assert reader.counts().memories == 1

    def test_racing_adds_and_updates(self, store: InMemoryStore) -> None:
        """MEM-04 at the store: one add wins, one update from a revision wins."""
        env = Env.on(store)
        results: list[dict[str, object]] = []

        def add() -> None:
            results.append(env.g1.call("memory.add", {"space": "user", "content": "race"}))

        threads = [threading.Thread(target=add) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(results) == 8
        assert sorted(r["changed"] is True for r in results) == [False] * 7 + [True]
        assert {r["id"] for r in results} == {"m1"}

        errors: list[str] = []

        def update(n: int) -> None:
            try:
                env.g1.call("memory.update", {"id": "m1", "revision": 1, "title": f"t{n}"})
            except VenomError as error:
                errors.append(error.code)

        threads = [threading.Thread(target=update, args=(n,)) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == ["conflict.memory_revision"] * 7


# -- agreement with SQLite's FTS5 ----------------------------------------------------------


@pytest.fixture
def fts5() -> Iterator[apsw.Connection]:
    connection = apsw.Connection(":memory:")
    connection.execute(FTS_TABLE)
    yield connection
    connection.close()


def _fts5_terms(connection: apsw.Connection, text: str) -> list[str]:
    tokenizer = connection.fts5_tokenizer("porter", ["unicode61", "remove_diacritics", "2"])
    terms = tokenizer(
        text.encode(),
        apsw.FTS5_TOKENIZE_DOCUMENT,
        None,
        include_offsets=False,
        include_colocated=False,
    )
    return [str(term) for term in terms]


@pytest.mark.parametrize(
    "text",
    [
        "caresses ponies ties caress cats feed agreed plastered bled motoring sing",
        "conflated troubled sized hopping tanned falling hissing fizzed failing filing",
        "happy sky relational conditional rational valenci hesitanci digitizer",
        "conformabli radicalli differentli vileli analogousli vietnamization predication",
        "operator feudalism decisiveness hopefulness callousness formaliti sensitiviti",
        "sensibiliti triplicate formative formalize electriciti electrical hopeful goodness",
        "revival allowance inference airliner gyroscopic adjustable defensible irritant",
        "replacement adjustment dependent adoption homologou communism activate angulariti",
        "homologous effective bowdlerize probate rate cease controll roll generalization",
        "ies sses ating dying lying tying eed ied yyy sayed played archaeology",
        "Héllo wörld e\u0301te\u0301 naïveté Straße STRASSE ﬁsh x²y İstanbul ǅ Ω ø",
        'a_b $x +y ^z a-b x:y "q" NEAR( 你好世界 한국어 ẞ ϖ ẛ',
        "venom-std pins Zig with .zigversion; check it before upgrading.",
    ],
)
def test_tokenizer_matches_fts5(fts5: apsw.Connection, text: str) -> None:
    assert tokenize(text) == _fts5_terms(fts5, text)


def test_porter_passes_short_and_long_tokens_through() -> None:
    assert porter_stem("is") == "is"
    assert porter_stem("ies") == "ie"
    long_word = "running" * 10
    assert porter_stem(long_word) == long_word


def test_bm25_order_matches_fts5(fts5: apsw.Connection) -> None:
    """Random corpora and queries: the same order as bm25(t, 5, 1, 3), rowid DESC."""
    vocab = [
        "zig",
        "build",
        "running",
        "runs",
        "runner",
        "tests",
        "testing",
        "proto",
        "memory",
        "memories",
        "store",
        "café",
        "Cafe",
        "naïve",
        "x:y",
        "venom-std",
        "alpha",
        "beta",
        "gamma",
        "delta",
    ]
    rng = random.Random(20261109)
    for _ in range(60):
        fts5.execute("DELETE FROM t")
        store = InMemoryStore()
        with store.write() as tx:
            for n in range(rng.randint(1, 12)):
                title = " ".join(rng.choice(vocab) for _ in range(rng.randint(0, 3)))
                content = " ".join(rng.choice(vocab) for _ in range(rng.randint(1, 30)))
                tags = sorted(
                    {rng.choice(["zig", "build", "test"]) for _ in range(rng.randint(0, 2))}
                )
                row = attrs.evolve(draft(f"{n} {content}"), title=title, tags=tuple(tags))
                id_ = tx.insert_memory(row)
                fts5.execute(
                    "INSERT INTO t (rowid, title, content, tags) VALUES (?, ?, ?, ?)",
                    (id_, title, row.content, " ".join(tags)),
                )
        query = [rng.choice([*vocab, '"', "*", "NEAR("]) for _ in range(rng.randint(1, 3))]
        expected = [
            row[0]
            for row in fts5.execute(
                "SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t, 5.0, 1.0, 3.0), rowid DESC",
                (fts_match_expression(query),),
            )
        ]
        with store.read() as reader:
            found = search_text(reader, query, MemoryFilter(access=Access(everything=True)), 100)
        assert [match.memory.id for match in found] == expected, query


def test_snippet_matches_fts5(fts5: apsw.Connection) -> None:
    words = [f"w{n}" for n in range(200)]
    contents = [
        " ".join(words[:100]) + " zebra " + " ".join(words[100:]),
        " ".join(words[:190]) + " zebra " + " ".join(words[190:]),
        "zebra " + " ".join(words),
        "Short text, zebra here.",
    ]
    store = InMemoryStore()
    with store.write() as tx:
        for content in contents:
            id_ = tx.insert_memory(draft(content))
            fts5.execute(
                "INSERT INTO t (rowid, title, content, tags) VALUES (?, '', ?, '')", (id_, content)
            )
        title_only = attrs.evolve(draft(" ".join(words)), title="zebra")
        id_ = tx.insert_memory(title_only)
        fts5.execute(
            "INSERT INTO t (rowid, title, content, tags) VALUES (?, 'zebra', ?, '')",
            (id_, title_only.content),
        )
    expected = dict(
        fts5.execute("SELECT rowid, snippet(t, 1, '', '', '…', 64) FROM t WHERE t MATCH 'zebra'")
    )
    with store.read() as reader:
        found = search_text(reader, ["zebra"], MemoryFilter(access=Access(everything=True)), 10)
    assert {match.memory.id: match.snippet for match in found} == expected
