"""A restricted caller's bm25 from the index read in bulk (fts_index.py, docs/adr/0016).

The property kept: a restricted search returns the rows, order and scores (``==``) that
FTS5's built-in bm25 gives on a store holding only the caller's readable rows, whatever the
query (RFC and natural terms, phrases of several terms, repeats, stems, diacritics, FTS5
syntax as text), the filter (kinds, importances) and the store's history (deletes, updates).
Then the parts: row lengths and phrase frequencies equal what FTS5's extension API reports,
and the per-commit cache of the readable corpus follows every commit, the connection's own
included.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from pathlib import Path

import apsw
import attrs
import pytest

from tests.support.records import draft_memory
from venom_mem_adapters.sqlite import SqliteStore, bm25, fts_index, open_connection
from venom_mem_adapters.sqlite.filters import FILTERS, Predicate
from venom_mem_adapters.sqlite.match import fts_match_expression
from venom_mem_adapters.sqlite.schema import SCHEMA_V1
from venom_mem_core.grants import Access
from venom_mem_core.ports import MemoryFilter
from venom_mem_core.ranking import search_terms
from venom_mem_core.records import Memory, Provenance
from venom_mem_core.search_options import COLUMN_WEIGHTS, NATURAL_WEIGHTS, RFC_WEIGHTS, Weights

TS = "2026-11-09T10:00:00.000Z"
EVERYTHING = MemoryFilter(access=Access(everything=True))
GUEST = Provenance(principal="g1", label="guest")
# Stems, folds, punctuation inside words (phrases of several terms in the RFC mode), repeats.
WORDS = [
    "alpha", "beta", "gamma", "delta", "running", "runs", "ran", "Caroline's", "caroline",
    "s", "école", "ECOLE", "x-y", "alpha-alpha", "a.b.c", "did", "when", "the", "speech",
]  # fmt: skip
QUERY_EXTRAS = ["--", '"', '""', "Caroline's speech", "alpha alpha", "n1", "x-y-x", "zzz"]


def scored(
    s: SqliteStore, tokens: Sequence[str], where: MemoryFilter, weights: Weights = RFC_WEIGHTS
) -> list[tuple[str, float]]:
    with s.read() as tx:
        ranked = tx.rank_text_scored(tokens, where, 100, weights)
        memories = [tx.get_memory(id_) for id_, _ in ranked]
    return [(m.content, score) for m, (_, score) in zip(memories, ranked, strict=True) if m]


def random_memory(rng: random.Random, n: int) -> Memory:
    memory = draft_memory(
        " ".join(rng.choices(WORDS, k=rng.randint(1, 25))) + f" n{n}",
        space=rng.choice(["mine", "mine", "secret", "other"]),
        kind=rng.choice(["note", "fact"]),
        title=" ".join(rng.choices(WORDS, k=rng.randint(0, 3))),
        tags=tuple(sorted(set(rng.choices(["alpha", "beta", "speech", "x"], k=rng.randint(0, 2))))),
        author=GUEST if n % 11 == 0 else draft_memory("").author,
    )
    return attrs.evolve(memory, importance=rng.choice(["normal", "normal", "critical"]))


@attrs.frozen
class Pair:
    """A store with hidden rows and history, and one built from its readable live rows alone."""

    mixed: SqliteStore
    alone: SqliteStore
    access: Access


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    rng = random.Random(15)
    directory = tmp_path_factory.mktemp("pair")
    directory.chmod(0o700)
    mixed = SqliteStore.open(directory / "mixed" / "store.db")
    with mixed.write() as tx:
        ids = [tx.insert_memory(random_memory(rng, n)) for n in range(400)]
    with mixed.write() as tx:  # history: deletes and rewrites, readable and hidden alike
        gone = set(rng.sample(ids, 60))
        for id_ in sorted(gone):
            old = tx.get_memory(id_)
            assert old is not None
            tx.replace_memory(attrs.evolve(old, deleted=TS))
        for id_ in rng.sample(sorted(set(ids) - gone), 60):
            old = tx.get_memory(id_)
            assert old is not None
            content = old.content + " " + " ".join(rng.choices(WORDS, k=5))
            tx.replace_memory(attrs.evolve(old, content=content, revision=old.revision + 1))
    access = Access(spaces=frozenset({"mine"}), ids=frozenset(rng.sample(ids, 15)), owner="g1")
    with mixed.read() as tx:
        readable = tx.list_memories(MemoryFilter(access=access), None, 1000)
    assert 150 < len(readable) < 300
    alone = SqliteStore.open(directory / "alone" / "store.db")
    with alone.write() as tx:
        for m in sorted(readable, key=lambda m: m.id):  # same order of IDs: same ties
            tx.insert_memory(attrs.evolve(m, id=0))
    yield Pair(mixed, alone, access)
    mixed.close()
    alone.close()


def queries(rng: random.Random, count: int) -> Iterator[str]:
    for _ in range(count):
        words = rng.sample(WORDS + QUERY_EXTRAS, rng.randint(1, 5))
        yield " ".join(words + rng.choice([[], words[:1]]))


@pytest.mark.parametrize("query_mode", ["rfc", "natural"])
def test_restricted_scores_are_the_builtin_bm25_on_the_readable_rows(
    pair: Pair, query_mode: str
) -> None:
    rng = random.Random(query_mode)
    compared = 0
    weights = COLUMN_WEIGHTS[query_mode]  # the owner's are the built-in bm25's
    for query in queries(rng, 60):
        tokens = search_terms(query, query_mode)
        got = scored(pair.mixed, tokens, MemoryFilter(access=pair.access), weights)
        assert got == scored(pair.alone, tokens, EVERYTHING, weights), query
        compared += len(got)
    assert compared > 2000


@pytest.mark.parametrize(
    "narrowing",
    [
        MemoryFilter(access=Access(), kinds=frozenset({"fact"})),
        MemoryFilter(access=Access(), importances=frozenset({"critical"})),
        MemoryFilter(access=Access(), spaces=frozenset({"mine"}), tags=frozenset({"speech"})),
    ],
    ids=["kinds", "importances", "spaces and tags"],
)
def test_a_filter_narrows_hits_and_keeps_the_readable_statistics(
    pair: Pair, narrowing: MemoryFilter
) -> None:
    rng = random.Random(18)
    compared = 0
    for query in queries(rng, 25):
        tokens = search_terms(query, "rfc")
        got = scored(pair.mixed, tokens, attrs.evolve(narrowing, access=pair.access))
        assert got == scored(pair.alone, tokens, attrs.evolve(narrowing, access=EVERYTHING.access))
        compared += len(got)
    assert compared > 100


def test_the_built_in_would_have_ranked_differently(pair: Pair) -> None:
    """The corpus is a real trap: whole-index statistics change the readable rows' scores."""
    tokens = ["alpha", "speech"]
    with pair.mixed.read() as tx:
        ours = tx.rank_text_scored(tokens, MemoryFilter(access=pair.access), 100)
        whole = dict(tx.rank_text_scored(tokens, EVERYTHING, 1000))
    assert [score for _, score in ours] != [whole[id_] for id_, _ in ours]


