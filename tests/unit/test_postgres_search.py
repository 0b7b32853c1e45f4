"""Search on PostgreSQL gives SQLite's answers (docs/adr/0028): the same corpus written to
both stores through the use cases, then every query ranked on both, for a caller who reads
everything, one restricted to some spaces, and with narrowing filters. IDs, order and BM25
scores must agree (scores to 1e-9 relative: both follow fts5_aux.c's operations, but
SQLite's FTS5 runs them in C on its own row-length records)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.postgres_server import PostgresServer, postgres_server
from venom_mem_core.grants import Access
from venom_mem_core.ports import MemoryFilter, Store
from venom_mem_core.testing.support import Env

__all__ = ["postgres_server"]  # the fixture, imported for pytest

WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "running",
    "runner",
    "runs",
    "café",
    "cafe",
    "naïve",
    "über",
    "deploy",
    "deployment",
    "deploying",
    "staging",
    "prod",
    "database",
    "migrations",
    "schema",
    "index",
    "token",
    "tokens",
    "grant",
    "grants",
    "search",
    "searching",
    "searched",
    "vector",
    "vectors",
]
QUERIES = [
    ["alpha"],
    ["running"],
    ["cafe"],
    ["deploy", "staging"],
    ["search", "vector", "token"],
    ["naive", "uber"],
    ["alpha-beta"],  # a phrase of two terms
    ["gamma", "gamma"],
    ["schema", "index", "database", "grants"],
    ["nothing-matches-this"],
]


@pytest.fixture
def stores(postgres_server: PostgresServer, tmp_path: Path) -> Iterator[tuple[Store, Store]]:
    from venom_mem_adapters.postgres import PostgresStore
    from venom_mem_adapters.sqlite import SqliteStore

    sqlite = SqliteStore.open(tmp_path / "store.db")
    postgres = PostgresStore.open(postgres_server.fresh_url())
    try:
        yield sqlite, postgres
    finally:
        sqlite.close()
        postgres.close()


def _fill(env: Env, seed: int) -> None:
    rng = random.Random(seed)
    for n in range(300):
        words = rng.choices(WORDS, k=rng.randint(1, 40))
        title = " ".join(rng.choices(WORDS, k=rng.randint(0, 3)))
        tags = sorted({rng.choice(["ops", "db", "ui", "api"]) for _ in range(rng.randint(0, 2))})
        space = rng.choice(["team", "user", "ops", "priv"])
        if rng.random() < 0.3:  # a phrase a query looks for
            words.insert(rng.randrange(len(words) + 1), "alpha beta")
        env.owner.call(
            "memory.add",
            {"space": space, "content": f"{n} " + " ".join(words), "title": title, "tags": tags},
        )
    for n in range(1, 301, 7):  # tombstones leave the corpus
        env.owner.call("memory.delete", {"id": f"m{n}", "revision": 1})
    for n in range(3, 301, 11):  # updates change the postings
        if (n - 1) % 7 == 0:
            continue  # deleted above
        env.owner.call(
            "memory.update", {"id": f"m{n}", "revision": 1, "content": f"updated {n} alpha cafe"}
        )


def test_rankings_and_scores_match_sqlite(stores: tuple[Store, Store]) -> None:
    envs = [Env.on(store) for store in stores]
    for env in envs:
        _fill(env, seed=19)
    filters = [
        MemoryFilter(access=Access(everything=True)),
        MemoryFilter(access=Access(spaces=frozenset({"team", "ops"}))),
        MemoryFilter(access=Access(spaces=frozenset({"user"}), ids=frozenset({5, 9, 40}))),
        MemoryFilter(access=Access(everything=True), tags=frozenset({"db"})),
        MemoryFilter(access=Access(spaces=frozenset({"team", "ops"})), kinds=frozenset({"fact"})),
        MemoryFilter(access=Access(spaces=frozenset({"team", "user"})), spaces=frozenset({"user"})),
    ]
    compared = 0
    for where in filters:
        for tokens in QUERIES:
            answers = []
            for env in envs:
                with env.app.store.read() as tx:
                    answers.append(tx.rank_text_scored(tokens, where, 50))
            lite, pg = answers
            assert [i for i, _ in pg] == [i for i, _ in lite], (tokens, where)
            for (_, a), (_, b) in zip(lite, pg, strict=True):
                assert b == pytest.approx(a, rel=1e-9), (tokens, where)
            compared += len(lite)
    assert compared > 500  # the corpus matched, the comparison was not vacuous


def test_search_verb_answers_match_sqlite(stores: tuple[Store, Store]) -> None:
    envs = [Env.on(store) for store in stores]
    for env in envs:
        _fill(env, seed=7)
    for query in ("alpha", "deploy staging", "café naïve", "vectors tokens grants"):
        lite, pg = (env.owner.call("memory.search", {"query": query}) for env in envs)
        assert [h["id"] for h in pg["results"]] == [h["id"] for h in lite["results"]], query
        assert [h["fts_rank"] for h in pg["results"]] == [h["fts_rank"] for h in lite["results"]], (
            query
        )


def test_section_5_fixture_with_embeddings_off(stores: tuple[Store, Store]) -> None:
    """RFC-0020 section 5: with embeddings off the fixture returns m2, then m1, in mode fts,
    identically (ranks, scores, snippets) on both stores."""
    from tests.integration.test_hybrid_search import M1, M2, M3, QUERY

    answers = []
    for store in stores:
        env = Env.on(store)
        for memory in (M1, M2, M3):
            env.owner.call("memory.add", dict(memory))
        answers.append(env.owner.call("memory.search", {"query": QUERY}))
    lite, pg = answers
    assert pg["mode"] == "fts"
    assert [(h["id"], h["fts_rank"]) for h in pg["results"]] == [("m2", 1), ("m1", 2)]
    assert [h["snippet"] for h in pg["results"]] == [h["snippet"] for h in lite["results"]]
    assert [h["score"] for h in pg["results"]] == [h["score"] for h in lite["results"]]
    assert {k: v for k, v in pg.items() if k != "results"} == {
        k: v for k, v in lite.items() if k != "results"
    }
