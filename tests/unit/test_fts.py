"""venom_mem_core.fts against SQLite's own FTS5 (apsw): the same terms, the same BM25 scores
to the last bit, the same order and the same snippets, on the table the store declares."""

from __future__ import annotations

import random
from collections.abc import Iterator

import apsw
import pytest

from venom_mem_adapters.sqlite import bm25
from venom_mem_adapters.sqlite.match import fts_match_expression
from venom_mem_adapters.sqlite.schema import SCHEMA_V1
from venom_mem_core import fts

FTS_TABLE = (
    f"CREATE VIRTUAL TABLE t USING fts5(title, content, tags, tokenize = '{fts.FTS5_TOKENIZE}')"
)
VOCABULARY = [
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


def test_the_store_schema_and_the_adapter_use_these_semantics() -> None:
    assert f"tokenize = '{fts.FTS5_TOKENIZE}'" in "\n".join(SCHEMA_V1)
    assert (bm25.K1, bm25.B, bm25.WEIGHTS) == (fts.K1, fts.B, fts.WEIGHTS)


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
    assert fts.tokenize(text) == _fts5_terms(fts5, text)
    assert all(text[t.start : t.end] for t in fts.tokens(text))


def test_porter_passes_short_and_long_tokens_through() -> None:
    assert fts.porter_stem("is") == "is"
    assert fts.porter_stem("ies") == "ie"
    long_word = "running" * 10
    assert fts.porter_stem(long_word) == long_word


def test_query_phrases() -> None:
    assert fts.query_phrases(["Running", "x:y", "*", "Cafés"]) == [
        ("run",),
        ("x", "y"),
        (),
        ("cafe",),
    ]


def test_bm25_scores_are_fts5s_to_the_last_bit(fts5: apsw.Connection) -> None:
    """Random corpora and queries: bm25(t, 5, 1, 3) negated, exactly, and its order."""
    rng = random.Random(20261109)
    for _ in range(60):
        fts5.execute("DELETE FROM t")
        corpus: dict[int, fts.Document] = {}
        for id_ in range(1, rng.randint(1, 12) + 1):
            title = " ".join(rng.choice(VOCABULARY) for _ in range(rng.randint(0, 3)))
            content = f"{id_} " + " ".join(
                rng.choice(VOCABULARY) for _ in range(rng.randint(1, 30))
            )
            tags = sorted({rng.choice(["zig", "build", "test"]) for _ in range(rng.randint(0, 2))})
            corpus[id_] = fts.Document.of(title, content, tags)
            fts5.execute(
                "INSERT INTO t (rowid, title, content, tags) VALUES (?, ?, ?, ?)",
                (id_, title, content, " ".join(tags)),
            )
        query = [rng.choice([*VOCABULARY, '"', "*", "NEAR("]) for _ in range(rng.randint(1, 3))]
        expected = [
            (rowid, -score)
            for rowid, score in fts5.execute(
                "SELECT rowid, bm25(t, 5.0, 1.0, 3.0) AS s FROM t WHERE t MATCH ?"
                " ORDER BY s, rowid DESC",
                (fts_match_expression(query),),
            )
        ]
        scores = fts.bm25_scores(corpus, fts.query_phrases(query))
        got = sorted(scores.items(), key=lambda item: (-item[1], -item[0]))
        assert got == expected, query


def test_bm25_of_one_row_is_the_sum_of_its_terms() -> None:
    stats = fts.CorpusStats(rows=10, tokens=70, hits=(2, 10))
    idfs = stats.idf()
    assert idfs[1] == fts.IDF_FLOOR  # a phrase in every row: ln(0.5 / 10.5) < 0
    score = fts.bm25(idfs, [5.0, 1.0], 9, stats.avgdl)
    assert score == fts.bm25_term(idfs[0], 5.0, 9, 7.0) + fts.bm25_term(idfs[1], 1.0, 9, 7.0)
    assert fts.bm25(idfs, [0.0, 0.0], 9, stats.avgdl) == 0.0


def test_snippet_matches_fts5(fts5: apsw.Connection) -> None:
    words = [f"w{n}" for n in range(200)]
    rows = {
        1: ("", " ".join(words[:100]) + " zebra " + " ".join(words[100:])),
        2: ("", " ".join(words[:190]) + " zebra " + " ".join(words[190:])),
        3: ("", "zebra " + " ".join(words)),
        4: ("", "Short text, zebra here."),
        5: ("zebra", " ".join(words)),
    }
    for rowid, (title, content) in rows.items():
        fts5.execute(
            "INSERT INTO t (rowid, title, content, tags) VALUES (?, ?, ?, '')",
            (rowid, title, content),
        )
    expected = dict(
        fts5.execute("SELECT rowid, snippet(t, 1, '', '', '…', 64) FROM t WHERE t MATCH 'zebra'")
    )
    phrases = fts.query_phrases(["zebra"])
    got = {
        rowid: fts.snippet(content, fts.Document.of(title, content, ()), phrases)
        for rowid, (title, content) in rows.items()
    }
    assert got == expected


def test_content_without_tokens_snippets_its_start() -> None:
    content = "—" * 200
    doc = fts.Document.of("zebra", content, ())
    assert doc.matches(fts.query_phrases(["zebra"]))
    assert fts.snippet(content, doc, fts.query_phrases(["zebra"])) == "—" * 80