def test_an_importance_filter_is_applied_before_the_limit(tmp_path: Path) -> None:
    """A restricted search used to ignore importances in the store (the use case dropped the
    rows afterwards, so fewer than ``limit`` came back)."""
    s = SqliteStore.open(tmp_path / "s" / "store.db")
    try:
        with s.write() as tx:
            for n in range(6):
                tx.insert_memory(draft_memory(f"deploy deploy deploy {n}", space="mine"))
            for n in range(3):
                critical = draft_memory(f"deploy once, and more words {n}", space="mine")
                tx.insert_memory(attrs.evolve(critical, importance="critical"))
        where = MemoryFilter(
            access=Access(spaces=frozenset({"mine"})), importances=frozenset({"critical"})
        )
        with s.read() as tx:
            assert tx.rank_text(["deploy"], where, 2) == [9, 8]
    finally:
        s.close()


@pytest.mark.parametrize(
    "access",
    [
        Access(spaces=frozenset({"nobody"})),
        Access(ids=frozenset({10**9})),
        Access(owner="nobody"),
    ],
    ids=["empty space", "missing id", "own rows, none"],
)
def test_an_empty_readable_set_finds_nothing(pair: Pair, access: Access) -> None:
    assert scored(pair.mixed, ["alpha", "beta"], MemoryFilter(access=access)) == []


def test_a_readable_set_with_no_match_finds_nothing(pair: Pair) -> None:
    where = MemoryFilter(access=pair.access)
    with pair.mixed.read() as tx:
        hidden = next(m for m in tx.list_memories(EVERYTHING, None, 1000) if m.space == "secret")
        assert scored(pair.mixed, [f"n{hidden.id - 1}"], EVERYTHING)  # the owner finds it
    assert scored(pair.mixed, ["zzz", "nothing"], where) == []
    assert scored(pair.mixed, [f"n{hidden.id - 1}"], where) == []
    deleted = MemoryFilter(access=Access(ids=frozenset({1, 2, 3, 4, 5})))
    with pair.mixed.read() as tx:
        live = {id_ for id_ in range(1, 6) if (m := tx.get_memory(id_)) and m.deleted is None}
        found = tx.rank_text_scored(["alpha", "n0", "n1", "n2", "n3", "n4"], deleted, 9)
    assert {id_ for id_, _ in found} == live


# -- over a corpus read whole: the built-in's own numbers ------------------------------------


@pytest.fixture(scope="module")
def whole(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SqliteStore]:
    rng = random.Random(16)
    directory = tmp_path_factory.mktemp("whole")
    directory.chmod(0o700)
    s = SqliteStore.open(directory / "store.db")
    with s.write() as tx:
        ids = [tx.insert_memory(random_memory(rng, n)) for n in range(300)]
        long_rows = [
            " ".join(rng.choices(WORDS, k=200)),  # a two-byte varint in docsize
            " ".join(rng.choices(WORDS, k=20_000)),  # three bytes
        ]
        for content in long_rows:
            ids.append(tx.insert_memory(draft_memory(content, title="alpha " * 130)))
    with s.write() as tx:
        for id_ in ids[:300:7]:
            old = tx.get_memory(id_)
            assert old is not None
            tx.replace_memory(attrs.evolve(old, deleted=TS))
    yield s
    s.close()


@pytest.mark.parametrize("weights", [RFC_WEIGHTS, NATURAL_WEIGHTS])
def test_readable_ranking_over_everything_is_the_builtin_bm25(
    whole: SqliteStore, weights: Weights
) -> None:
    """With every live row readable the statistics are the index's own, so rank_readable
    must give the built-in's rows, order and scores exactly."""
    rng = random.Random(17)
    with whole.read() as tx:
        connection = tx.connection
        for query in queries(rng, 80):
            tokens = search_terms(query, "rfc")
            builtin = connection.execute(
                "SELECT rowid, -bm25(memory_fts, ?, ?, ?) AS s FROM memory_fts"
                " WHERE memory_fts MATCH ? ORDER BY -s, rowid DESC LIMIT 50",
                (*weights, fts_match_expression(tokens)),
            ).fetchall()
            ours = bm25.rank_readable(connection, tokens, Predicate("1"), 50, weights=weights)
            assert ours == [(int(str(r)), float(str(s))) for r, s in builtin], query


def test_row_lengths_are_fts5s_own(whole: SqliteStore) -> None:
    with whole.read() as tx:
        connection = tx.connection
        connection.register_fts5_function("t_length", lambda api, *_: api.column_size(-1))
        # Only live rows: FTS5 reports corruption for the length of a row it doesn't index.
        expected = connection.execute(
            "SELECT memory_fts.rowid, t_length(memory_fts) FROM memory_fts"
            " JOIN memories AS m ON m.id = memory_fts.rowid WHERE m.deleted IS NULL"
            " ORDER BY memory_fts.rowid"
        ).fetchall()
        corpus = fts_index.readable_corpus(connection, Predicate("1"))
    assert corpus.ids.tolist() == [int(str(r)) for r, _ in expected]
    assert corpus.lengths.tolist() == [int(str(n)) for _, n in expected]
    assert max(corpus.lengths) > 20_000


@pytest.mark.parametrize("packing", ["packed", "wide"])
@pytest.mark.parametrize(
    "phrase", [*WORDS, *QUERY_EXTRAS, "alpha alpha alpha", "Alpha-ALPHA-alpha", "s s"]
)
def test_phrase_frequencies_are_what_the_extension_api_reports(
    whole: SqliteStore, phrase: str, packing: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if packing == "wide":  # as if rowids and offsets were too large to pack into one integer
        monkeypatch.setattr(fts_index, "_PACKED_ROWIDS", 0)
        monkeypatch.setattr(fts_index, "_KEY_ROWIDS", 0)
    with whole.read() as tx:
        read = fts_index.phrase_postings(tx.connection, phrase, bm25.WEIGHTS)
        by_api = bm25.phrase_by_api(tx.connection, phrase)
    assert read is not None
    assert read.rowids.tolist() == by_api.rowids.tolist()
    assert read.freqs.tolist() == by_api.freqs.tolist()


def test_a_token_fts5_cuts_goes_through_the_extension_api(tmp_path: Path) -> None:
    giant = "q" * 40_000
    s = SqliteStore.open(tmp_path / "s" / "store.db")
    try:
        with s.write() as tx:
            tx.insert_memory(draft_memory(f"{giant} alpha", space="mine"))
            tx.insert_memory(draft_memory("alpha beta", space="mine"))
            tx.insert_memory(draft_memory(giant + "tail", space="other"))
        with s.read() as tx:
            assert fts_index.query_terms(tx.connection, giant) is None
        mine = MemoryFilter(access=Access(spaces=frozenset({"mine"})))
        got = [content[:8] for content, _ in scored(s, [giant, "beta"], mine)]
        # FTS5 keeps the first 32768 bytes of a token: the giant matches its longer twin too.
        assert got == ["alpha be", "qqqqqqqq"]
    finally:
        s.close()


@pytest.mark.parametrize(
    "blob", [b"\x80", b"\x01\x02", b"\x01\x02\x03\x04", b"\xff\xff\xff\xff\xff\x01\x00\x00"]
)
def test_a_damaged_size_record_is_refused(blob: bytes) -> None:
    with pytest.raises(apsw.CorruptError):
        fts_index.decode_sizes(blob, 1)


def test_size_records_decode_as_sqlite_varints() -> None:
    assert fts_index.decode_sizes(b"", 0).tolist() == []
    assert fts_index.decode_sizes(b"\x01\x02\x03\x00\x7f\x00", 2).tolist() == [6, 127]
    # 3 + (1 << 7 | 2) + (1 << 14 | 2 << 7 | 3), then 0 + 127 + 0
    blob = b"\x03" + b"\x81\x02" + b"\x81\x82\x03" + b"\x00\x7f\x00"
    assert fts_index.decode_sizes(blob, 2).tolist() == [3 + 130 + 16643, 127]


# -- the cache of the readable corpus ----------------------------------------------------------


def insert(connection: apsw.Connection, content: str, space: str = "mine") -> None:
    connection.execute(
        "INSERT INTO memories (space, kind, content, content_sha256, principal, updated_by,"
        " created, updated) VALUES (?, 'note', ?, randomblob(32), 'owner', 'owner', ?, ?)",
        (space, content, TS, TS),
    )


def test_the_cache_follows_the_connections_own_commits(tmp_path: Path) -> None:
    """The writer reads on its own connection when the store runs on one; PRAGMA data_version
    does not move for a connection's own commits."""
    path = tmp_path / "s" / "store.db"
    SqliteStore.open(path).close()
    connection = open_connection(path, readonly=False)
    try:
        bm25.register(connection)
        readable = FILTERS.access_predicate(Access(spaces=frozenset({"mine"})), alias="m")
        insert(connection, "alpha beta")
        first = bm25.rank_readable(connection, ["alpha"], readable, 10)
        insert(connection, "alpha " + "filler " * 30)
        insert(connection, "hidden alpha", space="secret")
        assert [i for i, _ in bm25.rank_readable(connection, ["alpha"], readable, 10)] == [1, 2]
        connection.execute("BEGIN IMMEDIATE")  # inside a write: its own rows, not cached
        insert(connection, "alpha alpha")
        assert fts_index.readable_corpus(connection, readable).rows == 3
        connection.execute("ROLLBACK")
        assert fts_index.readable_corpus(connection, readable).rows == 2
        connection.execute("BEGIN IMMEDIATE")
        insert(connection, "alpha alpha")
        inside = bm25.rank_readable(connection, ["alpha"], readable, 10)
        assert [i for i, _ in inside] == [4, 1, 2]
        connection.execute("ROLLBACK")
        after = bm25.rank_readable(connection, ["alpha"], readable, 10)
        assert [i for i, _ in after] == [1, 2]
        assert after[0][1] != first[0][1]  # two rows now, so another IDF and avgdl
        fresh = open_connection(path, readonly=True)  # a cache of its own
        try:
            bm25.register(fresh)
            assert bm25.rank_readable(fresh, ["alpha"], readable, 10) == after
        finally:
            fresh.close()
    finally:
        connection.close()


@pytest.mark.parametrize("cached_rows", [1_000_000, 20])
def test_many_readable_sets_each_get_their_own_corpus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cached_rows: int
) -> None:
    """More readable sets than the cache keeps (by count, then by rows)."""
    monkeypatch.setattr(fts_index, "_CACHED_ROWS_PER_CONNECTION", cached_rows)
    s = SqliteStore.open(tmp_path / "s" / "store.db", readers=1)
    try:
        with s.write() as tx:
            for n in range(12):
                for k in range(n + 1):
                    tx.insert_memory(draft_memory(f"alpha {'pad ' * k}{n}", space=f"s{n}"))
        for _ in range(2):
            for n in range(12):
                where = MemoryFilter(access=Access(spaces=frozenset({f"s{n}"})))
                got = scored(s, ["alpha"], where)
                assert len(got) == n + 1
                assert got[0][0] == f"alpha {n}"
                with s.read() as tx:
                    kept = fts_index._CORPORA[tx.connection][1]
                    assert 1 <= len(kept) <= 8
                    assert sum(c.rows for c in kept.values()) <= max(cached_rows, n + 1)
    finally:
        s.close()


def test_the_tokenizer_and_columns_are_memory_ftss_own() -> None:
    """fts_index tokenizes queries and names columns as schema.py creates memory_fts."""
    (create,) = [s for s in SCHEMA_V1 if s.startswith("CREATE VIRTUAL TABLE memory_fts")]
    name, arguments = fts_index.TOKENIZER
    assert f"tokenize = '{' '.join((name, *arguments))}'" in create
    assert "USING fts5 (\n  " + ", ".join(fts_index.COLUMNS) + ",\n" in create
